"""The DuckDB warehouse: tables `offers`, `gpu_models`, `fx_rates`, `runs`, the offer-history
tables `offer_ids`, `offer_points`, `snapshot_dates` (maintained by every load) and the views in
warehouse/sql/.

Loads are idempotent per (snapshot_date, provider): the pair is deleted and inserted again in one
transaction, so a rerun replaces and a failure half way leaves the warehouse as it was. The same
transaction keeps the offer-history tables in step: each observation's offer identity and its
previous observation are stored at load time (see _maintain_points), so the history views read
a few rows instead of windowing over the whole year. Arrow tables go to DuckDB as registered
relations (no Python loop over rows). Values only ever reach SQL as parameters.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
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
# created). tests/test_views.py checks this list names every file in sql/.
VIEWS = (
    "offer_observations",
    "latest_offers",
    "offer_history",
    "price_changes",
    "cheapest_daily",
    "cheapest_now",
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


def _offer_column_ddl(f: pa.Field) -> str:
    return f"{f.name} {_DUCK_TYPES[f.type]}{'' if f.nullable else ' NOT NULL'}"


def _offers_ddl() -> str:
    cols = ",\n    ".join(_offer_column_ddl(f) for f in OFFER_SCHEMA)
    return f"CREATE TABLE IF NOT EXISTS offers (\n    {cols}\n)"


_TABLES_DDL = (
    _offers_ddl(),
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
    # GPU-hour is stored here or in offer_points: it is price_per_hour / gpu_count (how the
    # contract derives it), computed by the views; stored, those full-precision quotients
    # were a third of offer_points on disk.
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
    # One row per distinct (offer, snapshot_date, price) with the previous observation of the
    # same offer in (snapshot_date, price_per_hour) order: prev_date (the same day for a
    # same-day duplicate at another price; null for the first) and old_price_per_hour (only
    # when the price differs from the previous one: mostly null, so nearly free on disk).
    """
    CREATE TABLE IF NOT EXISTS offer_points (
        snapshot_date DATE NOT NULL,
        provider VARCHAR NOT NULL,
        gpu_model VARCHAR NOT NULL,
        offer_no INTEGER NOT NULL,
        price_per_hour DOUBLE NOT NULL,
        prev_date DATE,
        old_price_per_hour DOUBLE
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

# The identity columns of an offer (variant is derived from extra, see _OBS_SQL).
_IDENTITY = ("provider", "sku", "region", "gpu_model", "gpu_count", "pricing_model",
             "commitment_months", "effective_from", "currency", "variant")
_ID_COLS = ", ".join(_IDENTITY)
_ID_MATCH = " AND ".join(f"i.{c} IS NOT DISTINCT FROM n.{c}" for c in _IDENTITY)

# Observations of offers rows: identity (variant built from the extra keys that tell two rows
# of one sku apart), one row per distinct (identity, date, price). {where} is our own constant
# text; values are parameters.
_OBS_SQL = f"""
    SELECT DISTINCT {_ID_COLS}, snapshot_date, price_per_hour
    FROM (
        SELECT *, coalesce(concat_ws('|', v[1], v[2], v[3]), '') AS variant
        FROM (
            SELECT *, json_extract_string(
                extra, ['$.offer_key', '$.source', '$.provider_term']) AS v
            FROM offers {{where}}
        )
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
    FROM (SELECT DISTINCT {_ID_COLS} FROM _obs) AS n
    WHERE NOT EXISTS (SELECT 1 FROM offer_ids AS i WHERE {_ID_MATCH})
"""  # noqa: S608 (identifiers are our constants)


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


def _migrate_offers(con: duckdb.DuckDBPyConnection) -> None:
    """Columns appended to the contract after a warehouse was created are added as nullable."""
    have = {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?",
            ["offers"],
        ).fetchall()
    }
    for f in OFFER_SCHEMA:
        if f.name not in have:
            # Identifiers and types come from the frozen schema, never from data.
            con.execute(f"ALTER TABLE offers ADD COLUMN {f.name} {_DUCK_TYPES[f.type]}")


# Columns the offer-history tables had before the price per GPU-hour was derived at query time.
_DROPPED = (("offer_points", "price_per_gpu_hour"), ("offer_points", "old_price_per_gpu_hour"),
            ("offer_ids", "last_price_per_gpu_hour"))


