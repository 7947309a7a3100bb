"""`gpuprices report` and `gpuprices serve`.

`register(app)` adds both commands to the main Typer app (flows.cli). The plain functions
`refresh_fx` and `make_report` are what the weekly Prefect flow's tasks call, so tests need no
Prefect server.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from flows.config import REPO_ROOT, Settings, prefect_env, settings_from

console = Console(width=None if os.isatty(1) else 160)
err = Console(stderr=True, width=None if os.isatty(2) else 160)

DEFAULT_WORKLOADS = REPO_ROOT / "sizing" / "workloads.toml"
NIGHTLY_CRON = "0 2 * * *"
WEEKLY_CRON = "0 6 * * 1"


def refresh_fx(settings: Settings, fetch: bool = False) -> tuple[int, list[str]]:
    """Load every archived ECB file into fx_rates; with `fetch`, first fetch today's daily and
    90-day files into the archive. A failed fetch is reported, never fatal: the archived rates
    still load. Returns (rates loaded, problems)."""
    from spiders import fx
    from warehouse import db

    problems: list[str] = []
    if fetch:
        try:
            fx.fetch_ecb(settings.archive_root)
        except Exception as exc:  # network trouble must not cost the report
            problems.append(f"ecb: fetch failed: {exc}")
    con = db.connect(settings.db_path)
    try:
        db.init_schema(con)
        _, errors = fx.archived_rates(settings.archive_root)
        problems += [str(e) for e in errors]
        n = fx.load_fx_from_archive(settings.archive_root, con)
    finally:
        con.close()
    return n, problems


def make_report(settings: Settings, week: str | None = None, currency: str = "EUR",
                workloads_file: Path | None = None) -> Path:
    """Write `<data>/reports/<week>/report.html`, `report.md` and the CSVs; returns the HTML."""
    from reports.render import write_report
    from sizing.workload import load_workloads
    from warehouse import db
    from warehouse.gpus import gpu_models

    workloads = load_workloads(workloads_file or DEFAULT_WORKLOADS, known_gpus=set(gpu_models()))
    con = db.connect(settings.db_path, read_only=True)
    try:
        return write_report(con, settings.reports_dir, week=week, currency=currency,
                            workloads=workloads)
    finally:
        con.close()


def report(
    week: Annotated[str | None, typer.Option(
        "--week", help="ISO week YYYY-Www. Default: the latest week with data.")] = None,
    workloads: Annotated[Path | None, typer.Option(
        "--workloads", help="TOML file of [[workload]] tables. Default: sizing/workloads.toml")]
    = None,
    currency: Annotated[str, typer.Option(
        "--currency", help="Report currency: EUR, USD or any ECB currency.")] = "EUR",
    fetch_fx: Annotated[bool, typer.Option(
        "--fetch-fx/--no-fetch-fx", help="Fetch today's ECB rates into the archive first.")]
    = False,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", help="Data folder. Default: $GPUPRICES_HOME or ./data")] = None,
    archive: Annotated[Path | None, typer.Option(
        "--archive", help="Raw archive root (for the ECB files). Default: snapshots/")] = None,
) -> None:
    """Write the weekly report: <data>/reports/<week>/report.html, report.md and CSV tables."""
    from reports.weeks import week_bounds
    from sizing.workload import WorkloadError

    if week:
        try:
            week_bounds(week)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    settings = settings_from(data_dir, archive).ensure()
    if not settings.db_path.exists():
        err.print(f"no warehouse at {settings.db_path}: run `gpuprices nightly --replay all`")
        raise typer.Exit(2)
    n, problems = refresh_fx(settings, fetch=fetch_fx)
    for p in problems:
        err.print(f"[yellow]{p}[/yellow]", highlight=False)
    console.print(f"FX: {n} ECB rates loaded from {settings.archive_root}")
    try:
        html = make_report(settings, week, currency.upper(), workloads)
    except (ValueError, WorkloadError) as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(2) from None
    console.print(f"report: {html}", highlight=False)
    console.print(f"        {html.with_name('report.md')}", highlight=False)


def serve(
    nightly_cron: Annotated[str, typer.Option(help="Cron (UTC) of the nightly crawl.")]
    = NIGHTLY_CRON,
    weekly_cron: Annotated[str, typer.Option(help="Cron (UTC) of the weekly report.")]
    = WEEKLY_CRON,
    currency: Annotated[str, typer.Option(help="Currency of the weekly report.")] = "EUR",
    workloads: Annotated[Path | None, typer.Option(
        "--workloads", help="Workloads of the weekly report. Default: sizing/workloads.toml")]
    = None,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", help="Data folder. Default: $GPUPRICES_HOME or ./data")] = None,
    archive: Annotated[Path | None, typer.Option(
        "--archive", help="Raw archive root. Default: $GPUPRICES_ARCHIVE or snapshots/")]
    = None,
) -> None:
    """Register and serve two Prefect deployments: the nightly crawl and the weekly report,
    at most one run of each at a time. Runs until stopped (Ctrl-C)."""
    settings = settings_from(data_dir, archive).ensure()
    # Prefect reads its settings on import; keep an explicitly configured server (PREFECT_API_URL)
    # and home, otherwise use the data folder's.
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
    """Add `report` and `serve` to the main gpuprices app."""
    app.command("report")(report)
    app.command("serve")(serve)
