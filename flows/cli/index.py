"""`gpuprices index`: the daily GPU rental price index (docs/index.md), and `gpuprices index
verify`, which rebuilds it from the raw archive and compares (flows/pipeline/index_rebuild.py)."""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import sys
from decimal import Decimal
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuprices.flows.cli.options import ArchiveDir, DataDir
from gpuprices.flows.config import default_currency, settings_from

# The warehouse and the archive's modules are imported inside the commands: every `gpuprices`
# command imports this module (bench/cli_startup.py).

console = Console(width=None if os.isatty(1) else 200)
err = Console(stderr=True, width=None if os.isatty(2) else 160)

PRICINGS = ("on_demand", "spot", "committed")

def index_rows(con, gpu: str | None, pricing: str, segment: str, start: dt.date | None,
               end: dt.date | None, currency: str, all_days: bool) -> list[dict[str, Any]]:
    """The stored index rows asked for (warehouse/queries/index.py), members as a list; a day
    without a rate in `currency` says so in `reason`."""
    from gpuprices.warehouse import queries

    rows = queries.rows(queries.price_index(con, gpu_model=gpu, pricing_model=pricing,
                                            segment=segment, start=start, end=end,
                                            currency=currency, all_days=all_days))
    for r in rows:
        r["members"] = json.loads(r["members"])
        r["currency"] = currency
        if r["value"] is None and r["reason"] is None:
            r["reason"] = f"no {currency} rate on {r['day']}"
    return rows


def _plain(v: Any) -> Any:
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    return v


def _members_text(members: list[dict[str, Any]]) -> str:
    return ", ".join(f"{m['member']} {m['price_usd']:.2f}" + ("" if m["status"] == "ok"
                                                               else f" ({m['status']})")
                     for m in members)


def _print_table(rows: list[dict[str, Any]], currency: str) -> None:
    t = Table(show_lines=False)
    for name in ("day", "gpu_model", f"{currency}/GPU-h", "band (p25-p75)", "panel",
                 "members (USD/GPU-h)"):
        t.add_column(Text(name), no_wrap=name != "members (USD/GPU-h)")
    for r in rows:
        if r["value"] is None:
            value, band = Text("-"), Text(r["reason"])
        else:
            value = Text(f"{r['value']:.4f}")
            band = Text(f"{r['band_low']:.4f} - {r['band_high']:.4f}")
        t.add_row(Text(str(r["day"])), Text(r["gpu_model"]), value, band, Text(str(r["panel"])),
                  Text(_members_text(r["members"])))
    console.print(t)


def index(
    ctx: typer.Context,
    gpu: Annotated[str | None, typer.Option(
        "--gpu", help="GPU model (warehouse/gpus.csv), e.g. H100-SXM-80GB. Default: all.")]
    = None,
    pricing: Annotated[str, typer.Option(
        "--pricing", help="on_demand, spot or committed (1-12 month terms).")] = "on_demand",
    segment: Annotated[str, typer.Option(
        "--segment", help="all, neocloud or hyperscaler.")] = "all",
    start: Annotated[str | None, typer.Option("--from", help="First day YYYY-MM-DD.")] = None,
    end: Annotated[str | None, typer.Option("--to", help="Last day YYYY-MM-DD.")] = None,
    currency: Annotated[str | None, typer.Option(
        "--currency", help="USD (as published), EUR or any ECB currency. Default: "
                           "$GPUPRICES_CURRENCY, else USD.")] = None,
    all_days: Annotated[bool, typer.Option(
        "--all-days", help="Also list the days without a value, with the reason.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines, one per day.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="CSV with a header.")] = False,
    data_dir: DataDir = None,
) -> None:
    """The daily GPU rental price index: per day its value (interquartile mean of the members'
    prices per GPU-hour), band (25th-75th percentile), panel size and members. docs/index.md."""
    from gpuprices.flows.ops.warehouse_state import warehouse_problem
    from gpuprices.warehouse import db, index_method, index_store

    if ctx.invoked_subcommand is not None:
        return
    if pricing not in PRICINGS:
        raise typer.BadParameter(f"--pricing {pricing!r}: one of {', '.join(PRICINGS)}")
    if segment not in index_method.SEGMENTS:
        raise typer.BadParameter(f"--segment {segment!r}: one of "
                                 f"{', '.join(index_method.SEGMENTS)}")
    if as_json and as_csv:
        raise typer.BadParameter("--json and --csv exclude each other")
    try:
        days = [dt.date.fromisoformat(d) if d else None for d in (start, end)]
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    try:
        currency = default_currency(currency)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    settings = settings_from(data_dir)
    problem = warehouse_problem(settings.db_path)
    if problem:
        err.print(problem, highlight=False, markup=False)
        raise typer.Exit(2)
    con = db.connect(settings.db_path, read_only=True)
    try:
        if not index_store.has_index(con):
            err.print("the warehouse holds no price index yet: a load computes it "
                      "(`gpuprices nightly --replay all`)", highlight=False, markup=False)
            raise typer.Exit(2)
        rows = index_rows(con, gpu, pricing, segment, days[0], days[1], currency,
                          all_days)
    finally:
        con.close()
    if not rows:
        err.print("no index value for that selection (try --all-days for the reasons)",
                  highlight=False, markup=False)
        raise typer.Exit(1)
    if as_json:
        for r in rows:
            sys.stdout.write(json.dumps({k: _plain(v) for k, v in r.items()}) + "\n")
    elif as_csv:
        w = csv.writer(sys.stdout)
        keys = [k for k in rows[0] if k != "members"] + ["members"]
        w.writerow(keys)
        for r in rows:
            w.writerow([json.dumps(r[k], separators=(",", ":")) if k == "members"
                        else "" if r[k] is None else _plain(r[k]) for k in keys])
    else:
        _print_table(rows, currency)


def verify(data_dir: DataDir = None, archive: ArchiveDir = None) -> None:
    """Rebuild the index from the raw archive alone (parse -> lake -> warehouse in a temporary
    folder) and compare it with the stored one digit for digit. Exit 0 when every published row
    equals its rebuild (or a revision recorded beside it), else 1 with the differences."""
    from gpuprices.flows.ops.warehouse_state import warehouse_problem
    from gpuprices.flows.pipeline import index_rebuild, progress

    settings = settings_from(data_dir, archive)
    problem = warehouse_problem(settings.db_path)
    if problem:
        err.print(problem, highlight=False, markup=False)
        raise typer.Exit(2)
    v = index_rebuild.verify(settings, on_day=progress.replayed)
    for key in v.missing:
        console.print(f"MISSING in the rebuild: {key}", highlight=False, markup=False)
    for key in v.extra:
        console.print(f"NOT PUBLISHED, rebuilt: {key}", highlight=False, markup=False)
    for key, name, old, new in v.differences:
        console.print(f"DIFFERS {key[0]} {key[1]} {key[2]} {key[3]} {name}: stored {old} "
                      f"rebuilt {new}", highlight=False, markup=False)
    console.print(f"index verify: {v.equal} rows equal, {v.revised} equal to a recorded "
                  f"revision, {len(v.differences)} differences, {len(v.missing)} missing, "
                  f"{len(v.extra)} not published", highlight=False, markup=False)
    raise typer.Exit(0 if v.ok else 1)


def register(app: typer.Typer) -> None:
    """Add `index` (and `index verify`) to the main gpuprices app."""
    group = typer.Typer(no_args_is_help=False, add_completion=False, rich_markup_mode=None,
                        invoke_without_command=True)
    group.callback(invoke_without_command=True)(index)
    group.command("verify")(verify)
    app.add_typer(group, name="index")
