"""The offers store: loading offers partitions into the normalised tables (warehouse/tables.py)
and rebuilding them whole.

Offers are stored normalised, once: each row of an offers partition is one narrow row of
`offer_points` (date, provider, offer number, price, previous observation, and numbers pointing
at its detail and capture rows); the offer's identity (sku, region, GPU, pricing model, …) is one
row of `offer_ids`, the columns that rarely change (vCPUs, RAM, billing rules, extra) one row of
`offer_details`, and where it was read (capture time, URL, body hash) one row of
`offer_captures`. The view `offers` joins them back into the contract's columns, in the
contract's order and types. A year of nightly history (11.5 million rows) takes 88 MB this way,
against 270 MB with a plain `offers` table beside the history tables (bench/warehouse_scale.py).

Loads are idempotent per (snapshot_date, provider): the pair is deleted and inserted again in one
transaction, so a rerun replaces and a failure half way leaves the warehouse as it was. Each
stored snapshot keeps a fingerprint of its rows (snapshot_dates.rows_hash), so a load first
compares (_known_snapshots): a provider-day already held unchanged is left alone, and an hourly
provider's day file that holds the stored snapshots unchanged plus later ones appends only the
later ones (_append_snapshots: the nightly append's statements, no delete, no scan of history),
when nothing of the provider is stored after that day. Anything else is replaced as above. The same
transaction stores each observation's offer identity and its previous observation, and the
provider-day's cheapest offer per GPU model (see _store_partition), so the history views and
cheapest_daily read a few rows instead of aggregating or windowing over the whole year. Arrow
tables go to DuckDB as relations (no Python loop over rows). Values only ever reach SQL as
parameters.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from gpuprices.warehouse import identity
from gpuprices.warehouse.connection import run, transaction
from gpuprices.warehouse.contract import OFFER_SCHEMA, ContractError, conform_table
from gpuprices.warehouse.tables import CAPTURE, DETAILS, IDENTITY, STORE_TABLES, create_src

_ID_COLS = ", ".join(IDENTITY)
_ID_MATCH = " AND ".join(f"i.{c} IS NOT DISTINCT FROM n.{c}" for c in IDENTITY)
_DETAIL_COLS = ", ".join(DETAILS)
_DETAIL_MATCH = " AND ".join(f"d.{c} IS NOT DISTINCT FROM n.{c}" for c in DETAILS)
_CAPTURE_COLS = ", ".join(CAPTURE)
_CAPTURE_MATCH = " AND ".join(f"c.{c} = n.{c}" for c in ("snapshot_date", "provider")
                              + CAPTURE)

# Two observations of one offer are at different prices when they differ by more than one part in
# a million. Prices of one offer read from different sources differ below that without the
# provider having changed anything: GCP's history export recomputes a2-highgpu-1g's 3-year CUD
# in us-central1 as 1.285708326 where the page prints 1.285708338; 36 of the 69 "changes" of
# week 2026-W41 were such. No provider prices in steps that small.
PRICE_TOLERANCE = 1e-6


def _differs(a: str, b: str) -> str:
    """SQL: prices `a` and `b` (our own expressions) differ by more than PRICE_TOLERANCE."""
    return f"(abs({a} - {b}) > {PRICE_TOLERANCE!r} * greatest(abs({a}), abs({b})))"


# Rows of an offers relation {src} with their identity's variant (built from the extra keys
# that tell two rows of one sku apart, warehouse/identity.py) and the hash of their detail
# columns. {src} is our own relation name, never data.
_STAGE_SELECT = f"""
    SELECT *, {identity.variant_sql("extra")} AS variant,
           hash({_DETAIL_COLS}) AS detail_hash
    FROM {{src}}
