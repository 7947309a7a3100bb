"""The team mode's Prefect flows, run by workers of a work pool (flows/team/deploy.py registers
them, `gpuprices worker` runs them):

- `gpuprices-crawl/<provider>`: one provider crawled (or replayed), parsed, checked and
  written to the lake; never the warehouse;
- `gpuprices-load/load`: every lake partition the warehouse does not hold yet, loaded as one
  run, and the run summary; the only writer of the warehouse.

The locks hold across machines because they are Prefect global concurrency limits, kept by the
server, not files: `gpuprices-crawl-<provider>` (1 slot) around a crawl, `gpuprices-warehouse`
(1 slot) around the load. A slot is a lease the holder renews; a worker that dies holding one
frees it when the lease runs out (LEASE_S). The load also takes the data folder's run lock
(flows/ops/lock.py), so it never overlaps a one-machine command on the same folder.

Parameters are plain strings so any pool type (process, Docker, Kubernetes) and the UI can
start them; an empty data_dir / archive_root means the worker's own GPUPRICES_HOME /
GPUPRICES_ARCHIVE (each machine says where its data lives), an empty replay a live crawl.

Import this module only after Prefect's environment is set (gpuprices.flows.config.prefect_env).
"""

from __future__ import annotations

import os
import socket

import typer
from prefect import flow
from prefect.concurrency.sync import concurrency

from gpuprices.flows.config import Settings, settings_from
from gpuprices.flows.ops.lock import run_lock
from gpuprices.flows.pipeline import live
from gpuprices.flows.team import steps as team_steps

WAREHOUSE_LIMIT = "gpuprices-warehouse"
CRAWL_LIMIT_PREFIX = "gpuprices-crawl-"
LEASE_S = 300.0  # a dead holder's slot is free again after at most this long
# A crawl whose provider is being crawled elsewhere waits this long, then fails (and is tried
# once more by the flow's retry); a load waits for the one before it for up to an hour.
CRAWL_WAIT_S = 120.0
LOAD_WAIT_S = 3600.0


def crawl_limit(provider: str) -> str:
    return f"{CRAWL_LIMIT_PREFIX}{provider}"


def _settings(data_dir: str, archive_root: str) -> Settings:
    return settings_from(data_dir or None, archive_root or None).ensure()


def who() -> dict[str, str]:
    """Where a flow run ran: the worker that started it (Prefect sets PREFECT__WORKER_NAME in
    the run's environment), the host and the process."""
    return {"worker": os.environ.get("PREFECT__WORKER_NAME", ""), "host": socket.gethostname(),
            "pid": str(os.getpid())}


@flow(name="gpuprices-crawl", retries=1, retry_delay_seconds=60, log_prints=True)
def crawl_provider(provider: str, data_dir: str = "", archive_root: str = "",
                   replay: str = "") -> dict[str, str]:
    """Crawl one provider (or replay its archive: a date YYYY-MM-DD or 'all') up to the lake.
    Fails (red in the UI) when a provider-day wrote nothing; the load serves its last good
    snapshot meanwhile."""
    settings = _settings(data_dir, archive_root)
    with concurrency(crawl_limit(provider), occupy=1, timeout_seconds=CRAWL_WAIT_S,
                     lease_duration=LEASE_S, strict=True):
        results = live.provider_days(settings, provider, replay or None)
    for line in team_steps.crawl_lines(results):
        print(line)
    failure = team_steps.crawl_failure(results)
    if failure:
        raise RuntimeError(failure)
    return {"provider": provider, "days": str(len(results)),
            "rows": str(sum(r.rows for r in results)), **who()}


@flow(name="gpuprices-load", log_prints=True)
def load_lake(data_dir: str = "", archive_root: str = "") -> dict[str, str]:
    """Load every lake partition not yet in the warehouse, as one run with its summary."""
    settings = _settings(data_dir, archive_root)
    with concurrency(WAREHOUSE_LIMIT, occupy=1, timeout_seconds=LOAD_WAIT_S,
                     lease_duration=LEASE_S, strict=True):
        try:
            with run_lock(settings):
                summary = team_steps.load_pending(settings)
        except typer.Exit:  # run_lock: a one-machine command holds this data folder
            raise RuntimeError(f"another gpuprices run holds {settings.data_dir}'s run lock; "
                               f"the next load picks up what is pending") from None
    if summary is None:
        print("nothing to load: the warehouse holds every lake partition")
    return {"summary": str(summary or ""), **who()}
