"""The end of every run: its provider-days loaded into DuckDB and recorded, the run journal
closed, the run summary written and alerts posted, the warehouse published. The nightly flow,
the command line and the team mode's load all finish through `load`."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb

from gpuprices.flows.config import Settings, max_age_days
from gpuprices.flows.ops import alerts, publishing, run_journal, warehouse_state, watching
from gpuprices.flows.ops.status import run_day
from gpuprices.flows.pipeline import load_steps, provider_classes, steps
from gpuprices.flows.pipeline.results import DayResult, not_run
from gpuprices.flows.redaction import redact
from gpuprices.spiders import registry
from gpuprices.warehouse import db


def load(settings: Settings, results: list[DayResult], run_id: str,
         on_day: Callable[[DayResult], None] | None = None) -> Path:
    """Load the good days into DuckDB (in one bulk transaction when they append, else one per
    provider-day: load_steps.load_days) and record every
    provider-day in `runs`, failures included. A failed day loads nothing: the provider's last
    good snapshot stays its latest (marked stale with its age). Then loads every lake partition
    an earlier run wrote but never loaded (appended to `results`, `caught_up`). The run is
    recorded as started in `run_log` before its loads and closed after them (run_journal).
    Writes the run summary to <data_dir>/runs/<run_id>.md, prints its path, sends the alert when a
    channel is set, evaluates the watch rules (flows/ops/watching.py) and returns the summary's
    path. `on_day` hears of each provider-day once it
    is loaded or recorded."""
    steps.owner_only_writes()
    for r in results:  # what is printed, recorded and posted carries no credential
        r.errors = [redact(e) for e in r.errors]
    started = dt.datetime.now(dt.UTC)
    try:  # waits, bounded, for a reader holding the warehouse
        con = load_steps.open_warehouse(settings)
        provider_classes.store(con)
    except Exception as exc:  # no warehouse (locked, disk full): still say so in the summary
        later = " (its lake partition is loaded by the next run)"
        for r in results:
            r.status, r.rows = "failed", 0
            r.errors.append(redact(f"{r.provider}: warehouse unavailable: {exc}"
                                + (later if r.snapshot_date else "")))
        return alerts.finish_run(settings, run_id, results)
    recorded, others = 0, []
    try:
        run_journal.open_in_warehouse(con, settings, run_id,
                                      sorted({r.provider for r in results}), started)
        todo = [(r.snapshot_date, r.provider) for r in results
                if r.status != "failed" and r.snapshot_date is not None and r.rows]
        _loaded, failed = load_steps.load_days(settings, con, todo)
        for r in results:
            exc = failed.get((r.snapshot_date, r.provider)) if r.status != "failed" else None
            if exc is not None:  # one transaction: nothing of this day was loaded
                r.status, r.rows = "failed", 0
                r.errors.append(redact(
                    f"{r.provider}: loading {r.snapshot_date} into the warehouse failed: "
                    f"{exc}"))
            load_steps.record_day(con, run_id, r, started)
            recorded += 1
            if on_day is not None:
                on_day(r)
        tried = {(r.snapshot_date, r.provider) for r in results}
        results.extend(load_steps.catch_up(settings, con, run_id, started, tried))
        recorded = len(results)
        steps.load_fx(settings, con)
        publishing.publish_index(settings, con, run_id)  # after the rates it converts with
        day = run_day(results)
        others = not_run(results, registry.ids(), warehouse_state.last_good(con, day), day,
                         db.age_limit(con, max_age_days()))
        run_journal.close(con, settings, run_id)
    except (duckdb.Error, OSError) as exc:  # the run cannot record itself (a full disk)
        problem = redact(f"the warehouse could not record run {run_id}: {exc}")
        print(f"error: {problem}", file=sys.stderr)
        for r in results[recorded:]:
            r.status, r.rows = "failed", 0
            r.errors.append(f"{r.provider}: not recorded: {problem}")
    finally:
        load_steps.close_quietly(con)
    publishing.after_load(settings)  # when $GPUPRICES_PUBLISH names a store
    path = alerts.finish_run(settings, run_id, results, others)
    for line, problem in watching.after_load(settings):  # the rules, on what was just loaded
        print(line, file=sys.stderr if problem else sys.stdout)
    return path
