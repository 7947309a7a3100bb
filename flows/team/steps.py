"""The team mode's steps as plain functions (flows/team/flows.py runs them as Prefect flows on
workers; tests call them directly): what a crawl's log says and when it failed (the crawl itself
is live.provider_days, as in the nightly flow), and the load of every lake partition the
warehouse does not hold yet.

In the team mode the crawls and the load are separate flow runs, often on separate machines:
a crawl writes only its lake partitions (never the warehouse), and the load, the only writer of
the warehouse, picks up whatever is pending (warehouse/lake_sync.py). So a crawl that finishes
after a load is loaded by the next one, and nothing is loaded twice.
"""

from __future__ import annotations

from pathlib import Path

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import load_steps
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.warehouse import lake_sync


def crawl_lines(results: list[DayResult]) -> list[str]:
    """What the crawl's log says of each provider-day."""
    return [f"{r.provider} {r.snapshot_date or '-'}: {r.status}, {r.rows} rows"
            + (f", {r.quarantined} quarantined" if r.quarantined else "")
            + (f" ({r.message})" if r.errors else "") for r in results]


def crawl_failure(results: list[DayResult]) -> str | None:
    """Why the crawl counts as failed (a provider-day that wrote nothing), else None."""
    failed = [r for r in results if r.status == "failed"]
    return "; ".join(r.message or f"{r.provider}: failed" for r in failed) or None


def pending(settings: Settings) -> list[tuple]:
    """The lake partitions the warehouse lacks or holds an older file of."""
    con = load_steps.open_warehouse(settings)
    try:
        return lake_sync.pending(con, settings.lake_root)
    finally:
        load_steps.close_quietly(con)


def load_pending(settings: Settings, run_id: str | None = None) -> Path | None:
    """Load every pending lake partition as one run (recorded in `runs`, summary written);
    None, and no run recorded, when nothing is pending. The caller holds the warehouse lock."""
    if not pending(settings):
        return None
    return loading.load(settings, [], run_id or pipeline.new_run_id())
