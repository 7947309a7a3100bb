"""A run's record of itself: written as started before its work, closed after it.

`begin` writes <data_dir>/runs/<run_id>.open (the run's id, start and providers) before the
crawl, without touching the warehouse (a reader may hold it then). The load folds every such
journal into `run_log` (`open_in_warehouse`): this run's start, and the start of any run that
left its journal behind because it was killed or crashed before its end. `close` marks the run
finished once every provider-day is recorded, and removes its journal. A `run_log` row never
closed is an interrupted run (warehouse/sql/staging/interrupted_runs.sql): the status table and
the report's data health say so, instead of showing its rows as a complete run.

`begin` also removes what an earlier run that died mid-write left: hidden `*.part` files of
the run summaries, the lake and the compacted warehouse.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path

import duckdb

from gpuprices.flows.config import Settings
from gpuprices.warehouse import db, objstore

JOURNAL_SUFFIX = ".open"


def journal_path(settings: Settings, run_id: str) -> Path:
    return settings.runs_dir / f"{run_id}{JOURNAL_SUFFIX}"


def sweep_leftovers(settings: Settings) -> list[Path]:
    """Remove the hidden `.….part` files a killed or disk-full run left (summaries, lake
    partitions, a compaction copy and its WAL). Only under the run lock: no writer is at work."""
    # A lake on object storage has none: its partitions are written by single PUTs.
    lake_parts = [] if objstore.is_remote(settings.lake_root) else \
        settings.lake_root.rglob(".*.part")
    found = [*settings.runs_dir.glob(".*.part"), *lake_parts,
             *settings.data_dir.glob(f".{settings.db_path.name}.*.part"),
             *settings.data_dir.glob(f".{settings.db_path.name}.*.part.wal")]
    removed = []
    for path in found:
        try:
            path.unlink()
            removed.append(path)
        except OSError:
            continue  # gone already, or not ours to remove: harmless
    return removed


def begin(settings: Settings, run_id: str, providers: list[str]) -> None:
    """Record that the run starts (its journal), after sweeping earlier runs' leftovers. A
    journal that cannot be written (a full disk) is said and the run goes on: its load records
    the start instead."""
    sweep_leftovers(settings)
    path = journal_path(settings, run_id)
    tmp = path.with_name(f".{path.name}.part")
    record = {"run_id": run_id, "started_at": dt.datetime.now(dt.UTC).isoformat(),
              "providers": providers}
    try:
        settings.runs_dir.mkdir(parents=True, exist_ok=True, mode=0o755)
        tmp.write_text(json.dumps(record))
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        print(f"warning: could not record the start of run {run_id} in {path}: "
              f"{exc.strerror or exc}", file=sys.stderr)


def _journals(settings: Settings) -> list[tuple[Path, dict]]:
    out = []
    for path in sorted(settings.runs_dir.glob(f"*{JOURNAL_SUFFIX}")):
        try:
            rec = json.loads(path.read_text())
            out.append((path, {"run_id": str(rec["run_id"]),
                               "started_at": dt.datetime.fromisoformat(rec["started_at"]),
                               "providers": [str(p) for p in rec["providers"]]}))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # cut short by a crash while being written: nothing to learn from it
    return out


def open_in_warehouse(con: duckdb.DuckDBPyConnection, settings: Settings, run_id: str,
                      providers: list[str], started: dt.datetime) -> list[str]:
    """Record this run as started in run_log (from its journal, else as of `started`) and
    every other journal's run as started and never finished; returns those runs' ids. The
    caller holds the run lock, so no other run is at work."""
    interrupted = []
    for path, rec in _journals(settings):
        if rec["run_id"] == run_id:
            started = rec["started_at"]
            continue
        db.open_run(con, rec["run_id"], rec["started_at"], rec["providers"])
        path.unlink(missing_ok=True)
        interrupted.append(rec["run_id"])
    db.open_run(con, run_id, started, providers)
    return interrupted


def close(con: duckdb.DuckDBPyConnection, settings: Settings, run_id: str) -> None:
    """Mark the run finished in run_log, then drop its journal."""
    db.close_run(con, run_id)
    journal_path(settings, run_id).unlink(missing_ok=True)

