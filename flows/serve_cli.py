"""`gpuprices serve`: register the nightly and weekly Prefect deployments (flows/serve.py) and
run them here until stopped."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from flows.cli_options import DataDir
from flows.config import prefect_env, settings_from
from flows.schedules import NIGHTLY_CRON, WEEKLY_CRON

console = Console(width=None if os.isatty(1) else 160)


def serve(
    nightly_cron: Annotated[str, typer.Option(help="Cron (UTC) of the nightly crawl.")]
    = NIGHTLY_CRON,
    weekly_cron: Annotated[str, typer.Option(help="Cron (UTC) of the weekly report.")]
    = WEEKLY_CRON,
    currency: Annotated[str, typer.Option(help="Currency of the weekly report.")] = "EUR",
    workloads: Annotated[Path | None, typer.Option(
        "--workloads", help="Workloads of the weekly report. Default: sizing/workloads.toml")]
    = None,
    data_dir: DataDir = None,
    archive: Annotated[Path | None, typer.Option(
        "--archive", help="Raw archive root. Default: $GPUPRICES_ARCHIVE or snapshots/")]
    = None,
) -> None:
    """Register and serve two Prefect deployments: the nightly crawl and the weekly report,
    at most one run of each at a time. Runs until stopped (Ctrl-C)."""
    settings = settings_from(data_dir, archive).ensure()
    # Keep an explicitly configured Prefect server (PREFECT_API_URL) and home, otherwise use the
    # data folder's. Prefect reads them when it is first imported, so flows.serve (which imports
    # it) is imported only now, never at the top of this module.
    for key, value in prefect_env(settings).items():
        os.environ.setdefault(key, value)
    from flows.serve import build_deployments, serve_deployments

    deployments = build_deployments(settings, nightly_cron=nightly_cron,
                                    weekly_cron=weekly_cron, currency=currency.upper(),
                                    workloads=workloads)
    console.print(f"serving {', '.join(d.name for d in deployments)} "
                  f"(nightly '{nightly_cron}' UTC, weekly '{weekly_cron}' UTC) "
                  f"since {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M}Z")
    serve_deployments(deployments)


def register(app: typer.Typer) -> None:
    """Add `serve` to the main gpuprices app."""
    app.command("serve")(serve)
