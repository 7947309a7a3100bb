"""The weekly Prefect flow: fetch today's ECB rates into the archive, load every archived rate into
fx_rates, then write the weekly report.

Import this module only after Prefect's environment is set (gpuprices.flows.config.prefect_env).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline.report_job import make_report, refresh_fx


@task(name="ecb-rates", retries=1, retry_delay_seconds=60, cache_policy=NO_CACHE)
def fx_task(settings: Settings, fetch: bool) -> int:
    n, problems = refresh_fx(settings, fetch=fetch)
    logger = get_run_logger()
    for p in problems:
        logger.warning(p)
    return n


@task(name="weekly-report", cache_policy=NO_CACHE)
def report_task(settings: Settings, week: str | None, currency: str | None,
                workloads_file: Path | None) -> Path:
    return make_report(settings, week, currency, workloads_file)


@flow(name="gpuprices-weekly-report", log_prints=False)
def weekly_flow(settings: Settings, week: str | None = None, currency: str | None = None,
                workloads_file: Path | None = None, fetch_fx: bool = True) -> Path:
    """Rates first (a report in EUR needs this week's rates), then the report (`currency`:
    default $GPUPRICES_CURRENCY, else USD)."""
    fx_task(settings, fetch_fx)
    return report_task(settings, week, currency, workloads_file)
