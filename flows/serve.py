"""Two scheduled Prefect deployments, served from this process (`gpuprices serve`):

- `gpuprices-scheduled-nightly/nightly`: the nightly crawl of every provider (default 02:00
  UTC), then today's ECB rates into the archive and fx_rates;
- `gpuprices-scheduled-weekly/weekly`: the weekly report (default Monday 06:00 UTC).

Each deployment runs at most one flow run at a time (a deployment concurrency limit of 1; a run
due while the previous one is still going is cancelled rather than queued behind it, so a slow
night never snowballs). Parameters are plain strings so the deployments can also be started
from the Prefect UI or `prefect deployment run`.

Import this module only after Prefect's environment is set (gpuprices.flows.config.prefect_env):
Prefect reads PREFECT_HOME when it is imported. `gpuprices serve` (flows/cli/serve.py) does that.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy
from prefect.deployments.runner import RunnerDeployment
from prefect.exceptions import TerminationSignal
from prefect.runner import Runner
from prefect.schedules import Cron

from gpuprices.flows.config import Settings, default_currency, settings_from
from gpuprices.flows.nightly import nightly_flow
from gpuprices.flows.ops.lock import run_lock
from gpuprices.flows.ops.service import run_until_signal
from gpuprices.flows.schedules import NIGHTLY_CRON, TIMEZONE, WEEKLY_CRON
from gpuprices.flows.weekly import weekly_flow
from gpuprices.warehouse.contract import PROVIDERS

ONE_AT_A_TIME = ConcurrencyLimitConfig(
    limit=1, collision_strategy=ConcurrencyLimitStrategy.CANCEL_NEW)


@flow(name="gpuprices-scheduled-nightly", log_prints=False)
def scheduled_nightly(data_dir: str, archive_root: str, providers: list[str] | None = None
                      ) -> dict[str, str]:
    """The nightly flow (crawls and ECB rates) under the run lock of its data folder. Fails (so the
    UI shows red) when a provider failed; the others are loaded all the same."""
    settings = settings_from(data_dir, archive_root).ensure()
    with run_lock(settings):
        # Live: the flow fetches today's ECB rates beside the crawls and loads them.
        results = nightly_flow(settings, list(providers or PROVIDERS), None)
    status = {r.provider: r.status for r in results}
    failed = sorted(p for p, s in status.items() if s == "failed")
    if failed:
        raise RuntimeError(f"providers failed tonight: {', '.join(failed)}")
    return status


@flow(name="gpuprices-scheduled-weekly", log_prints=False)
def scheduled_weekly(data_dir: str, archive_root: str, currency: str | None = None,
                     workloads_file: str | None = None) -> str:
    settings = settings_from(data_dir, archive_root).ensure()
    html = weekly_flow(settings, None, currency,
                       Path(workloads_file) if workloads_file else None, fetch_fx=True)
    return str(html)


def build_deployments(settings: Settings, nightly_cron: str = NIGHTLY_CRON,
                      weekly_cron: str = WEEKLY_CRON, currency: str | None = None,
                      workloads: Path | None = None,
                      work_pool_name: str | None = None) -> list[RunnerDeployment]:
    """The two deployments (not yet registered: `serve_deployments` does that)."""
    common = dict(work_pool_name=work_pool_name) if work_pool_name else {}
    nightly = scheduled_nightly.to_deployment(
        name="nightly",
        schedules=[Cron(nightly_cron, timezone=TIMEZONE)],
        concurrency_limit=ONE_AT_A_TIME,
        parameters={"data_dir": str(settings.data_dir),
                    "archive_root": str(settings.archive_root)},
        description="Crawl, parse, check and load every provider; then the ECB rates.",
        tags=["gpuprices", "nightly"],
        **common,
    )
    weekly = scheduled_weekly.to_deployment(
        name="weekly",
        schedules=[Cron(weekly_cron, timezone=TIMEZONE)],
        concurrency_limit=ONE_AT_A_TIME,
        parameters={"data_dir": str(settings.data_dir),
                    "archive_root": str(settings.archive_root),
                    "currency": default_currency(currency),
                    "workloads_file": str(workloads) if workloads else None},
        description="The weekly procurement report (HTML, Markdown, CSV).",
        tags=["gpuprices", "weekly"],
        **common,
    )
    return [nightly, weekly]


def describe(deployments: list[RunnerDeployment]) -> list[str]:
    """One line per deployment: its full name, schedules and work pool (none: served here)."""
    lines = []
    for d in deployments:
        when = ", ".join(f"cron '{s.schedule.cron}' {s.schedule.timezone}"
                         for s in d.schedules if hasattr(s.schedule, "cron")) or "on demand"
        where = f"pool {d.work_pool_name}" if d.work_pool_name else "this process"
        lines.append(f"  {d.flow_name}/{d.name}: {when}; runs in {where}")
    return lines


def _leave_to_the_loop(*_args) -> None:
    """SIGTERM's Python-level handler does nothing: the event loop hears it (run_until_signal)."""


def serve_deployments(deployments: list[RunnerDeployment],
                      printer=print) -> None:  # pragma: no cover (tests/test_service_stop.py)
    """Register the deployments with the Prefect API, say which ones, and run their flows here
    until SIGTERM or Ctrl-C. Returns once the runner has stopped (its runs cancelled, its
    schedules paused) while the API is still up: the caller stops the server after."""
    runner = Runner(pause_on_shutdown=True)
    for d in deployments:
        runner.add_deployment(d)  # registers it on the API now (PREFECT_API_URL)
    printer(f"deployments registered and served ({len(deployments)}):")
    for line in describe(deployments):
        printer(line)
    # One stop path for SIGTERM and Ctrl-C: run_until_signal calls the runner's own stop
    # (astop: its runs cancelled, its schedules paused). The handler Runner.start installs for
    # SIGTERM would exit at once when the runner is not fully started.
    runner.handle_sigterm = _leave_to_the_loop
    try:
        run_until_signal(runner.start(), stop=lambda _task: runner.astop())
    except (KeyboardInterrupt, TerminationSignal):
        pass  # a second signal while stopping: the runner's clean-up was cut short