"""  # noqa: S608 (identifiers are our constants)
_STAGE_SQL = "CREATE OR REPLACE TEMP TABLE _in AS" + _STAGE_SELECT

# Staged rows carry `seq`, the position of their partition in the load (0 for a one-day load
# or a rebuild): numbers are given in partition order first, so a bulk load of many
# provider-days numbers everything as loading them one by one in that order would.
_ONE_DAY_SRC = "(SELECT *, 0 AS seq FROM _src)"

# New identities get the next offer numbers, in GPU / provider / sku order so that one model's
# offers sit together.
_NEW_IDS_SQL = f"""
    INSERT INTO offer_ids
    SELECT (SELECT coalesce(max(offer_no), 0) FROM offer_ids)
               + row_number() OVER (ORDER BY seq, gpu_model, provider, sku, region,
                                    pricing_model, gpu_count, commitment_months,
                                    effective_from, currency, variant),
           hash({_ID_COLS}), {_ID_COLS}, NULL, NULL, NULL
    FROM (SELECT {_ID_COLS}, min(seq) AS seq FROM _in GROUP BY ALL) AS n
    WHERE NOT EXISTS (SELECT 1 FROM offer_ids AS i WHERE {_ID_MATCH})
"""  # noqa: S608 (identifiers are our constants)

_NEW_DETAILS_SQL = f"""
    INSERT INTO offer_details
    SELECT (SELECT coalesce(max(detail_no), 0) FROM offer_details)
               + row_number() OVER (ORDER BY seq, detail_hash, {_DETAIL_COLS}),
           detail_hash, {_DETAIL_COLS}
    FROM (SELECT detail_hash, {_DETAIL_COLS}, min(seq) AS seq FROM _in GROUP BY ALL) AS n
    WHERE NOT EXISTS (SELECT 1 FROM offer_details AS d
                      WHERE d.detail_hash = n.detail_hash AND {_DETAIL_MATCH})
"""  # noqa: S608 (identifiers are our constants)

# A capture already stored (an appended snapshot read from a capture of an earlier one) is
# not stored twice.
_NEW_CAPTURES_SQL = f"""
    INSERT INTO offer_captures
    SELECT (SELECT coalesce(max(capture_no), 0) FROM offer_captures)
               + row_number() OVER (ORDER BY seq, snapshot_date, provider, {_CAPTURE_COLS}),
           snapshot_date, provider, {_CAPTURE_COLS}
    FROM (SELECT DISTINCT seq, snapshot_date, provider, {_CAPTURE_COLS} FROM _in) AS n
    WHERE NOT EXISTS (SELECT 1 FROM offer_captures AS c WHERE {_CAPTURE_MATCH})
"""  # noqa: S608 (identifiers are our constants)

# Each staged row with its numbers; dup_no counts repeats of one (offer, snapshot, price).
_ROWS_SELECT = f"""
    SELECT n.snapshot_date, n.provider, n.gpu_model, i.offer_no, n.price_per_hour,
           d.detail_no, c.capture_no, n.available, n.snapshot_at,
           row_number() OVER (
               PARTITION BY i.offer_no, n.snapshot_date, n.snapshot_at, n.price_per_hour
               ORDER BY d.detail_no, c.capture_no, n.available) - 1 AS dup_no
    FROM _in AS n
    JOIN offer_ids AS i ON {_ID_MATCH}
    JOIN offer_details AS d ON d.detail_hash = n.detail_hash AND {_DETAIL_MATCH}
    JOIN offer_captures AS c ON {_CAPTURE_MATCH}
"""  # noqa: S608 (identifiers are our constants)

_ROWS_SQL = "CREATE OR REPLACE TEMP TABLE _rows AS" + _ROWS_SELECT

# The staged rows numbered: new identities, details and captures first, then _rows.
_NEW_NUMBERS_SQL = (_NEW_IDS_SQL, _NEW_DETAILS_SQL, _NEW_CAPTURES_SQL)
_NUMBER_SQL = (*_NEW_NUMBERS_SQL, _ROWS_SQL)

# A snapshot's fingerprint: its row count and the sum of its rows' hashes over every contract
# column (order-free; a repeated row counts twice). Stored in snapshot_dates.rows_hash by every
# load, from the rows as loaded, so that the next load of the same day file can tell which
# snapshots it already holds unchanged. {src}: our own relation name.
_ROW_HASH = "hash(" + ", ".join(OFFER_SCHEMA.names) + ")"
_SNAPSHOTS_SQL = f"""
    INSERT INTO snapshot_dates (provider, snapshot_date, snapshot_at, rows_hash)
    SELECT provider, snapshot_date, snapshot_at, hash(count(*), sum({_ROW_HASH}::HUGEINT))
    FROM {{src}} GROUP BY provider, snapshot_date, snapshot_at
