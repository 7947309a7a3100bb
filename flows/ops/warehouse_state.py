"""Whether the warehouse has anything to read, and what to run when it has not.

The hint is a replay of the bundled snapshots, not a live run: it works offline, in about a
minute, on a fresh clone."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from gpuprices.flows.config import max_age_days
from gpuprices.reports.coverage import coverage
from gpuprices.warehouse import db

REPLAY_HINT = "run `gpuprices nightly --replay all` (it loads the bundled snapshots, offline)"


def replay_hint(data_dir: Path) -> str:
    """REPLAY_HINT for this data folder: the command names `--data-dir`, so that it fills the
    warehouse the user asked about, not the default one."""
    return (f"run `gpuprices nightly --replay all --data-dir {data_dir}` (it loads the bundled "
            "snapshots, offline)")


def warehouse_problem(db_path: Path) -> str | None:
    """Why the warehouse at `db_path` cannot answer a question about prices (missing, or
    holding no offers), with the command that fixes it; None when it holds offers or when it
    cannot be opened right now (the caller's own open then says why)."""
    if not db_path.exists():
        return f"no warehouse at {db_path}: {replay_hint(db_path.parent)}"
    try:
        con = db.connect(db_path, read_only=True)
    except duckdb.Error:
        return None
    try:
        empty = not con.execute("SELECT 1 FROM offers LIMIT 1").fetchall()
    except duckdb.CatalogException:  # a file made before the schema: nothing loaded yet
        empty = True
    finally:
        con.close()
    return (f"the warehouse at {db_path} holds no offers: {replay_hint(db_path.parent)}"
            if empty else None)


def age_limit(db_path: Path) -> int | None:
    """The age limit of "now" for a run's status: $GPUPRICES_MAX_AGE_DAYS, else the warehouse's
    own default (default_max_age_days()); None when neither can be read."""
    limit = max_age_days()
    if limit is not None:
        return limit
    try:
        con = db.connect(db_path, read_only=True)
    except duckdb.Error:
        return None
    try:
        return db.age_limit(con, None)
    except duckdb.Error:  # a warehouse made before the macro
        return None
    finally:
        con.close()


def last_good(con, day: dt.date) -> dict[str, dt.date]:
    """Each provider's latest loaded snapshot on or before `day` (the one it serves then)."""
    try:
        rows = con.execute("SELECT provider, max(snapshot_date) FROM provider_snapshots "
                           "WHERE snapshot_date <= ? GROUP BY provider", [day]).fetchall()
    except duckdb.Error:  # a warehouse made before the view: nothing to say
        return {}
    return dict(rows)


def last_good_on(db_path: Path, day: dt.date) -> dict[str, dt.date]:
    """last_good, opening the warehouse read-only ({} when it cannot be opened)."""
    if not db_path.exists():
        return {}
    try:
        con = db.connect(db_path, read_only=True)
    except duckdb.Error:
        return {}
    try:
        return last_good(con, day)
    finally:
        con.close()
def interrupted_runs(db_path: Path, days: int) -> list[dict]:
    """Runs started in the last `days` days (by the clock) that never finished
    (interrupted_runs), newest first; none when the warehouse cannot be read."""
    if not db_path.exists():
        return []
    try:
        con = db.connect(db_path, read_only=True)
    except duckdb.Error:
        return []
    try:
        rows = con.execute(
            "SELECT run_id, started_at, providers FROM interrupted_runs "
            "WHERE started_at >= now() - to_days(?) ORDER BY started_at DESC", [days]).fetchall()
    except duckdb.Error:  # a warehouse made before run_log
        return []
    finally:
        con.close()
    return [{"run_id": r, "started_at": s, "providers": p} for r, s, p in rows]


def coverage_line(db_path: Path) -> str | None:
    """The coverage sentence (reports/coverage.py) as of the warehouse's "today"
    (latest_snapshot.as_of, the day cheapest_now and stale_providers read), within the run's age
    limit; None when the warehouse holds nothing or cannot be read."""
    limit = age_limit(db_path)
    if limit is None:
        return None
    try:
        con = db.connect(db_path, read_only=True)
    except duckdb.Error:
        return None
    try:
        (day,) = con.execute("SELECT as_of FROM latest_snapshot").fetchone()
        return None if day is None else coverage(con, day, limit).line()
    except duckdb.Error:  # a warehouse made before provider_coverage
        return None
    finally:
        con.close()
