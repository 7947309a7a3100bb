"""The tables written beside the offers store: `fx_rates` (ECB reference rates), `runs` (each
provider's outcome per nightly run), `run_log` (when each run started and finished) and
`providers` (the registry's declarations)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

import duckdb
import pyarrow as pa

from gpuprices.warehouse.connection import registered, transaction
from gpuprices.warehouse.contract import conform_to
from gpuprices.warehouse.store import as_date
from gpuprices.warehouse.tables import RUN_STATUSES

_FX_SCHEMA = pa.schema(
    [
        pa.field("date", pa.date32(), nullable=False),
        pa.field("currency", pa.string(), nullable=False),
        pa.field("rate_per_eur", pa.float64(), nullable=False),
        pa.field("source", pa.string()),
    ]
)


def load_fx_rates(con: duckdb.DuckDBPyConnection, rates: pa.Table) -> int:
    """Insert or replace FX rates (columns date, currency, rate_per_eur, source; EUR based:
    units of currency per euro) in one transaction. Returns the number of rows given. Raises
    ValueError (and changes nothing) when `rates` holds one (date, currency) twice."""
    table = conform_to(rates, _FX_SCHEMA)
    with registered(con, table) as name, transaction(con):
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
    day = None if snapshot_date is None else as_date(snapshot_date)
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


_PROVIDER_COLUMNS = ("provider", "name", "kind", "supply")


def load_providers(con: duckdb.DuckDBPyConnection, rows: Iterable[Mapping[str, Any]]) -> int:
    """Replace the `providers` table with `rows` (provider, name, kind, supply; from the
    provider registry, which flows/ reads for the warehouse) in one transaction. Returns the
    number of rows. Raises ValueError (and changes nothing) when a provider is given twice."""
    data = [tuple(r.get(c) for c in _PROVIDER_COLUMNS) for r in rows]
    ids = [d[0] for d in data]
    if len(set(ids)) < len(ids):
        raise ValueError(f"providers given twice: {sorted({i for i in ids if ids.count(i) > 1})}")
    with transaction(con):
        con.execute("DELETE FROM providers")
        if data:
            con.executemany("INSERT INTO providers (provider, name, kind, supply) "
                            "VALUES (?, ?, ?, ?)", data)
    return len(data)
def open_run(con: duckdb.DuckDBPyConnection, run_id: str, started_at: dt.datetime,
             providers: list[str]) -> None:
    """Record that a run started (once: a run already recorded keeps its first start), still
    open until close_run. An open run that is not the one loading now was interrupted."""
    with transaction(con):
        con.execute(
            "INSERT INTO run_log (run_id, started_at, finished_at, providers) "
            "SELECT ?, ?, NULL, ? WHERE NOT EXISTS (SELECT 1 FROM run_log WHERE run_id = ?)",
            [run_id, started_at, ",".join(providers), run_id])


def close_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Record that a run finished its work: every provider-day it loaded is recorded."""
    with transaction(con):
        con.execute("UPDATE run_log SET finished_at = now() WHERE run_id = ?", [run_id])