"""  # noqa: S608 (identifiers are our constants)

_SRC_SNAPSHOTS_SQL = f"""
    SELECT provider, snapshot_date, snapshot_at, hash(count(*), sum({_ROW_HASH}::HUGEINT))
    FROM {{src}} GROUP BY ALL
"""  # noqa: S608 (identifiers are our constants)

# The per provider-day minima of firm prices among the rows of {rows} (_rows: one day of one
# provider, or everything; offer_points: recomputing the whole table). Firm is the one
# definition in sql/staging/price_caveat.sql: a placeholder or a "from" floor never becomes a
# day's lowest, so no trend, spread or cheapest figure built on these minima takes one.
# Announced prices not in force yet are left out too. A day of several snapshots (an hourly
# provider) counts its latest: what the provider charged at the end of the day.
_CHEAPEST_SQL = """
    INSERT INTO provider_day_cheapest
    SELECT snapshot_date, provider, gpu_model, pricing_model, currency, min_price, n_offers,
           best.offer_no, best.price_per_hour, best.available
    FROM (
        SELECT r.snapshot_date, r.provider, r.gpu_model, i.pricing_model, i.currency,
               min(r.price_per_hour / i.gpu_count) AS min_price,
               count(*) AS n_offers,
               arg_min({{'offer_no': r.offer_no, 'price_per_hour': r.price_per_hour,
                        'available': r.available}},
                       {{'price': r.price_per_hour / i.gpu_count, 'sku': i.sku,
                        'region': coalesce(i.region, ''), 'offer_no': r.offer_no}}) AS best
        FROM (SELECT * FROM {rows}
              QUALIFY snapshot_at = max(snapshot_at) OVER (PARTITION BY snapshot_date, provider)
             ) AS r
        JOIN offer_ids AS i ON i.offer_no = r.offer_no
        JOIN offer_details AS d ON d.detail_no = r.detail_no
        WHERE (i.effective_from IS NULL OR i.effective_from <= r.snapshot_date)
          AND price_caveat(d.extra) IS NULL
        GROUP BY ALL
    )
"""

# _base for one provider-day load: the latest point before $d of each affected offer, read
# from offer_points (a reload or a load in the middle of history) ...
_BASE_SCAN_SQL = """
    CREATE OR REPLACE TEMP TABLE _base AS
    SELECT offer_no, m.d AS d, m.t AS t, m.p AS p FROM (
        SELECT offer_no, max({'d': snapshot_date, 't': snapshot_at, 'p': price_per_hour}) AS m
        FROM offer_points
        WHERE provider = $p AND snapshot_date < $d
          AND offer_no IN (SELECT offer_no FROM _aff)
        GROUP BY offer_no
    )
"""
# ... or, for the nightly append, each offer's stored last observation.
_BASE_LAST_SQL = """
    CREATE OR REPLACE TEMP TABLE _base AS
    SELECT offer_no, last_date AS d, last_at AS t, last_price_per_hour AS p
    FROM offer_ids
    WHERE offer_no IN (SELECT offer_no FROM _aff) AND last_date IS NOT NULL
