"""The nightly Prefect flow: for every provider crawl (own process) → parse → check → store, then
load everything into DuckDB and write the run summary.

Import this module only after Prefect's environment is set (gpuprices.flows.config.prefect_env):
Prefect reads PREFECT_HOME when it is imported.
"""

from __future__ import annotations

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.ops import run_journal
from gpuprices.flows.pipeline import live, progress
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.results import DayResult


@task(name="crawl-parse-check", retries=1, retry_delay_seconds=30, cache_policy=NO_CACHE)
def provider_task(settings: Settings, provider: str, replay: str | None) -> list[DayResult]:
    """One provider end to end up to the lake (live.provider_days)."""
    return live.provider_days(settings, provider, replay)


@task(name="ecb-rates", retries=2, retry_delay_seconds=60, cache_policy=NO_CACHE)
def fx_task(settings: Settings) -> str | None:
    """Today's ECB rates into the archive; the load step puts them in fx_rates."""
    return pipeline.fetch_fx_live(settings)


@task(name="load", cache_policy=NO_CACHE)
def load_task(settings: Settings, results: list[DayResult], run_id: str) -> list[DayResult]:
    """Load and record the night; returns its results with the lake partitions of earlier
    nights it caught up."""
    loading.load(settings, results, run_id, on_day=progress.loaded)
    return results


@flow(name="gpuprices-nightly", log_prints=False)
def nightly_flow(settings: Settings, providers: list[str], replay: str | None = None,
                 run_id: str | None = None) -> list[DayResult]:
    run_id = run_id or pipeline.new_run_id()
    run_journal.begin(settings, run_id, providers)  # recorded as started before any work
    fx_future = fx_task.submit(settings) if replay is None else None
    futures = [provider_task.submit(settings, p, replay) for p in providers]
    results: list[DayResult] = []
    for provider, fut in zip(providers, futures, strict=True):
        try:
            results.extend(fut.result())
        except Exception as exc:  # a provider that crashed never stops the others
            results.append(DayResult(provider=provider, snapshot_date=None, status="failed",
                                     errors=[f"{provider}: {exc}"]))
    if fx_future is not None:
        problem = fx_future.result()
        if problem:
            print(f"warning: {problem}")
    return load_task(settings, results, run_id)
