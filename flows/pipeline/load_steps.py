"""The steps of a run's load that keep a night whole (flows/pipeline/steps.py `load` runs them):
opening the warehouse though a reader holds it, loading a lake partition together with its
file state, recording a provider-day in `runs`, and catching up the partitions earlier runs
wrote to the lake but never loaded (the lake is the source of truth: warehouse/lake_sync.py).
"""

from __future__ import annotations

import datetime as dt
import os
import sys

import duckdb

from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.flows.redaction import redact
from gpuprices.warehouse import db, lake_sync, lock_wait

WAREHOUSE_WAIT_ENV = "GPUPRICES_WAREHOUSE_WAIT_S"
# Five minutes: a reader's query over a year of offers takes seconds; one still holding the
# warehouse after that is left running and this night's partitions wait for the next run.
DEFAULT_WAREHOUSE_WAIT_S = 300.0


def warehouse_wait_s() -> float:
    """How long a load waits for a warehouse another process holds ($GPUPRICES_WAREHOUSE_WAIT_S,
    default 300 s; 0: not at all)."""
    raw = os.environ.get(WAREHOUSE_WAIT_ENV, "").strip()
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_WAREHOUSE_WAIT_S
    except ValueError:
        return DEFAULT_WAREHOUSE_WAIT_S


def open_warehouse(settings: Settings) -> duckdb.DuckDBPyConnection:
    """The warehouse open for writing with its schema in place, after waiting (bounded) for a
    reader that holds it. Raises db.WarehouseBusy past the wait."""
    con = lock_wait.connect_when_free(
        settings.db_path, warehouse_wait_s(),
        on_wait=lambda m: print(f"waiting: {m}", file=sys.stderr))
    try:
        db.init_schema(con)
    except BaseException:
        con.close()
        raise
    return con


def load_day(settings: Settings, con: duckdb.DuckDBPyConnection, day: dt.date,
             provider: str) -> int:
    """Replace (day, provider) in the warehouse with its lake partition, recording the file
    state it was read in (one transaction). Returns the rows loaded."""
    table, stamp = lake_sync.read_stamped(settings.lake_root, day, provider)
    return lake_sync.load_stamped(con, day, provider, table, stamp)


def load_days(settings: Settings, con: duckdb.DuckDBPyConnection,
              keys: list[tuple[dt.date, str]]
              ) -> tuple[dict[tuple[dt.date, str], int], dict[tuple[dt.date, str], Exception]]:
    """Load the lake partitions of `keys` (in that order), each with its file state: in one
    bulk transaction when they append to the warehouse, else (or when that fails: a bad
    partition rolls the whole batch back) one transaction per provider-day, as load_day.
    Returns the rows loaded per provider-day, and the error of each one not loaded."""
    if len(keys) > 1:
        try:
            parts = []
            for day, provider in keys:  # a rewrite while reading shows next run
                table, stamp = lake_sync.read_stamped(settings.lake_root, day, provider)
                parts.append((day, provider, table, stamp))
            return lake_sync.append_stamped(con, parts), {}
        except Exception:  # noqa: S110 (each day is retried alone below, with its own error)
            pass
    loaded, failed = {}, {}
    for day, provider in keys:
        try:
            loaded[(day, provider)] = load_day(settings, con, day, provider)
        except Exception as exc:  # one transaction: nothing of this day was loaded
            failed[(day, provider)] = exc
    return loaded, failed


def record_day(con: duckdb.DuckDBPyConnection, run_id: str, r: DayResult,
               started: dt.datetime) -> None:
    """One provider-day in `runs`; a failed one says which snapshot the provider still serves."""
    message = None
    if r.status == "failed" or not r.rows:  # nothing loaded: the last good day serves
        row = con.execute("SELECT max(snapshot_date) FROM provider_snapshots "
                          "WHERE provider = ? AND snapshot_date <= ?",
                          [r.provider, r.as_of]).fetchall()
        r.stale_since = row[0][0] if row else None
        if r.stale_since is not None:
            message = (f"stale: serving the {r.stale_since} snapshot "
                       f"({r.stale_days} days old)")
    elif r.caught_up:
        message = "caught up: written to the lake by an earlier run, loaded by this one"
    db.record_run(
        con, run_id=run_id, provider=r.provider, snapshot_date=r.snapshot_date,
        status=r.status, rows=r.rows, quarantined=r.quarantined,
        error=r.message or None, message=message,
        started_at=started, finished_at=dt.datetime.now(dt.UTC),
    )


def catch_up(settings: Settings, con: duckdb.DuckDBPyConnection, run_id: str,
             started: dt.datetime, tried: set[tuple[dt.date | None, str]]) -> list[DayResult]:
    """Load every lake partition the warehouse lacks or holds an older file of (an earlier
    night's load that never happened), each recorded in `runs` as this run's. The (day,
    provider) pairs this run already `tried` are left to the next run: their outcome is this
    run's record of that day. Loaded together when they append (load_days)."""
    todo = [(day, provider) for day, provider, _path, _stamp
            in lake_sync.pending(con, settings.lake_root) if (day, provider) not in tried]
    loaded, failed = load_days(settings, con, todo)
    out = []
    for day, provider in todo:
        r = DayResult(provider=provider, snapshot_date=day, caught_up=True,
                      rows=loaded.get((day, provider), 0))
        if (day, provider) in failed:
            r.status = "failed"
            r.errors.append(redact(f"{provider}: catching up {day} from the lake "
                                          f"failed: {failed[(day, provider)]}"))
        record_day(con, run_id, r, started)
        out.append(r)
    return out


def close_quietly(con: duckdb.DuckDBPyConnection) -> None:
    """Close the warehouse; a close that fails (its checkpoint hit a full disk) is said, not
    raised: the committed transactions are in its write-ahead log."""
    try:
        con.close()
    except Exception as exc:
        print(redact(f"warning: closing the warehouse failed: {exc}"), file=sys.stderr)
