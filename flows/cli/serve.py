"""`gpuprices serve`: register the nightly and weekly Prefect deployments (flows/serve.py) and
run them here until stopped (SIGTERM or Ctrl-C: a clean stop, exit 0). Without PREFECT_API_URL
it starts its own Prefect server (flows/ops/service.py) and stops it after the runner."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gpuprices.flows.cli.options import ArchiveDir, DataDir
from gpuprices.flows.config import default_currency, prefect_env, settings_from
from gpuprices.flows.ops.service import local_server, sigterm_as_interrupt
from gpuprices.flows.schedules import NIGHTLY_CRON, WEEKLY_CRON

console = Console(width=None if os.isatty(1) else 160)


def serve(
    nightly_cron: Annotated[str, typer.Option(help="Cron (UTC) of the nightly crawl.")]
    = NIGHTLY_CRON,
    weekly_cron: Annotated[str, typer.Option(help="Cron (UTC) of the weekly report.")]
    = WEEKLY_CRON,
    currency: Annotated[str | None, typer.Option(
        help="Currency of the weekly report. Default: $GPUPRICES_CURRENCY, else USD.")] = None,
    workloads: Annotated[Path | None, typer.Option(
        "--workloads", help="Workloads of the weekly report. Default: sizing/workloads.toml")]
    = None,
    data_dir: DataDir = None,
    archive: ArchiveDir = None,
    port: Annotated[int, typer.Option(
        help="Port of the Prefect server (UI and API) started when PREFECT_API_URL is not set; "
             "0: any free port.")] = 0,
) -> None:
    """Register and serve two Prefect deployments: the nightly crawl and the weekly report,
    at most one run of each at a time. Runs until stopped (SIGTERM or Ctrl-C: exit 0).
    With PREFECT_API_URL set, registers them on that server; otherwise starts one of its own
    on 127.0.0.1 (database in the data folder) and stops it last."""
    settings = settings_from(data_dir, archive).ensure()
    # Keep an explicitly configured Prefect server (PREFECT_API_URL) and home, otherwise use the
    # data folder's. Prefect reads them when it is first imported, so gpuprices.flows.serve (which
    # imports it) is imported only now, never at the top of this module.
    for key, value in prefect_env(settings).items():
        os.environ.setdefault(key, value)
    with sigterm_as_interrupt(), contextlib.suppress(KeyboardInterrupt):
        if os.environ.get("PREFECT_API_URL"):
            _serve(settings, nightly_cron, weekly_cron, currency, workloads)
        else:
            console.print("starting a Prefect server on 127.0.0.1 (set PREFECT_API_URL to use "
                          "one that runs elsewhere)", highlight=False)
            with local_server(settings.prefect_home, port=port) as api_url:
                os.environ["PREFECT_API_URL"] = api_url
                console.print(f"Prefect UI: {api_url.removesuffix('/api')}", highlight=False)
                _serve(settings, nightly_cron, weekly_cron, currency, workloads)
    console.print("stopped", highlight=False)


def _serve(settings, nightly_cron: str, weekly_cron: str, currency: str | None,
           workloads: Path | None) -> None:
    from gpuprices.flows.serve import build_deployments, serve_deployments

    deployments = build_deployments(settings, nightly_cron=nightly_cron,
                                    weekly_cron=weekly_cron, currency=default_currency(currency),
                                    workloads=workloads)
    console.print(f"serving {', '.join(d.name for d in deployments)} "
                  f"(nightly '{nightly_cron}' UTC, weekly '{weekly_cron}' UTC) "
                  f"since {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M}Z", highlight=False)
    serve_deployments(deployments, printer=lambda line: console.print(line, highlight=False))


def register(app: typer.Typer) -> None:
    """Add `serve` to the main gpuprices app."""
    app.command("serve")(serve)