"""

# The day's points chain in (snapshot, price) order: the day's snapshots one after the other
# (an hourly provider's change within the day is a change), duplicates of one identity at two
# prices in one snapshot in price order; the first takes the latest earlier point; repeats of
# one price point in one snapshot at their first. Rows sorted by model and offer so each column
# compresses well.
_POINTS_SQL = f"""
    INSERT INTO offer_points
    SELECT $d, $p, gpu_model, offer_no, price_per_hour,
           CASE WHEN dup_no > 0 OR k > 1 THEN $d ELSE b.d END,
           CASE WHEN dup_no > 0 THEN NULL
                WHEN k > 1 THEN CASE WHEN {_differs("lag_p", "price_per_hour")} THEN lag_p END
                WHEN {_differs("b.p", "price_per_hour")} THEN b.p END,
           dup_no, detail_no, capture_no, available, snapshot_at,
           CASE WHEN dup_no > 0 THEN snapshot_at WHEN k > 1 THEN lag_t ELSE b.t END
    FROM (
        SELECT *,
               row_number() OVER w AS k,
               lag(price_per_hour) OVER w AS lag_p,
               lag(snapshot_at) OVER w AS lag_t
        FROM _rows
        WINDOW w AS (PARTITION BY offer_no, dup_no = 0 ORDER BY snapshot_at, price_per_hour)
    ) AS n
    LEFT JOIN _base AS b USING (offer_no)
    ORDER BY gpu_model, offer_no, snapshot_at, price_per_hour, dup_no
"""  # noqa: S608 (our constants)

# The next observation after $d of each affected offer now follows the latest point on or
# before $d (one of today's, or the one before).
_RELINK_NEXT_SQL = f"""
    UPDATE offer_points AS o
    SET prev_date = t.ud, prev_at = t.ut,
        old_price_per_hour = CASE WHEN {_differs("t.up", "o.price_per_hour")} THEN t.up END
    FROM (
        SELECT x.offer_no, x.m.d AS nd, x.m.t AS nt, x.m.p AS np,
               u.m.d AS ud, u.m.t AS ut, u.m.p AS up
        FROM (
            SELECT offer_no,
                   min({{'d': snapshot_date, 't': snapshot_at, 'p': price_per_hour}}) AS m
            FROM offer_points
            WHERE provider = $p AND snapshot_date > $d
              AND offer_no IN (SELECT offer_no FROM _aff)
            GROUP BY offer_no
        ) AS x
        LEFT JOIN (
            SELECT offer_no, max({{'d': d, 't': t, 'p': p}}) AS m
            FROM (SELECT offer_no, d, t, p FROM _base
                  UNION ALL
                  SELECT offer_no, $d, snapshot_at, price_per_hour FROM _rows)
            GROUP BY offer_no
        ) AS u USING (offer_no)
    ) AS t
    WHERE o.provider = $p AND o.offer_no = t.offer_no AND o.snapshot_date = t.nd
      AND o.snapshot_at = t.nt AND o.price_per_hour = t.np AND o.dup_no = 0
"""  # noqa: S608 (our constants)

# last_* of the affected offers, recomputed from offer_points ...
_LAST_SCAN_SQL = """
    UPDATE offer_ids AS i
    SET last_date = t.m.d, last_at = t.m.t, last_price_per_hour = t.m.p
    FROM (
        SELECT a.offer_no, l.m FROM _aff AS a LEFT JOIN (
            SELECT offer_no, max({'d': snapshot_date, 't': snapshot_at, 'p': price_per_hour}) AS m
            FROM offer_points
            WHERE provider = $p AND offer_no IN (SELECT offer_no FROM _aff)
            GROUP BY offer_no
        ) AS l USING (offer_no)
    ) AS t
    WHERE i.offer_no = t.offer_no
"""
# ... or, for the nightly append, today's points.
_LAST_APPEND_SQL = """
    UPDATE offer_ids AS i
    SET last_date = $d, last_at = t.m.t, last_price_per_hour = t.m.p
    FROM (SELECT offer_no, max({'t': snapshot_at, 'p': price_per_hour}) AS m
          FROM _rows GROUP BY offer_no) AS t
    WHERE i.offer_no = t.offer_no
