"""`plan`: the benchmark plan to run on the best offers of each workload before committing.

The offers are ranked as `gpuprices rank` ranks them (flows/cli/sizing.py, sizing/rank.py); the
plan itself is sizing/bench_plan.py. `register(app)` adds the command to the main CLI.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from gpuprices.flows.cli.buyer_options import (
    DeadlineOption,
    DiscountsOption,
    RegionOption,
    negotiated,
    read_discounts,
    with_overrides,
)
from gpuprices.flows.cli.options import DataDir
from gpuprices.flows.cli.rank_inputs import (
    CurrencyOption,
    WorkloadFile,
    console,
    currency_option,
    data_dir_of,
    date_option,
    err,
    fx_missing,
    load_workloads,
    money,
    offers_or_exit,
)
from gpuprices.sizing.bench_plan import OfferPlan, plan_workload
from gpuprices.sizing.rank import rank as rank_offers
from gpuprices.spiders import registry


def plan(
    workload_file: WorkloadFile,
    top: Annotated[int, typer.Option("--top", min=1, help="Offers per workload")] = 3,
    date: Annotated[str | None, typer.Option(
        "--date", help="As of YYYY-MM-DD (default: the newest snapshot date)")] = None,
    currency: CurrencyOption = None,
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    max_age_days: Annotated[int | None, typer.Option(
        "--max-age-days", min=0, help="As for rank: older snapshots are stale, never planned")]
    = None,
    deadline: DeadlineOption = None,
    region: RegionOption = None,
    discounts_file: DiscountsOption = None,
) -> None:
    """For the K best offers of each workload (as `rank` ranks them), the benchmark plan to run
    before committing: each step with its GPUs, duration, what to record and its cost at the
    offer's price and billing rules."""
    # The API's JSON rows: the channel brings duckdb, which only a ranking needs.
    from gpuprices.flows.channels.ranking import jsonable

    currency = currency_option(currency)
    workloads = with_overrides(load_workloads(workload_file), deadline, region)
    entries = read_discounts(discounts_file)
    day, offers, usd_factor = offers_or_exit(data_dir_of(data_dir) / "warehouse.duckdb",
                                              date_option(date), currency, max_age_days)
    missing = fx_missing(offers, usd_factor)
    if missing:
        err.print(f"[yellow]FX rates are missing for {', '.join(missing)} on {day}[/yellow]")
    offers, notes = negotiated(offers, entries, currency, usd_factor)
    for note in notes:
        err.print(f"[yellow]{note}[/yellow]")
    ranked = rank_offers(workloads, offers, currency=currency, usd_to_currency=usd_factor,
                         top=top, node_shapes=registry.node_shapes())
    plans = [p for w in workloads for p in plan_workload(w, ranked[w.name], top)]
    if as_json:
        typer.echo(json.dumps([{"as_of": str(day), **jsonable(p.as_dict())} for p in plans],
                              indent=2, default=str))
        return
    console.print(f"offers as of {day}; currency {currency}")
    for p in plans:
        console.print(_plan_table(p))
        for note in p.notes:
            console.print(f"  - {note}", highlight=False)


def _plan_table(p: OfferPlan) -> Table:
    r = p.row
    t = Table(title=f"{r.workload} #{p.rank}: {r.provider} {r.sku} {r.region or ''} "
                    f"{r.pricing_model}, {r.nodes}x{r.gpus_per_node} {r.gpu_model} at "
                    f"{r.price_per_hour:,.2f} {r.currency}/h per node")
    for col in ("step", "GPUs", "nodes", "hours", "billed h", "cost", "duration", "record"):
        t.add_column(col, no_wrap=col in ("step", "cost"))
    for s in p.steps:
        t.add_row(s.step, str(s.gpus), str(s.nodes), f"{s.hours:.2f}", f"{s.billed_hours:.2f}",
                  money(s.cost, r.currency), s.duration,
                  "; ".join(s.record + [f"NB {n}" for n in s.notes]))
    t.add_row("plan, back to back", "", "", f"{p.hours:.2f}", "", money(p.cost, r.currency),
              f"steps billed alone: {money(p.cost_steps_alone, r.currency)}", "",
              style="bold")
    return t


def register(target: typer.Typer) -> None:
    """Add `plan` to another Typer app (the main gpuprices CLI)."""
    target.command("plan")(plan)
