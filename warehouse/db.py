"""The DuckDB warehouse: the offers of every loaded snapshot, `gpu_models`, `fx_rates`, `runs`,
and the views in warehouse/sql/.

Offers are stored normalised, once: each row of an offers partition is one narrow row of
`offer_points` (date, provider, offer number, price, previous observation, and numbers pointing
at its detail and capture rows); the offer's identity (sku, region, GPU, pricing model, …) is one
row of `offer_ids`, the columns that rarely change (vCPUs, RAM, billing rules, extra) one row of
`offer_details`, and where it was read (capture time, URL, body hash) one row of
`offer_captures`. The view `offers` joins them back into the contract's columns, in the
contract's order and types. A year of nightly history (11.5 million rows) takes 88 MB this way,
against 270 MB with a plain `offers` table beside the history tables (bench/warehouse_scale.py).

Loads are idempotent per (snapshot_date, provider): the pair is deleted and inserted again in one
transaction, so a rerun replaces and a failure half way leaves the warehouse as it was. The same
transaction stores each observation's offer identity and its previous observation, and the
provider-day's cheapest offer per GPU model (see _store_partition), so the history views and
cheapest_daily read a few rows instead of aggregating or windowing over the whole year. Arrow
tables go to DuckDB as relations (no Python loop over rows). Values only ever reach SQL as
parameters.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from warehouse import gpus, lake
from warehouse.contract import OFFER_SCHEMA, ContractError, conform_table, conform_to

HERE = Path(__file__).parent
SQL_DIR = HERE / "sql"

# Created in this order because later views read earlier ones (DuckDB binds a view when it is
# created). Each entry is a file under sql/ without its .sql, named for the view or macro it
# creates: staging/ holds the building blocks over the stored tables, marts/ the questions.
# tests/test_views.py checks this list names every file in sql/.
VIEWS = (
    "staging/offers",
    "staging/provider_snapshots",
    "staging/offer_observations",
    "staging/fx_rate_periods",
    "staging/fx_rate_per_eur",
    "staging/fx_factor",
    "staging/offers_as_of",
    "staging/provider_day_lowest",
    "staging/provider_runs",
    "staging/week_snapshot_pairs",
    "marts/latest_offers",
    "marts/offer_history",
    "marts/price_changes",
    "marts/cheapest_daily",
    "marts/cheapest_now",
    "marts/latest_snapshot",
    "marts/fx_currencies",
    "marts/fx_rates_freshness",
    "marts/offers_priced_as_of",
    "marts/gpu_prices_as_of",
    "marts/gpu_provider_lowest",
    "marts/gpu_weekly_lowest",
    "marts/gpu_monthly_lowest",
    "marts/price_changes_between",
    "marts/offer_turnover",
    "marts/announced_prices",
    "marts/provider_health",
)

RUN_STATUSES = ("ok", "failed", "degraded", "stale", "skipped")

_DUCK_TYPES = {
    pa.date32(): "DATE",
    pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
    pa.string(): "VARCHAR",
    pa.float64(): "DOUBLE",
    pa.int32(): "INTEGER",
    pa.bool_(): "BOOLEAN",
}

_FX_SCHEMA = pa.schema(
    [
        pa.field("date", pa.date32(), nullable=False),
        pa.field("currency", pa.string(), nullable=False),
        pa.field("rate_per_eur", pa.float64(), nullable=False),
        pa.field("source", pa.string()),
    ]
)

# The identity columns of an offer (variant is derived from extra, see _STAGE_SQL).
_IDENTITY = ("provider", "sku", "region", "gpu_model", "gpu_count", "pricing_model",
             "commitment_months", "effective_from", "currency", "variant")
# Contract columns kept once per distinct combination (they change rarely if ever per offer).
_DETAILS = ("gpu_memory_gb", "vcpus", "ram_gb", "interconnect", "billing_increment_s",
            "min_billing_s", "extra")
# Contract columns that describe the capture a row was read from.
_CAPTURE = ("captured_at", "source_url", "raw_sha256")
# The rest (snapshot_date, provider, gpu_model, price_per_hour, available) is kept per row in
# offer_points; price_per_gpu_hour is derived. tests/test_db.py checks that the view `offers`
# gives back exactly the contract's columns and types.


def _column_ddl(f: pa.Field, nullable: bool | None = None) -> str:
    null_ok = f.nullable if nullable is None else nullable
    return f"{f.name} {_DUCK_TYPES[f.type]}{'' if null_ok else ' NOT NULL'}"


def _create_src(con: duckdb.DuckDBPyConnection) -> str:
    """(Re)create the temp table `_src` with the contract's columns and NOT NULL constraints,
    the staging area every load and rebuild fills; returns its name."""
    cols = ",\n    ".join(_column_ddl(f) for f in OFFER_SCHEMA)
    con.execute(f"CREATE OR REPLACE TEMP TABLE _src (\n    {cols}\n)")
    return "_src"


def _columns_ddl(names: Iterable[str]) -> str:
    return ",\n        ".join(_column_ddl(OFFER_SCHEMA.field(n)) for n in names)


_TABLES_DDL = (
    """
    CREATE TABLE IF NOT EXISTS fx_rates (
        -- One row per (date, currency), kept so by load_fx_rates rather than by a PRIMARY KEY:
        -- the key's index over the ECB history since 1999 (~220,000 rates) took ~15 MB on
        -- disk, ten times the table.
        date DATE NOT NULL,
        currency VARCHAR NOT NULL,
        -- ECB reference rates are EUR based: units of `currency` for one euro.
        rate_per_eur DOUBLE NOT NULL CHECK (rate_per_eur > 0),
        source VARCHAR
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS runs (
        run_id VARCHAR NOT NULL,
        started_at TIMESTAMPTZ,
        finished_at TIMESTAMPTZ,
        provider VARCHAR NOT NULL,
        snapshot_date DATE,
        status VARCHAR NOT NULL
            CHECK (status IN ('ok', 'failed', 'degraded', 'stale', 'skipped')),
        rows BIGINT,
        quarantined BIGINT,
        error VARCHAR,
        message VARCHAR
    )
    """,
    # One row per offer identity (see docs/warehouse.md, "Offer identity"). offer_no is a dense
    # number given at first sight (small integers compress to almost nothing in offer_points,
    # a 64-bit hash does not); offer_id is the identity's hash, what the views show. last_* is
    # the offer's latest observation (latest date, then highest price): the previous
    # observation of a night appended after it, and the end of its current run. No price per
    # GPU-hour is stored anywhere: it is price_per_hour / gpu_count (how the contract derives
    # it), computed by the views; stored, those full-precision quotients were the largest
    # column of a year's warehouse.
    """
    CREATE TABLE IF NOT EXISTS offer_ids (
        offer_no INTEGER NOT NULL,
        offer_id UBIGINT NOT NULL,
        provider VARCHAR NOT NULL,
        sku VARCHAR,
        region VARCHAR,
        gpu_model VARCHAR,
        gpu_count DOUBLE,
        pricing_model VARCHAR,
        commitment_months INTEGER,
        effective_from DATE,
        currency VARCHAR,
        variant VARCHAR NOT NULL,
        last_date DATE,
        last_price_per_hour DOUBLE
    )
    """,
    # One row per distinct combination of the detail columns; detail_hash finds it again.
    f"""
    CREATE TABLE IF NOT EXISTS offer_details (
        detail_no INTEGER NOT NULL,
        detail_hash UBIGINT NOT NULL,
        {_columns_ddl(_DETAILS)}
    )
    """,
    # One row per capture a (snapshot_date, provider) partition was parsed from.
    f"""
    CREATE TABLE IF NOT EXISTS offer_captures (
        capture_no INTEGER NOT NULL,
        snapshot_date DATE NOT NULL,
        provider VARCHAR NOT NULL,
        {_columns_ddl(_CAPTURE)}
    )
    """,
    # One row per row of an offers partition. prev_date / old_price_per_hour: the previous
    # observation of the same offer in (snapshot_date, price_per_hour) order: prev_date (the
    # same day for a same-day duplicate at another price; null for the first) and
    # old_price_per_hour (only when the price differs from the previous one: mostly null, so
    # nearly free on disk). dup_no > 0 marks a repeat of an (offer, day, price) already in
    # the partition (prev_date = its own day, no old price): the history views count it once.
    """
    CREATE TABLE IF NOT EXISTS offer_points (
        snapshot_date DATE NOT NULL,
        provider VARCHAR NOT NULL,
        gpu_model VARCHAR NOT NULL,
        offer_no INTEGER NOT NULL,
        price_per_hour DOUBLE NOT NULL,
        prev_date DATE,
        old_price_per_hour DOUBLE,
        dup_no INTEGER NOT NULL,
        detail_no INTEGER NOT NULL,
        capture_no INTEGER NOT NULL,
        available BOOLEAN
    )
    """,
    # Per (snapshot_date, provider, gpu_model, pricing_model, currency): the lowest price per
    # GPU-hour among the offers in force that day (announced future prices left out), how many
    # offers, and the row holding it (ties: sku, region, offer number). cheapest_daily ranks
    # these few hundred thousand rows instead of every offer of the year.
    """
    CREATE TABLE IF NOT EXISTS provider_day_cheapest (
        snapshot_date DATE NOT NULL,
        provider VARCHAR NOT NULL,
        gpu_model VARCHAR NOT NULL,
        pricing_model VARCHAR NOT NULL,
        currency VARCHAR NOT NULL,
        min_price_per_gpu_hour DOUBLE NOT NULL,
        n_offers BIGINT NOT NULL,
        offer_no INTEGER NOT NULL,
        price_per_hour DOUBLE NOT NULL,
        available BOOLEAN
    )
    """,
    # The (provider, snapshot_date) pairs that hold offers: numbered at query time (a few
    # thousand rows), so a snapshot loaded in the middle of history renumbers nothing stored.
    """
    CREATE TABLE IF NOT EXISTS snapshot_dates (
        provider VARCHAR NOT NULL,
        snapshot_date DATE NOT NULL
    )
    """,
)

_STORE_TABLES = ("offer_points", "offer_ids", "offer_details", "offer_captures",
                 "snapshot_dates", "provider_day_cheapest")

_ID_COLS = ", ".join(_IDENTITY)
_ID_MATCH = " AND ".join(f"i.{c} IS NOT DISTINCT FROM n.{c}" for c in _IDENTITY)
_DETAIL_COLS = ", ".join(_DETAILS)
_DETAIL_MATCH = " AND ".join(f"d.{c} IS NOT DISTINCT FROM n.{c}" for c in _DETAILS)
_CAPTURE_COLS = ", ".join(_CAPTURE)
_CAPTURE_MATCH = " AND ".join(f"c.{c} = n.{c}" for c in ("snapshot_date", "provider")
                              + _CAPTURE)

# Rows of an offers relation {src} with their identity's variant (built from the extra keys
# that tell two rows of one sku apart) and the hash of their detail columns. {src} is our own
# relation name, never data.
_STAGE_SQL = f"""
    CREATE OR REPLACE TEMP TABLE _in AS
    SELECT *, coalesce(concat_ws('|', v[1], v[2], v[3]), '') AS variant,
           hash({_DETAIL_COLS}) AS detail_hash
    FROM (
        SELECT *, json_extract_string(
            extra, ['$.offer_key', '$.source', '$.provider_term']) AS v
        FROM {{src}}
    )
"""  # noqa: S608 (identifiers are our constants)

# New identities get the next offer numbers, in GPU / provider / sku order so that one model's
# offers sit together.
_NEW_IDS_SQL = f"""
    INSERT INTO offer_ids
    SELECT (SELECT coalesce(max(offer_no), 0) FROM offer_ids)
               + row_number() OVER (ORDER BY gpu_model, provider, sku, region, pricing_model,
                                    gpu_count, commitment_months, effective_from, currency,
                                    variant),
           hash({_ID_COLS}), {_ID_COLS}, NULL, NULL
    FROM (SELECT DISTINCT {_ID_COLS} FROM _in) AS n
    WHERE NOT EXISTS (SELECT 1 FROM offer_ids AS i WHERE {_ID_MATCH})
"""  # noqa: S608 (identifiers are our constants)

_NEW_DETAILS_SQL = f"""
    INSERT INTO offer_details
    SELECT (SELECT coalesce(max(detail_no), 0) FROM offer_details)
               + row_number() OVER (ORDER BY detail_hash, {_DETAIL_COLS}),
           detail_hash, {_DETAIL_COLS}
    FROM (SELECT DISTINCT detail_hash, {_DETAIL_COLS} FROM _in) AS n
    WHERE NOT EXISTS (SELECT 1 FROM offer_details AS d
                      WHERE d.detail_hash = n.detail_hash AND {_DETAIL_MATCH})
"""  # noqa: S608 (identifiers are our constants)

_NEW_CAPTURES_SQL = f"""
    INSERT INTO offer_captures
    SELECT (SELECT coalesce(max(capture_no), 0) FROM offer_captures)
               + row_number() OVER (ORDER BY snapshot_date, provider, {_CAPTURE_COLS}),
           snapshot_date, provider, {_CAPTURE_COLS}
    FROM (SELECT DISTINCT snapshot_date, provider, {_CAPTURE_COLS} FROM _in)
"""  # noqa: S608 (identifiers are our constants)

# Each staged row with its numbers; dup_no counts repeats of one (offer, day, price).
_ROWS_SQL = f"""
    CREATE OR REPLACE TEMP TABLE _rows AS
    SELECT n.snapshot_date, n.provider, n.gpu_model, i.offer_no, n.price_per_hour,
           d.detail_no, c.capture_no, n.available,
           row_number() OVER (
               PARTITION BY i.offer_no, n.snapshot_date, n.price_per_hour
               ORDER BY d.detail_no, c.capture_no, n.available) - 1 AS dup_no
    FROM _in AS n
    JOIN offer_ids AS i ON {_ID_MATCH}
    JOIN offer_details AS d ON d.detail_hash = n.detail_hash AND {_DETAIL_MATCH}
    JOIN offer_captures AS c ON {_CAPTURE_MATCH}
"""  # noqa: S608 (identifiers are our constants)


# The per provider-day minima of the rows in _rows (one day of one provider, or everything).
_CHEAPEST_SQL = """
    INSERT INTO provider_day_cheapest
    SELECT snapshot_date, provider, gpu_model, pricing_model, currency, min_price, n_offers,
           best.offer_no, best.price_per_hour, best.available
    FROM (
        SELECT r.snapshot_date, r.provider, r.gpu_model, i.pricing_model, i.currency,
               min(r.price_per_hour / i.gpu_count) AS min_price,
               count(*) AS n_offers,
               arg_min({'offer_no': r.offer_no, 'price_per_hour': r.price_per_hour,
                        'available': r.available},
                       {'price': r.price_per_hour / i.gpu_count, 'sku': i.sku,
                        'region': coalesce(i.region, ''), 'offer_no': r.offer_no}) AS best
        FROM _rows AS r
        JOIN offer_ids AS i ON i.offer_no = r.offer_no
        WHERE i.effective_from IS NULL OR i.effective_from <= r.snapshot_date
        GROUP BY ALL
    )
"""


def connect(db_path: Path | str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating the folder if needed) the warehouse file; ':memory:' works for tests."""
    if str(db_path) != ":memory:" and not read_only:
        Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    return duckdb.connect(str(db_path), read_only=read_only)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN … COMMIT, or ROLLBACK and re-raise on any error."""
    con.begin()
    try:
        yield con
    except BaseException:
        con.rollback()
        raise
    con.commit()


@contextmanager
def _registered(
    con: duckdb.DuckDBPyConnection, table: pa.Table
) -> Iterator[str]:
    # A unique name so nested or concurrent cursors never see each other's relation.
    name = f"_arrow_{uuid.uuid4().hex}"
    con.register(name, table)
    try:
        yield name
    finally:
        con.unregister(name)


def _table_type(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    rows = con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = ?",
                       [name]).fetchall()
    return rows[0][0] if rows else None


def _migrate_offers_table(con: duckdb.DuckDBPyConnection) -> str | None:
    """A warehouse from before the normalised store keeps its rows in a table `offers` (and
    derived history tables of an older shape). Move the table aside (returned, to be loaded
    into the new tables) and drop what can be derived again."""
    if _table_type(con, "offers") != "BASE TABLE":
        return None
    for view in reversed(VIEWS[1:]):
        # Macros are left: DROP VIEW IF EXISTS passes over them, and CREATE OR REPLACE renews them.
        con.execute(f"DROP VIEW IF EXISTS {Path(view).name}")  # our constant names
    con.execute("ALTER TABLE offers RENAME TO _offers_before_store")
    for table in _STORE_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")  # our constant names
    return "_offers_before_store"


def _migrated_rows(con: duckdb.DuckDBPyConnection, old: str) -> str:
    """The old table's rows in the contract's columns (columns added to the contract after the
    warehouse was created are null), as a temp table."""
    have = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [old]
    ).fetchall()}
    cols = ", ".join(f.name if f.name in have else f"NULL::{_DUCK_TYPES[f.type]} AS {f.name}"
                     for f in OFFER_SCHEMA)
    src = _create_src(con)
    con.execute(f"INSERT INTO {src} SELECT {cols} FROM {old}")  # noqa: S608 (our names)
    return src


def _migrate_fx_rates(con: duckdb.DuckDBPyConnection) -> None:
    """Recreate fx_rates without the primary key of a warehouse created with one."""
    if con.execute(
        "SELECT count(*) FROM duckdb_constraints() "
        "WHERE table_name = 'fx_rates' AND constraint_type = 'PRIMARY KEY'"
    ).fetchone()[0]:
        con.execute("ALTER TABLE fx_rates RENAME TO _fx_rates_old")
        con.execute(next(d for d in _TABLES_DDL if "TABLE IF NOT EXISTS fx_rates" in d))
        con.execute("INSERT INTO fx_rates SELECT * FROM _fx_rates_old")
        con.execute("DROP TABLE _fx_rates_old")


def _gpu_models_table() -> pa.Table:
    # Through warehouse.gpus so the warehouse sees exactly the models the mapper knows.
    rows = [dataclasses.asdict(m) for m in gpus.gpu_models().values()]
    return pa.Table.from_pylist(rows)


def refresh_views(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create every view from warehouse/sql/<view>.sql."""
    for view in VIEWS:
        con.execute((SQL_DIR / f"{view}.sql").read_text())


def init_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables if missing, move a warehouse of the older layout into them, refresh
    gpu_models from gpus.csv and (re)create the views. Safe to call on every start."""
    # Registered outside the transaction: unregistering inside an aborted one would fail and
    # hide the real error.
    with _registered(con, _gpu_models_table()) as name, transaction(con):
        old = _migrate_offers_table(con)
        for ddl in _TABLES_DDL:
            con.execute(ddl)
        _migrate_fx_rates(con)
        if old:
            _bulk_load(con, _migrated_rows(con, old))
            con.execute(f"DROP TABLE {old}")  # noqa: S608 (our name)
        con.execute(f"CREATE OR REPLACE TABLE gpu_models AS SELECT * FROM {name}")  # noqa: S608
        refresh_views(con)


def _run(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
         ) -> duckdb.DuckDBPyConnection:
    # DuckDB refuses named parameters a statement does not use: pass only those it names.
    used = set(re.findall(r"\$(\w+)", sql))
    return con.execute(sql, {k: v for k, v in (params or {}).items() if k in used} or None)


def _insert_offers(
    con: duckdb.DuckDBPyConnection, snapshot_date: dt.date, provider: str, table: pa.Table
) -> int:
    """Replace one (snapshot_date, provider) with `table`; the caller holds the transaction."""
    table = conform_table(table)
    if table.num_rows:
        for name, expected in (("snapshot_date", snapshot_date), ("provider", provider)):
            col = table.column(name)
            wrong = pc.sum(pc.not_equal(col, pa.scalar(expected, type=col.type))).as_py() or 0
            if wrong:
                raise ContractError(
                    f"{provider} {snapshot_date}: {wrong} rows carry another {name}"
                )
    # Into a temp table of the contract's DDL, positionally (conform_table put the columns in
    # the frozen order): its NOT NULL constraints reject rows that break the contract.
    con.from_arrow(table).insert_into(_create_src(con))
    _store_partition(con, snapshot_date, provider)
    con.execute("DROP TABLE _src")
    return table.num_rows


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
    _run(con, _STAGE_SQL.format(src="_src"))
    _run(con, """
        CREATE OR REPLACE TEMP TABLE _aff AS
        SELECT DISTINCT offer_no FROM offer_points WHERE snapshot_date = $d AND provider = $p
    """, p)
    for table in ("offer_points", "offer_captures", "snapshot_dates", "provider_day_cheapest"):
        _run(con, f"DELETE FROM {table} WHERE snapshot_date = $d AND provider = $p", p)  # noqa: S608
    _run(con, _NEW_IDS_SQL)
    _run(con, _NEW_DETAILS_SQL)
    _run(con, _NEW_CAPTURES_SQL)
    _run(con, _ROWS_SQL)
    _run(con, "INSERT INTO _aff SELECT DISTINCT offer_no FROM _rows "
              "WHERE offer_no NOT IN (SELECT offer_no FROM _aff)")
    _run(con, "INSERT INTO snapshot_dates SELECT $p, $d WHERE EXISTS (SELECT 1 FROM _rows)", p)
    _run(con, _CHEAPEST_SQL)
    general = _run(con, """
        SELECT count(*) FROM offer_ids
        WHERE offer_no IN (SELECT offer_no FROM _aff) AND last_date >= $d
    """, p).fetchall()[0][0] > 0
    if general:
        # The latest point before `day` of each affected offer.
        _run(con, """
            CREATE OR REPLACE TEMP TABLE _base AS
            SELECT offer_no, m.d AS d, m.p AS p FROM (
                SELECT offer_no, max({'d': snapshot_date, 'p': price_per_hour}) AS m
                FROM offer_points
                WHERE provider = $p AND snapshot_date < $d
                  AND offer_no IN (SELECT offer_no FROM _aff)
                GROUP BY offer_no
            )
        """, p)
    else:
        _run(con, """
            CREATE OR REPLACE TEMP TABLE _base AS
            SELECT offer_no, last_date AS d, last_price_per_hour AS p
            FROM offer_ids
            WHERE offer_no IN (SELECT offer_no FROM _aff) AND last_date IS NOT NULL
        """)
    # Same-day duplicates (one identity at two prices) chain in price order; the first takes
    # the latest earlier point; repeats of one price point at their first. Rows sorted by model
    # and offer so each column compresses well.
    _run(con, """
        INSERT INTO offer_points
        SELECT $d, $p, gpu_model, offer_no, price_per_hour,
               CASE WHEN dup_no > 0 OR k > 1 THEN $d ELSE b.d END,
               CASE WHEN dup_no > 0 THEN NULL
                    WHEN k > 1 THEN lag_p
                    WHEN b.p <> price_per_hour THEN b.p END,
               dup_no, detail_no, capture_no, available
        FROM (
            SELECT *,
                   row_number() OVER w AS k,
                   lag(price_per_hour) OVER w AS lag_p
            FROM _rows
            WINDOW w AS (PARTITION BY offer_no, dup_no = 0 ORDER BY price_per_hour)
        ) AS n
        LEFT JOIN _base AS b USING (offer_no)
        ORDER BY gpu_model, offer_no, price_per_hour, dup_no
    """, p)
    if general:
        # The next observation after `day` of each affected offer now follows the latest point
        # on or before `day` (one of today's, or the one before).
        _run(con, """
            UPDATE offer_points AS o
            SET prev_date = t.ud,
                old_price_per_hour = CASE WHEN t.up <> o.price_per_hour THEN t.up END
            FROM (
                SELECT x.offer_no, x.m.d AS nd, x.m.p AS np, u.m.d AS ud, u.m.p AS up
                FROM (
                    SELECT offer_no, min({'d': snapshot_date, 'p': price_per_hour}) AS m
                    FROM offer_points
                    WHERE provider = $p AND snapshot_date > $d
                      AND offer_no IN (SELECT offer_no FROM _aff)
                    GROUP BY offer_no
                ) AS x
                LEFT JOIN (
                    SELECT offer_no, max({'d': d, 'p': p}) AS m
                    FROM (SELECT offer_no, d, p FROM _base
                          UNION ALL
                          SELECT offer_no, $d, price_per_hour FROM _rows)
                    GROUP BY offer_no
                ) AS u USING (offer_no)
            ) AS t
            WHERE o.provider = $p AND o.offer_no = t.offer_no AND o.snapshot_date = t.nd
              AND o.price_per_hour = t.np AND o.dup_no = 0
        """, p)
        _run(con, """
            UPDATE offer_ids AS i
            SET last_date = t.m.d, last_price_per_hour = t.m.p
            FROM (
                SELECT a.offer_no, l.m FROM _aff AS a LEFT JOIN (
                    SELECT offer_no, max({'d': snapshot_date, 'p': price_per_hour}) AS m
                    FROM offer_points
                    WHERE provider = $p AND offer_no IN (SELECT offer_no FROM _aff)
                    GROUP BY offer_no
                ) AS l USING (offer_no)
            ) AS t
            WHERE i.offer_no = t.offer_no
        """, p)
    else:
        _run(con, """
            UPDATE offer_ids AS i
            SET last_date = $d, last_price_per_hour = t.p
            FROM (SELECT offer_no, max(price_per_hour) AS p FROM _rows GROUP BY offer_no) AS t
            WHERE i.offer_no = t.offer_no
        """, p)
    for tmp in ("_in", "_rows", "_aff", "_base"):
        _run(con, f"DROP TABLE {tmp}")


def rebuild_offer_points(con: duckdb.DuckDBPyConnection) -> None:
    """Store every offer afresh from the `offers` view, in one transaction: identities, details
    and captures are numbered anew and every previous observation is recomputed over the whole
    history at once (the reference the tests compare load-by-load maintenance with)."""
    with transaction(con):
        src = _create_src(con)
        con.execute(f"INSERT INTO {src} SELECT * FROM offers")  # noqa: S608 (our name)
        _bulk_load(con, src)


def _bulk_load(con: duckdb.DuckDBPyConnection, src: str) -> None:
    """Replace everything stored with the offers rows of relation `src` (our own name)."""
    for table in _STORE_TABLES:
        con.execute(f"DELETE FROM {table}")  # noqa: S608 (our table names)
    _run(con, _STAGE_SQL.format(src=src))
    for sql in (_NEW_IDS_SQL, _NEW_DETAILS_SQL, _NEW_CAPTURES_SQL, _ROWS_SQL):
        _run(con, sql)
    con.execute("INSERT INTO snapshot_dates SELECT DISTINCT provider, snapshot_date FROM _rows")
    con.execute(_CHEAPEST_SQL)
    con.execute("""
        INSERT INTO offer_points
        SELECT snapshot_date, provider, gpu_model, offer_no, price_per_hour,
               CASE WHEN dup_no > 0 THEN snapshot_date ELSE lag(snapshot_date) OVER w END,
               CASE WHEN dup_no = 0 AND lag(price_per_hour) OVER w <> price_per_hour
                    THEN lag(price_per_hour) OVER w END,
               dup_no, detail_no, capture_no, available
        FROM _rows
        WINDOW w AS (PARTITION BY offer_no, dup_no = 0 ORDER BY snapshot_date, price_per_hour)
        ORDER BY snapshot_date, provider, gpu_model, offer_no, price_per_hour, dup_no
    """)
    con.execute("""
        UPDATE offer_ids AS i
        SET last_date = t.m.d, last_price_per_hour = t.m.p
        FROM (
            SELECT offer_no, max({'d': snapshot_date, 'p': price_per_hour}) AS m
            FROM offer_points GROUP BY offer_no
        ) AS t
        WHERE i.offer_no = t.offer_no
    """)
    for tmp in ("_in", "_rows", src):
        con.execute(f"DROP TABLE {tmp}")


def _as_date(value: dt.date | str) -> dt.date:
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(value)


def load_partition(
    con: duckdb.DuckDBPyConnection,
    snapshot_date: dt.date | str,
    provider: str,
    table: pa.Table,
) -> int:
    """Replace the offers of one (snapshot_date, provider) with `table`, in one transaction.
    Returns the number of rows loaded. On any error nothing changes and the error is raised."""
    day = _as_date(snapshot_date)
    with transaction(con):
        return _insert_offers(con, day, provider, table)


def load_lake(
    con: duckdb.DuckDBPyConnection,
    lake_root: Path | str,
    dates: Iterable[dt.date | str] | None = None,
    providers: Iterable[str] | None = None,
    *,
    read: Callable[[Path], pa.Table] | None = None,
) -> dict[tuple[dt.date, str], int]:
    """Load the lake's offers partitions (all, or those of the given dates and providers) into
    the warehouse in ONE transaction: either every selected partition is replaced or none is.
    Partitions are read one at a time so memory holds one day of one provider. Returns rows
    loaded per (snapshot_date, provider). `read` is for tests (defaults to lake.read_offers_file).
    """
    want_dates = None if dates is None else {_as_date(d) for d in dates}
    want_providers = None if providers is None else set(providers)
    reader = read or lake.read_offers_file
    selected = [
        (day, prov, path)
        for day, prov, path in lake.list_partitions(lake_root)
        if (want_dates is None or day in want_dates)
        and (want_providers is None or prov in want_providers)
    ]
    loaded: dict[tuple[dt.date, str], int] = {}
    with transaction(con):
        for day, prov, path in selected:
            loaded[(day, prov)] = _insert_offers(con, day, prov, reader(path))
    return loaded


def compact(db_path: Path | str) -> tuple[int, int]:
    """Rewrite the warehouse file into a fresh one and put it in place atomically; returns the
    sizes in bytes before and after.

    DuckDB reuses the blocks a DELETE or UPDATE frees but never gives them back to the file
    system, and segments rewritten by UPDATEs stay less compressed than fresh ones: after a
    backfill, many reloads, or moving an older layout in (which leaves the old table's blocks
    free), a copy is smaller. The caller must make sure nothing else writes the file meanwhile
    (DuckDB's own lock refuses a writer that already has it open).
    """
    path = Path(db_path)
    before = path.stat().st_size
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.part")

    def literal(p: Path) -> str:  # a path as a SQL string literal (ATTACH takes no parameter)
        return "'" + str(p).replace("'", "''") + "'"

    try:
        with duckdb.connect(":memory:") as con:
            con.execute(f"ATTACH {literal(path)} AS src (READ_ONLY)")
            con.execute(f"ATTACH {literal(tmp)} AS dst")
            con.execute("COPY FROM DATABASE src TO dst")
            con.execute("DETACH dst")
            con.execute("DETACH src")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
    return before, path.stat().st_size


def load_fx_rates(con: duckdb.DuckDBPyConnection, rates: pa.Table) -> int:
    """Insert or replace FX rates (columns date, currency, rate_per_eur, source; EUR based:
    units of currency per euro) in one transaction. Returns the number of rows given. Raises
    ValueError (and changes nothing) when `rates` holds one (date, currency) twice."""
    table = conform_to(rates, _FX_SCHEMA)
    with _registered(con, table) as name, transaction(con):
        # `name` is our own generated relation name, never data. fx_rates has no key (see its
        # DDL): replace = delete the given (date, currency) pairs, then insert.
        dup = con.execute(
            f"SELECT any_value(date), any_value(upper(currency)) FROM {name} "  # noqa: S608
            "GROUP BY date, upper(currency) HAVING count(*) > 1 LIMIT 1"
        ).fetchall()
        if dup:
            raise ValueError(f"FX rates given twice for {dup[0][1]} on {dup[0][0]}")
        con.execute(f"DELETE FROM fx_rates AS f USING {name} AS n "  # noqa: S608
                    "WHERE f.date = n.date AND f.currency = upper(n.currency)")
        con.execute("INSERT INTO fx_rates (date, currency, rate_per_eur, source) "  # noqa: S608
                    f"SELECT date, upper(currency), rate_per_eur, source FROM {name}")
    return table.num_rows


def record_run(
    con: duckdb.DuckDBPyConnection,
    *,
    run_id: str,
    provider: str,
    status: str,
    snapshot_date: dt.date | str | None = None,
    started_at: dt.datetime | None = None,
    finished_at: dt.datetime | None = None,
    rows: int | None = None,
    quarantined: int | None = None,
    error: str | None = None,
    message: str | None = None,
) -> None:
    """Record (or replace) the outcome of one provider in one run: one row per
    (run_id, provider, snapshot_date)."""
    if status not in RUN_STATUSES:
        raise ValueError(f"unknown run status {status!r}; expected one of {RUN_STATUSES}")
    day = None if snapshot_date is None else _as_date(snapshot_date)
    with transaction(con):
        con.execute(
            "DELETE FROM runs WHERE run_id = ? AND provider = ? "
            "AND snapshot_date IS NOT DISTINCT FROM ?",
            [run_id, provider, day],
        )
        con.execute(
            "INSERT INTO runs (run_id, started_at, finished_at, provider, snapshot_date, status, "
            "rows, quarantined, error, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [run_id, started_at, finished_at, provider, day, status, rows, quarantined, error,
             message],
        )


def query(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pa.Table:
    """Run a query and return an Arrow table (handy for the CLI and reports)."""
    return con.sql(sql, params=params or None).to_arrow_table()
