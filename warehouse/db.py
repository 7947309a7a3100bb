"""The DuckDB warehouse: tables `offers`, `gpu_models`, `fx_rates`, `runs` and the views in
warehouse/sql/.

Loads are idempotent per (snapshot_date, provider): the pair is deleted and inserted again in one
transaction, so a rerun replaces and a failure half way leaves the warehouse as it was. Arrow
tables go to DuckDB as registered relations (no Python loop over rows). Values only ever reach
SQL as parameters.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from warehouse import gpus, lake
from warehouse.contract import OFFER_SCHEMA, ContractError, conform_table

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
        date DATE NOT NULL,
        currency VARCHAR NOT NULL,
        -- ECB reference rates are EUR based: units of `currency` for one euro.
        rate_per_eur DOUBLE NOT NULL CHECK (rate_per_eur > 0),
        source VARCHAR,
        PRIMARY KEY (date, currency)
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
)


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
    con.from_arrow(table).insert_into("offers")
    return table.num_rows


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
    units of currency per euro) in one transaction. Returns the number of rows given."""
    columns = []
    for f in _FX_SCHEMA:
        if f.name in rates.column_names:
            columns.append(rates.column(f.name).cast(f.type))
        else:
            columns.append(pa.nulls(rates.num_rows, type=f.type))
    table = pa.Table.from_arrays(columns, schema=_FX_SCHEMA)
    with _registered(con, table) as name, transaction(con):
        cols = "date, currency, rate_per_eur, source"
        picked = "date, upper(currency), rate_per_eur, source"
        # `name` is our own generated relation name, never data.
        con.execute(f"INSERT OR REPLACE INTO fx_rates ({cols}) SELECT {picked} FROM {name}")  # noqa: S608
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