def _migrate_points(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the stored prices per GPU-hour of a warehouse created before they were derived."""
    for table, column in _DROPPED:
        if con.execute(
            "SELECT count(*) FROM information_schema.columns "
            "WHERE table_name = ? AND column_name = ?", [table, column]
        ).fetchone()[0]:
            # Both names are our constants above.
            con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")


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
    """Create the tables if missing, refresh gpu_models from gpus.csv and (re)create the views.
    Safe to call on every start."""
    # Registered outside the transaction: unregistering inside an aborted one would fail and
    # hide the real error.
    with _registered(con, _gpu_models_table()) as name, transaction(con):
        for ddl in _TABLES_DDL:
            con.execute(ddl)
        _migrate_offers(con)
        _migrate_points(con)
        _migrate_fx_rates(con)
        # A warehouse from before the offer-history tables: derive them once from offers.
        if con.execute("SELECT (SELECT count(*) FROM snapshot_dates) = 0 "
                       "AND EXISTS (SELECT 1 FROM offers)").fetchone()[0]:
            _rebuild_points(con)
        con.execute(f"CREATE OR REPLACE TABLE gpu_models AS SELECT * FROM {name}")  # noqa: S608
        refresh_views(con)


def _insert_offers(
    con: duckdb.DuckDBPyConnection, snapshot_date: dt.date, provider: str, table: pa.Table
) -> int:
    """Delete then insert one (snapshot_date, provider); the caller holds the transaction."""
    table = conform_table(table)
    if table.num_rows:
        for name, expected in (("snapshot_date", snapshot_date), ("provider", provider)):
            col = table.column(name)
            wrong = pc.sum(pc.not_equal(col, pa.scalar(expected, type=col.type))).as_py() or 0
            if wrong:
                raise ContractError(
                    f"{provider} {snapshot_date}: {wrong} rows carry another {name}"
                )
    con.execute(
        "DELETE FROM offers WHERE snapshot_date = ? AND provider = ?", [snapshot_date, provider]
    )
    # Straight from Arrow, positionally: conform_table put the columns in the frozen order,
    # which is the table's order (new contract columns are appended to both). NOT NULL
    # constraints on the table reject rows that break the contract.
    # Sorted so that each column's runs of equal values (model, sku, region, prices) compress:
    # parsers emit rows in page order, which interleaves them.
    table = table.sort_by([(c, "ascending") for c in ("gpu_model", "pricing_model", "sku",
                                                      "region", "price_per_hour")])
    con.from_arrow(table).insert_into("offers")
    _maintain_points(con, snapshot_date, provider)
    return table.num_rows


def _run(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
         ) -> duckdb.DuckDBPyConnection:
    # DuckDB refuses named parameters a statement does not use: pass only those it names.
    used = set(re.findall(r"\$(\w+)", sql))
    return con.execute(sql, {k: v for k, v in (params or {}).items() if k in used} or None)


def _maintain_points(con: duckdb.DuckDBPyConnection, day: dt.date, provider: str) -> None:
    """Bring offer_ids / offer_points / snapshot_dates in step with the offers of (day,
    provider), which the caller has just replaced inside its transaction.

    Affected offers are those observed on (day, provider) before or after the load. Their new
    points on `day` take as previous observation the latest point before `day`; the first point
    after `day` of each affected offer gets its previous observation recomputed (a reload or a
    new snapshot in the middle of history). When no affected offer has a point on or after
    `day` (the nightly append) the previous observation is each offer's stored last_*, and no
    scan of offer_points is needed.
    """
    p = {"d": day, "p": provider}
    _run(con, "CREATE OR REPLACE TEMP TABLE _obs AS "
                + _OBS_SQL.format(where="WHERE snapshot_date = $d AND provider = $p"), p)
    _run(con, _NEW_IDS_SQL)
    _run(con, f"""
        CREATE OR REPLACE TEMP TABLE _new AS
        SELECT i.offer_no, n.gpu_model, n.price_per_hour
        FROM _obs AS n JOIN offer_ids AS i ON {_ID_MATCH}
    """)  # noqa: S608 (constant text)
    _run(con, """
        CREATE OR REPLACE TEMP TABLE _aff AS
        SELECT offer_no FROM offer_points WHERE snapshot_date = $d AND provider = $p
        UNION SELECT offer_no FROM _new
    """, p)
    _run(con, "DELETE FROM offer_points WHERE snapshot_date = $d AND provider = $p", p)
    _run(con, "DELETE FROM snapshot_dates WHERE snapshot_date = $d AND provider = $p", p)
    _run(con, "INSERT INTO snapshot_dates SELECT $p, $d WHERE EXISTS (SELECT 1 FROM _new)", p)
    general = _run(con, """
        SELECT count(*) FROM offer_ids
        WHERE offer_no IN (SELECT offer_no FROM _aff) AND last_date >= $d
    """, p).fetchone()[0] > 0
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
    # the latest earlier point. Rows sorted by model and offer so each column compresses well.
    _run(con, """
        INSERT INTO offer_points
        SELECT $d, $p, gpu_model, offer_no, price_per_hour, prev_date,
               CASE WHEN prev_p <> price_per_hour THEN prev_p END
        FROM (
            SELECT n.*,
                   CASE WHEN n.k = 1 THEN b.d ELSE $d END AS prev_date,
                   CASE WHEN n.k = 1 THEN b.p ELSE n.lag_p END AS prev_p
            FROM (
                SELECT *,
                       row_number() OVER w AS k,
                       lag(price_per_hour) OVER w AS lag_p
                FROM _new
                WINDOW w AS (PARTITION BY offer_no ORDER BY price_per_hour)
            ) AS n
            LEFT JOIN _base AS b USING (offer_no)
        )
        ORDER BY gpu_model, offer_no, price_per_hour
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
                          SELECT offer_no, $d, price_per_hour FROM _new)
                    GROUP BY offer_no
                ) AS u USING (offer_no)
            ) AS t
            WHERE o.provider = $p AND o.offer_no = t.offer_no AND o.snapshot_date = t.nd
              AND o.price_per_hour = t.np
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
            FROM (SELECT offer_no, max(price_per_hour) AS p FROM _new GROUP BY offer_no) AS t
            WHERE i.offer_no = t.offer_no
        """, p)
    for tmp in ("_obs", "_new", "_aff", "_base"):
        _run(con, f"DROP TABLE {tmp}")


def rebuild_offer_points(con: duckdb.DuckDBPyConnection) -> None:
    """Recompute offer_ids, offer_points and snapshot_dates from the whole offers table in one
    transaction (a warehouse created before these tables existed; also the reference the tests
    compare incremental loads with). Offer numbers are given afresh."""
    with transaction(con):
        _rebuild_points(con)


def _rebuild_points(con: duckdb.DuckDBPyConnection) -> None:
    for table in ("offer_points", "offer_ids", "snapshot_dates"):
        con.execute(f"DELETE FROM {table}")  # noqa: S608 (our table names)
    con.execute("INSERT INTO snapshot_dates SELECT DISTINCT provider, snapshot_date FROM offers")
    con.execute("CREATE OR REPLACE TEMP TABLE _obs AS " + _OBS_SQL.format(where=""))
    con.execute(_NEW_IDS_SQL)
    con.execute(f"""
        INSERT INTO offer_points
        SELECT snapshot_date, provider, gpu_model, offer_no, price_per_hour, prev_date,
               CASE WHEN prev_p <> price_per_hour THEN prev_p END
        FROM (
            SELECT n.snapshot_date, n.provider, n.gpu_model, i.offer_no, n.price_per_hour,
                   lag(n.snapshot_date) OVER w AS prev_date,
                   lag(n.price_per_hour) OVER w AS prev_p
            FROM _obs AS n JOIN offer_ids AS i ON {_ID_MATCH}
            WINDOW w AS (PARTITION BY i.offer_no ORDER BY n.snapshot_date, n.price_per_hour)
        )
        ORDER BY snapshot_date, provider, gpu_model, offer_no, price_per_hour
    """)  # noqa: S608 (constant text)
    con.execute("""
        UPDATE offer_ids AS i
        SET last_date = t.m.d, last_price_per_hour = t.m.p
        FROM (
            SELECT offer_no, max({'d': snapshot_date, 'p': price_per_hour}) AS m
            FROM offer_points GROUP BY offer_no
        ) AS t
        WHERE i.offer_no = t.offer_no
    """)
    con.execute("DROP TABLE _obs")


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
