"""The nightly Prefect flow: for every provider crawl (own process) → parse → check → store, then
load everything into DuckDB and write the run summary.

Import this module only after Prefect's environment is set (gpuprices.flows.config.prefect_env):
Prefect reads PREFECT_HOME when it is imported.

Without a PREFECT_API_URL, the flow's first call to the API starts Prefect's temporary server
(a uvicorn child process: 10-25 s on 2 busy cores, bench/nightly_startup.py) and no task runs
before it answers. `head_start` begins every provider's work in threads before the flow is
called, so that wait overlaps the crawl or replay instead of preceding it; each provider's task
then takes the result its head start left (a failed one is run again by the task's retry, as
before).
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.ops import run_journal
from gpuprices.flows.pipeline import live, progress
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.results import DayResult

HEAD_START_ENV = "GPUPRICES_HEAD_START"  # "off": no head start (the bench's "before")

# (run id, provider) -> that provider's work, begun before the flow (head_start)
_STARTED: dict[tuple[str, str], Future] = {}


def head_start(settings: Settings, providers: list[str], replay: str | None,
               run_id: str) -> ThreadPoolExecutor:
    """Record the run as started and begin each provider's work now, in threads, while the
    flow's Prefect API server starts. Use as a context manager around the flow call (it waits
    for the work on leaving). With GPUPRICES_HEAD_START=off nothing is begun here."""
    # As many threads as Prefect's default task runner would use (ThreadPoolExecutor default).
    pool = ThreadPoolExecutor(max_workers=min(32, (os.cpu_count() or 1) + 4),
                              thread_name_prefix="head-start")
    if os.environ.get(HEAD_START_ENV, "").strip().lower() == "off":
        return pool
    run_journal.begin(settings, run_id, providers)
    for p in providers:
        _STARTED[(run_id, p)] = pool.submit(live.provider_days, settings, p, replay)
    return pool


@task(name="crawl-parse-check", retries=1, retry_delay_seconds=30, cache_policy=NO_CACHE)
def provider_task(settings: Settings, provider: str, replay: str | None,
                  run_id: str = "") -> list[DayResult]:
    """One provider end to end up to the lake (live.provider_days), or the result of its head
    start; a retry runs it afresh."""
    started = _STARTED.pop((run_id, provider), None)
    if started is not None:
        return started.result()
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
    if not any(key[0] == run_id for key in _STARTED):  # head_start recorded it already
        run_journal.begin(settings, run_id, providers)  # recorded as started before any work
    fx_future = fx_task.submit(settings) if replay is None else None
    futures = [provider_task.submit(settings, p, replay, run_id) for p in providers]
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
