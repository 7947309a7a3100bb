"""`compare`: rent, reserve or own a sustained demand, on the command line.

`register(app)` adds the command to the main `gpuprices` CLI.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from gpuprices.flows.cli.buyer_options import DiscountsOption, read_discounts
from gpuprices.flows.cli.options import DataDir
from gpuprices.flows.cli.rank_inputs import (
    CurrencyOption,
    console,
    currency_option,
    data_dir_of,
    date_option,
    err,
    fail,
    warehouse_today,
)
from gpuprices.flows.config import max_age_days as config_max_age_days
from gpuprices.sizing.discounts import expired
from gpuprices.sizing.rent_or_own import OWNERSHIP_FIELDS, Demand, DemandError, load_demands
from gpuprices.warehouse.gpus import gpu_models


def _overrides(values: list[str] | None) -> dict[str, float]:
    """--own KEY=VALUE options as ownership figures."""
    out = {}
    for v in values or []:
        key, sep, num = v.partition("=")
        if not sep or key not in OWNERSHIP_FIELDS:
            raise fail(f"--own {escape(v)}: expected KEY=VALUE with KEY one of "
                        f"{', '.join(OWNERSHIP_FIELDS)}")
        try:
            out[key] = float(num)
        except ValueError:
            raise fail(f"--own {escape(v)}: {escape(num)} is not a number") from None
    return out


def _demands(path: Path, own: dict[str, float]) -> list[Demand]:
    try:
        demands = load_demands(path)
    except DemandError as exc:
        raise fail(escape(str(exc))) from None
    unknown = [d.gpu_model for d in demands if d.gpu_model not in gpu_models()]
    if unknown:
        raise fail(f"{path}: unknown GPU model(s) {', '.join(unknown)}; see "
                    "warehouse/gpus.csv")
    # The command line's figures win over the file's and the defaults.
    return [Demand(d.name, d.gpu_model, d.gpus, d.hours_per_week, d.months, {**d.own, **own})
            for d in demands]


def _read(db_path: Path, day: Any, currency: str, max_age_days: int | None,
          demands: list[Demand], discounts: list[Any] | None = None) -> list[dict[str, Any]]:
    import duckdb

    from gpuprices.flows.ops.warehouse_state import warehouse_problem
    from gpuprices.reports.rent_or_own import compare_demands
    from gpuprices.warehouse import db

    problem = warehouse_problem(db_path)
    if problem:
        raise fail(escape(problem))
    con = db.connect(db_path, read_only=True)
    try:
        day = day or warehouse_today(con)
        limit = db.age_limit(con, config_max_age_days(max_age_days))
        return compare_demands(con, day, currency, demands, limit, discounts or ())
    except (ValueError, duckdb.Error) as exc:
        raise fail(f"{db_path}: {escape(str(exc))}") from None
    finally:
        con.close()


def _cell(x: float | None, fmt: str) -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, fmt)


def _print(result: dict[str, Any]) -> None:
    cur = result["currency"]
    t = Table(title=f"{result['demand']}: {result['gpus']} x {result['gpu_model']}, "
                    f"{result['hours_per_week']:g} h/week ({result['utilisation']:.0%}), "
                    f"{result['months']:g} months — as of {result['as_of']}")
    for col in ("option", "cheapest offer", f"per month ({cur})", "fixed per month",
                "break-even h/week", "break-even utilisation", "why"):
        t.add_column(col)
    for o in result["options"]:
        t.add_row(o["option"], o["source"], _cell(o["monthly_cost"], ",.0f"),
                  _cell(o["fixed_monthly"], ",.0f"),
                  _cell(o["break_even_hours_per_week"], ".1f"),
                  _cell(o["break_even_utilisation"], ".0%"), "; ".join(o["notes"]),
                  style="bold" if o["option"] == result["cheapest"] else None)
    console.print(t)
    for n in result["notes"]:
        console.print(f"  - {escape(n)}", highlight=False)


def compare(
    demand_file: Annotated[Path, typer.Argument(
        help="TOML file of [[demand]] tables (gpu, gpus, hours_per_week, months)")],
    date: Annotated[str | None, typer.Option(
        "--date", help="Prices as of YYYY-MM-DD (default: the newest snapshot date)")] = None,
    currency: CurrencyOption = None,
    own: Annotated[list[str] | None, typer.Option(
        "--own", help="Ownership figure KEY=VALUE in USD (repeatable), e.g. server_price=300000"
                      ", electricity_per_kwh=0.10, years=5; defaults: "
                      "sizing/ownership_defaults.csv")] = None,
    max_age_days: Annotated[int | None, typer.Option(
        "--max-age-days", min=0, help="A provider's snapshot older than this is stale")] = None,
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    discounts_file: DiscountsOption = None,
) -> None:
    """Rent, reserve or own: the monthly cost of each sustained demand on-demand, on spot, on
    each committed term the warehouse holds and owned, with the hours per week above which each
    beats on-demand."""
    from gpuprices.flows.channels.ranking import jsonable

    currency = currency_option(currency)
    day = date_option(date)
    demands = _demands(demand_file, _overrides(own))
    entries = read_discounts(discounts_file)
    for note in expired(entries, dt.date.today()):
        err.print(f"[yellow]{escape(note)}[/yellow]")
    results = _read(data_dir_of(data_dir) / "warehouse.duckdb", day, currency, max_age_days,
                    demands, entries)
    if as_json:
        typer.echo(json.dumps([jsonable(r) for r in results], indent=2, default=str))
        return
    for r in results:
        _print(r)


def register(target: typer.Typer) -> None:
    """Add `compare` to another Typer app (the main gpuprices CLI)."""
    target.command("compare")(compare)