"""


def as_date(value: dt.date | str) -> dt.date:
    """A date given as a date or as ISO text."""
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(value)


def _insert_offers(
    con: duckdb.DuckDBPyConnection, snapshot_date: dt.date, provider: str, table: pa.Table
) -> int:
    """Replace one (snapshot_date, provider) with `table`; the caller holds the transaction.
    What the warehouse already holds unchanged is kept (_known_snapshots): the same day again
    changes nothing, a day grown by later snapshots gains only those."""
    table = _checked(snapshot_date, provider, table)
    # Into a temp table of the contract's DDL, positionally (conform_table put the columns in
    # the frozen order): its NOT NULL constraints reject rows that break the contract.
    con.from_arrow(table).insert_into(create_src(con))
    key = (snapshot_date, provider)
    same, grown, _replaced = _known_snapshots(con) if table.num_rows else (set(), {}, set())
    if key in same or key in grown:
        _drop_held(con, same, grown)
        if key in grown:
            _append_snapshots(con, snapshot_date, provider)
    else:
        _store_partition(con, snapshot_date, provider)
    con.execute("DROP TABLE _src")
    return table.num_rows


def _known_snapshots(con: duckdb.DuckDBPyConnection, src: str = "_src"
                     ) -> tuple[set, dict, set]:
    """What the warehouse holds of the provider-days in relation `src` (our name), judged by the
    snapshots' fingerprints (_SNAPSHOTS_SQL): `same`, the (day, provider) keys it holds with
    exactly these snapshots; `grown`, key -> the latest stored snapshot time, for a day whose
    stored snapshots are all in _src unchanged, whose other snapshots are all later, and after
    which nothing of the provider is stored (an hourly provider's day file one crawl later);
    `replaced`, the other keys it holds something of (a reparse, a released quarantine, a
    snapshot inserted before the latest: replace the day). Keys it holds nothing of are in none.
    """
    stored = con.execute(f"""
        SELECT provider, snapshot_date, snapshot_at, rows_hash FROM snapshot_dates
        WHERE (provider, snapshot_date) IN (SELECT DISTINCT provider, snapshot_date FROM {src})
    """).fetchall()  # noqa: S608 (our name)
    if not stored:  # a first load, a rebuild: nothing to hash
        return set(), {}, set()
    incoming = con.execute(_SRC_SNAPSHOTS_SQL.format(src=src)).fetchall()
    last = dict(con.execute(f"""
        SELECT provider, max(snapshot_date) FROM snapshot_dates
        WHERE provider IN (SELECT DISTINCT provider FROM {src}) GROUP BY provider
    """).fetchall())  # noqa: S608 (our name)
    new: dict[tuple, dict] = {}
    for p, d, t, h in incoming:
        new.setdefault((d, p), {})[t] = h
    held: dict[tuple, dict] = {}
    for p, d, t, h in stored:
        held.setdefault((d, p), {})[t] = h
    same, grown, replaced = set(), {}, set()
    for key, have in held.items():
        got = new.get(key, {})
        if None in have or any(h is None or got.get(t) != h for t, h in have.items()):
            replaced.add(key)
        elif len(got) == len(have):
            same.add(key)
        elif last[key[1]] == key[0] and None not in got and all(
                t > max(have) for t in got if t not in have):
            grown[key] = max(have)
        else:
            replaced.add(key)
    return same, grown, replaced


def _drop_held(con: duckdb.DuckDBPyConnection, same: set, grown: dict,
               into: str | None = None) -> None:
    """Delete from _src the rows the warehouse already holds: every row of the `same` keys,
    the stored snapshots of the `grown` ones (_known_snapshots). With `into` (a relation of
    the contract's columns, our name): insert its other rows into _src instead."""
    keys = [(d, p, None) for d, p in same] + [(d, p, t) for (d, p), t in grown.items()]
    if not keys:
        if into:
            con.execute(f"INSERT INTO _src SELECT * FROM {into}")  # noqa: S608 (our name)
        return
    held = pa.table({"snapshot_date": pa.array([k[0] for k in keys], pa.date32()),
                     "provider": pa.array([k[1] for k in keys], pa.string()),
                     "upto": pa.array([k[2] for k in keys], pa.timestamp("us", tz="UTC"))})
    con.execute("CREATE OR REPLACE TEMP TABLE _held (snapshot_date DATE, provider VARCHAR, "
                "upto TIMESTAMPTZ)")
    con.from_arrow(held).insert_into("_held")
    match = ("s.snapshot_date = h.snapshot_date AND s.provider = h.provider "
             "AND (h.upto IS NULL OR s.snapshot_at <= h.upto)")
    if into:
        sql = f"INSERT INTO _src SELECT s.* FROM {into} AS s ANTI JOIN _held AS h ON {match}"  # noqa: S608 (our names)
        con.execute(sql)
    else:
        con.execute(f"DELETE FROM _src AS s USING _held AS h WHERE {match}")  # noqa: S608
    con.execute("DROP TABLE _held")


def _append_snapshots(con: duckdb.DuckDBPyConnection, day: dt.date, provider: str) -> None:
    """Store the rows of _src, later snapshots of a provider-day the warehouse holds the
    earlier ones of with nothing of the provider after it (_known_snapshots `grown`): the
    nightly append's statements, the day's cheapest offers recomputed from its new latest
    snapshot."""
    p = {"d": day, "p": provider}
    run(con, _STAGE_SQL.format(src=_ONE_DAY_SRC))
    for sql in _NUMBER_SQL:
        run(con, sql)
    run(con, _SNAPSHOTS_SQL.format(src="_src"))
    run(con, "DELETE FROM provider_day_cheapest WHERE snapshot_date = $d AND provider = $p", p)
    run(con, _CHEAPEST_SQL.format(rows="_rows"))
    run(con, "CREATE OR REPLACE TEMP TABLE _aff AS SELECT DISTINCT offer_no FROM _rows")
    run(con, _BASE_LAST_SQL)
    run(con, _POINTS_SQL, p)
    run(con, _LAST_APPEND_SQL, p)
    for tmp in ("_in", "_rows", "_aff", "_base"):
        run(con, f"DROP TABLE {tmp}")


def _checked(snapshot_date: dt.date, provider: str, table: pa.Table) -> pa.Table:
    """`table` conformed to the contract; ContractError if a row is of another provider-day."""
    table = conform_table(table)
    if table.num_rows:
        for name, expected in (("snapshot_date", snapshot_date), ("provider", provider)):
            col = table.column(name)
            wrong = pc.sum(pc.not_equal(col, pa.scalar(expected, type=col.type))).as_py() or 0
            if wrong:
                raise ContractError(
                    f"{provider} {snapshot_date}: {wrong} rows carry another {name}"
                )
    return table


def _store_partition(con: duckdb.DuckDBPyConnection, day: dt.date, provider: str) -> None:
    """Replace the stored rows of (day, provider) with the rows of temp table _src.

    Affected offers are those observed on (day, provider) before or after the load. Their new
    points on `day` take as previous observation the latest point before `day`; the first point
    after `day` of each affected offer gets its previous observation recomputed (a reload or a
    new snapshot in the middle of history). When no affected offer has a point on or after
    `day` (the nightly append) the previous observation is each offer's stored last_*, and no
    scan of offer_points is needed.
    """
    p = {"d": day, "p": provider}
    _replace_rows(con, p)
    general = run(con, """
        SELECT count(*) FROM offer_ids
        WHERE offer_no IN (SELECT offer_no FROM _aff) AND last_date >= $d
    """, p).fetchall()[0][0] > 0
    run(con, _BASE_SCAN_SQL if general else _BASE_LAST_SQL, p)
    run(con, _POINTS_SQL, p)
    if general:
        run(con, _RELINK_NEXT_SQL, p)
    run(con, _LAST_SCAN_SQL if general else _LAST_APPEND_SQL, p)
    for tmp in ("_in", "_rows", "_aff", "_base"):
        run(con, f"DROP TABLE {tmp}")


def _replace_rows(con: duckdb.DuckDBPyConnection, p: dict) -> None:
    """Delete what is stored of provider-day p (except the points' offers, kept in _aff), then
    stage and number the rows of _src into _rows, with the provider-day's snapshot date and
    cheapest offers; _aff gains today's offers."""
    run(con, _STAGE_SQL.format(src=_ONE_DAY_SRC))
    run(con, """
        CREATE OR REPLACE TEMP TABLE _aff AS
        SELECT DISTINCT offer_no FROM offer_points WHERE snapshot_date = $d AND provider = $p
    """, p)
    for table in ("offer_points", "offer_captures", "snapshot_dates", "provider_day_cheapest"):
        run(con, f"DELETE FROM {table} WHERE snapshot_date = $d AND provider = $p", p)  # noqa: S608
    for sql in _NUMBER_SQL:
        run(con, sql)
    run(con, "INSERT INTO _aff SELECT DISTINCT offer_no FROM _rows "
             "WHERE offer_no NOT IN (SELECT offer_no FROM _aff)")
    run(con, _SNAPSHOTS_SQL.format(src="_src"))
    run(con, _CHEAPEST_SQL.format(rows="_rows"))


def recompute_day_cheapest(con: duckdb.DuckDBPyConnection) -> None:
    """Rebuild provider_day_cheapest from every stored point, inside the caller's transaction
    (a warehouse whose minima were stored under an older rule)."""
    con.execute("DELETE FROM provider_day_cheapest")
    con.execute(_CHEAPEST_SQL.format(rows="offer_points"))


def rebuild_offer_points(con: duckdb.DuckDBPyConnection) -> None:
    """Store every offer afresh from the `offers` view, in one transaction: identities, details
    and captures are numbered anew and every previous observation is recomputed over the whole
    history at once (the reference the tests compare load-by-load maintenance with)."""
    with transaction(con):
        restore_all(con)


def restore_all(con: duckdb.DuckDBPyConnection) -> None:
    """rebuild_offer_points inside the caller's transaction."""
    src = create_src(con)
    con.execute(f"INSERT INTO {src} SELECT * FROM offers")  # noqa: S608 (our name)
    bulk_load(con, src)


def bulk_load(con: duckdb.DuckDBPyConnection, src: str) -> None:
    """Replace everything stored with the offers rows of relation `src` (our own name)."""
    for table in STORE_TABLES:
        con.execute(f"DELETE FROM {table}")  # noqa: S608 (our table names)
    run(con, _STAGE_SQL.format(src=f"(SELECT *, 0 AS seq FROM {src})"))  # noqa: S608 (ours)
    for sql in _NUMBER_SQL:
        run(con, sql)
    con.execute(_SNAPSHOTS_SQL.format(src=src))
    con.execute(_CHEAPEST_SQL.format(rows="_rows"))
    con.execute(f"""
        INSERT INTO offer_points
        SELECT snapshot_date, provider, gpu_model, offer_no, price_per_hour,
               CASE WHEN dup_no > 0 THEN snapshot_date ELSE lag(snapshot_date) OVER w END,
               CASE WHEN dup_no = 0
                         AND {_differs("lag(price_per_hour) OVER w", "price_per_hour")}
                    THEN lag(price_per_hour) OVER w END,
               dup_no, detail_no, capture_no, available, snapshot_at,
               CASE WHEN dup_no > 0 THEN snapshot_at ELSE lag(snapshot_at) OVER w END
        FROM _rows
        WINDOW w AS (PARTITION BY offer_no, dup_no = 0
                     ORDER BY snapshot_date, snapshot_at, price_per_hour)
        ORDER BY snapshot_date, provider, gpu_model, offer_no, snapshot_at, price_per_hour, dup_no
    """)  # noqa: S608 (our constants)
    con.execute("""
        UPDATE offer_ids AS i
        SET last_date = t.m.d, last_at = t.m.t, last_price_per_hour = t.m.p
        FROM (
            SELECT offer_no,
                   max({'d': snapshot_date, 't': snapshot_at, 'p': price_per_hour}) AS m
            FROM offer_points GROUP BY offer_no
        ) AS t
        WHERE i.offer_no = t.offer_no
    """)
    for tmp in ("_in", "_rows", src):
        con.execute(f"DROP TABLE {tmp}")


def load_partition(
    con: duckdb.DuckDBPyConnection,
    snapshot_date: dt.date | str,
    provider: str,
    table: pa.Table,
) -> int:
    """Replace the offers of one (snapshot_date, provider) with `table`, in one transaction.
    Returns the number of rows loaded. On any error nothing changes and the error is raised."""
    day = as_date(snapshot_date)
    with transaction(con):
        return _insert_offers(con, day, provider, table)
