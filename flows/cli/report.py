"""`gpuprices report`: the weekly report from the command line (the steps themselves are in
flows/pipeline/report_job.py, shared with the weekly Prefect flow)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gpuprices.flows.cli import serve as serve_cli
from gpuprices.flows.cli.buyer_options import DiscountsOption, read_discounts
from gpuprices.flows.cli.options import DataDir
from gpuprices.flows.config import default_currency, settings_from
from gpuprices.reports.weeks import week_bounds
from gpuprices.sizing.workload import WorkloadError

console = Console(width=None if os.isatty(1) else 160)
err = Console(stderr=True, soft_wrap=True)  # messages stay whole lines (a path never splits)


def report(
    week: Annotated[str | None, typer.Option(
        "--week", help="ISO week YYYY-Www. Default: the latest week with data.")] = None,
    workloads: Annotated[Path | None, typer.Option(
        "--workloads", help="TOML file of [[workload]] tables. Default: sizing/workloads.toml")]
    = None,
    currency: Annotated[str | None, typer.Option(
        "--currency", help="Report currency: USD, EUR or any ECB currency. Default: "
                           "$GPUPRICES_CURRENCY, else USD.")] = None,
    fetch_fx: Annotated[bool, typer.Option(
        "--fetch-fx/--no-fetch-fx", help="Fetch today's ECB rates into the archive first.")]
    = False,
    data_dir: DataDir = None,
    archive: Annotated[Path | None, typer.Option(
        "--archive", help="Raw archive root (for the ECB files). Default: snapshots/")] = None,
    max_age_days: Annotated[int | None, typer.Option(
        "--max-age-days", min=0,
        help="A provider's latest snapshot older than this at the week's end is stale: listed "
             "apart, in no figure. Default: $GPUPRICES_MAX_AGE_DAYS, else 14.")] = None,
    discounts_file: DiscountsOption = None,
) -> None:
    """Write the weekly report: <data>/reports/<week>/report.html, report.md and CSV tables."""
    from gpuprices.flows.ops.warehouse_state import warehouse_problem
    from gpuprices.flows.pipeline.report_job import make_report, refresh_fx

    if week:
        try:
            week_bounds(week)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    settings = settings_from(data_dir, archive).ensure()
    problem = warehouse_problem(settings.db_path)
    if problem:
        err.print(problem, highlight=False)
        raise typer.Exit(2)
    entries = read_discounts(discounts_file)
    n, problems = refresh_fx(settings, fetch=fetch_fx)
    for p in problems:
        err.print(f"[yellow]{p}[/yellow]", highlight=False)
    console.print(f"FX: {n} ECB rates loaded from {settings.archive_root}")
    try:
        html = make_report(settings, week, default_currency(currency), workloads, max_age_days,
                           entries)
    except (ValueError, WorkloadError) as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(2) from None
    console.print(f"report: {html}", highlight=False)
    console.print(f"        {html.with_name('report.md')}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `report` and the schedule that runs it weekly (`serve`) to the main gpuprices app."""
    app.command("report")(report)
    serve_cli.register(app)
