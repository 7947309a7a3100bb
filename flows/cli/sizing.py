"""`size` and `rank`: the sizing engine on the command line.

`app` is a standalone Typer app; `register(app)` adds the same two commands to another app
(the main `gpuprices` CLI).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from gpuprices.flows.cli import rank_view
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
    fail,
    fx_missing,
    load_workloads,
    offers_or_exit,
    read_measurements,
)
from gpuprices.flows.gpu_names import unknown_gpu
from gpuprices.sizing import measured as meas
from gpuprices.sizing import parallel, switches
from gpuprices.sizing import trace as trace_engine
from gpuprices.sizing.compat import check as compat_check
from gpuprices.sizing.fit import verdict as fit_verdict
from gpuprices.sizing.frameworks import profile
from gpuprices.sizing.headline import one_line
from gpuprices.sizing.memory import estimate_memory
from gpuprices.sizing.rank import rank_each
from gpuprices.sizing.rank_row import RankRow
from gpuprices.sizing.throughput import efficiency_assumed_note, estimate_throughput
from gpuprices.sizing.workload import Workload
from gpuprices.spiders import registry
from gpuprices.warehouse.gpus import gpu_models

SIZE_VERDICTS = {
    "fits": "FITS",
    "tight": "TIGHT (the estimate fits, the estimator's error margin does not)",
    "no": "DOES NOT FIT",
}
# When neither --gpu nor the workload names one: the most widely offered training GPU.
DEFAULT_GPU = "H100-SXM-80GB"
GPUS_PER_NODE = 8  # HGX / DGX boards hold 8 GPUs (NVIDIA HGX spec)

app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  help="Memory, time and cost per successful checkpoint of training workloads.")
def _finite(x: float) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def size_one(w: Workload, gpu: str | None = None, gpus: int | None = None) -> dict[str, Any]:
    """One workload on one GPU model x count: the `size` JSON object."""
    model = gpu or w.gpu or DEFAULT_GPU
    spec = gpu_models()[model]
    n = gpus or w.gpus or 1
    per_node = min(n, GPUS_PER_NODE)
    nodes = math.ceil(n / per_node)
    mem = estimate_memory(w, gpu=model, gpus=n, capacity_gb=spec.memory_gb)
    tp = estimate_throughput(w, spec, per_node, nodes)
    return {
        "name": w.name,
        "gpu": model,
        "gpus": n,
        "per_gpu_gb": round(mem.per_gpu_gb, 2),
        "required_gb": round(mem.required_gb, 2),
        "capacity_gb": spec.memory_gb,
        "margin": mem.margin,
        # the estimator's measured error (sizing/fit_margin.csv) or the workload's own
        "margin_source": "measured" if mem.margin_measured else "workload",
        "verdict": mem.verdict,
        "fits": mem.verdict != "no",
        "headroom_gb": round(mem.headroom_gb, 2),
        "breakdown": {k: round(v, 3) for k, v in mem.breakdown.items()},
        # the breakdown's terms in words where the key alone hides how they are split
        "breakdown_labels": dict(mem.labels),
        # A run that cannot start has no speed or duration (issue 24): null under `no`, with
        # what would fit instead.
        "tokens_per_s": None if mem.verdict == "no" else round(tp.tokens_per_s, 1),
        "hours": None if mem.verdict == "no" else _finite(round(tp.hours, 3)),
        "would_fit": would_fit(w, model, n) if mem.verdict == "no" else None,
        "hfu": tp.hfu,
        "efficiency_class": tp.efficiency_class,
        "efficiency_assumed": tp.efficiency_assumed,
        "efficiency_source": tp.hfu_source,
        "model": {"name": w.arch.name, "params_b": w.arch.params_b,
                  "inferred_fields": list(w.arch.inferred)},
        "method": w.method, "precision": w.precision, "framework": w.framework,
        "parallel": parallel.layout_dict(w, n, per_node),  # tp / pp / cp / dp, its name
        "switches": switches.switches_dict(w, profile(w.framework)),
        # Whether the software the workload needs runs on this card (sizing/compat.py).
        "compatibility": compat_check(w, spec).as_dict(),
        "notes": mem.notes + tp.notes + (
            [efficiency_assumed_note(tp)] if tp.efficiency_assumed else []),
    }


MAX_SIZE_GPUS = 512  # more GPUs tried for a workload that does not fit: 64 nodes of 8


def would_fit(w: Workload, gpu: str, n: int) -> dict[str, Any]:
    """What would hold a workload that does not fit on `n` x `gpu`: the fewest GPUs of the same
    model (doubling; only when it shards, since replicas never split memory) and the GPU model
    with the least memory that holds it on `n` GPUs. `fits` before `tight` in both; None where
    nothing does."""
    more = None
    if w.sharding != "none":
        k = n * 2
        while k <= MAX_SIZE_GPUS and more is None:
            if estimate_memory(w, gpu=gpu, gpus=k,
                               capacity_gb=gpu_models()[gpu].memory_gb).verdict == "fits":
                more = k
            k *= 2
    other = None
    for spec in sorted(gpu_models().values(), key=lambda g: (g.memory_gb, g.gpu_model)):
        if spec.gpu_model == gpu or spec.memory_gb <= gpu_models()[gpu].memory_gb:
            continue
        if estimate_memory(w, gpu=spec.gpu_model, gpus=n,
                           capacity_gb=spec.memory_gb).verdict == "fits":
            other = spec.gpu_model
            break
    return {"gpus": more, "gpu": other}


def _no_fit_lines(r: dict[str, Any]) -> list[str]:
    """Under DOES NOT FIT: why, and what would hold it, instead of a speed and a duration."""
    lines = [f"  does not fit: {r['required_gb']:.1f} GB per GPU needed ({r['per_gpu_gb']:.1f} "
             f"GB estimate + {r['margin']:.1%} margin), {r['capacity_gb']:g} GB on each of "
             f"{r['gpus']} {r['gpu']}: the run cannot start (no speed, duration or cost)"]
    would = r["would_fit"] or {}
    options = ([f"{would['gpus']} x {r['gpu']} (--gpus {would['gpus']})"] if would.get("gpus")
               else []) + ([f"{r['gpus']} x {would['gpu']} (--gpu {would['gpu']})"]
                           if would.get("gpu") else [])
    lines.append("  would fit: " + " or ".join(options) if options else
                 "  nothing in warehouse/gpus.csv holds it at this GPU count; sharding "
                 f"{r['parallel']['description']}")
    return lines


def size(
    workload_file: WorkloadFile,
    gpu: Annotated[str | None, typer.Option("--gpu", help="Canonical GPU model")] = None,
    gpus: Annotated[int | None, typer.Option("--gpus", min=1, help="GPU count")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    data_dir: DataDir = None,  # no prices: only the measured results (`gpuprices record`)
    engine: Annotated[str, typer.Option(
        "--engine", help="closed-form (default) or trace: also trace one training step on the "
                         "CPU (needs gpuprices[trace])")] = "closed-form",
) -> None:
    """Memory per GPU with its breakdown, its verdict (fits / tight / no), tokens/s and hours
    for each workload."""
    if gpu and gpu not in gpu_models():
        err.print(f"[red]error:[/red] --gpu {escape(unknown_gpu(gpu))}")
        raise typer.Exit(2)
    if engine not in ("closed-form", "trace"):
        raise fail(f"--engine must be closed-form or trace, got {escape(engine)}")
    if engine == "trace" and not trace_engine.available():
        raise fail(escape(trace_engine.EXTRA_HINT))
    workloads = load_workloads(workload_file)
    results = [size_one(w, gpu, gpus) for w in workloads]
    measured = read_measurements(data_dir_of(data_dir) / "warehouse.duckdb")
    for w, r in zip(workloads, results, strict=True):
        r["measured"] = meas.beside_estimate(measured, r["gpu"], w.name,
                                             lambda n, w=w, g=r["gpu"]: _estimate_on(w, g, n))
    if engine == "trace":
        for w, r in zip(workloads, results, strict=True):
            r["trace"] = trace_one(w, r)
    if as_json:
        typer.echo(json.dumps(results, indent=2))
        return
    for r in results:
        t = Table(title=f"{r['name']}: {r['gpus']} x {r['gpu']}, "
                        f"{r['parallel']['description']} — {SIZE_VERDICTS[r['verdict']]}")
        t.add_column("term")
        t.add_column("GB per GPU", justify="right")
        for k, v in r["breakdown"].items():
            t.add_row(r["breakdown_labels"].get(k, k), f"{v:.2f}")
        t.add_row("total", f"{r['per_gpu_gb']:.2f}")
        t.add_row(f"+ {r['margin']:.1%} margin ({r['margin_source']})",
                  f"{r['required_gb']:.2f}")
        t.add_row("capacity", f"{r['capacity_gb']:g}")
        console.print(t)
        if r["verdict"] == "no":
            for line in _no_fit_lines(r):
                console.print(line, highlight=False, markup=False)
        else:
            hours = "n/a" if r["hours"] is None else f"{r['hours']:.2f}"
            assumed = " (efficiency assumed)" if r["efficiency_assumed"] else ""
            console.print(f"  tokens/s {r['tokens_per_s']:.0f}{assumed}, hours {hours}")
        runs = r["compatibility"]
        console.print(f"  compatibility on {r['gpu']}: {runs['verdict']}", highlight=False)
        for reason in runs["reasons"]:
            console.print(f"    {escape(reason)}", highlight=False)
        for note in r["notes"]:
            console.print(f"  - {note}", highlight=False)
        for m in r["measured"]:
            console.print(f"  measured on {m['provider']} {m['sku']} ({m['measured_on']}): "
                          f"{m['tokens_per_s']:,.0f} tokens/s on {m['gpus']} GPU(s); the "
                          f"estimate {m['estimate_tokens_per_s']:,.0f} is "
                          f"{m['estimate_error']:+.0%} against it", highlight=False)
        if "trace" in r:
            _print_trace(r)


def _estimate_on(w: Workload, gpu: str, n: int) -> float:
    """The estimated tokens/s of `w` on `n` GPUs of `gpu` in 8-GPU nodes, as size_one."""
    per_node = min(n, GPUS_PER_NODE)
    return estimate_throughput(w, gpu_models()[gpu], per_node, math.ceil(n / per_node)
                               ).tokens_per_s


def trace_one(w: Workload, r: dict[str, Any]) -> dict[str, Any]:
    """The trace engine's estimate beside the closed-form one in `r` (a size_one object)."""
    why = trace_engine.unsupported(w, r["gpus"])
    if why:
        return {"supported": False, "reason": why}
    t = trace_engine.trace(w, r["gpus"])
    per_gpu = t.per_gpu_gb
    return {"supported": True, "per_gpu_gb": round(per_gpu, 2),
            "allocated_gb": round(t.allocated_gb, 2),
            "verdict": fit_verdict(per_gpu, r["capacity_gb"], r["margin"]),
            "difference_gb": round(per_gpu - r["per_gpu_gb"], 2),
            "difference_pct": round((per_gpu / r["per_gpu_gb"] - 1) * 100, 1),
            "peak_breakdown_gb": {k: round(v / 1e9, 3) for k, v in t.peak_breakdown.items()},
            "seconds": round(t.seconds, 1)}


def _print_trace(r: dict[str, Any]) -> None:
    tr = r["trace"]
    if not tr["supported"]:
        console.print(f"  trace engine: not traced: {escape(tr['reason'])}", highlight=False)
        return
    console.print(
        f"  trace engine: {tr['per_gpu_gb']:.2f} GB per GPU (traced peak {tr['allocated_gb']:.2f}"
        f" + CUDA context) — {SIZE_VERDICTS[tr['verdict']]}; closed form {r['per_gpu_gb']:.2f}"
        f" GB, difference {tr['difference_gb']:+.2f} GB ({tr['difference_pct']:+.1f}%),"
        f" traced in {tr['seconds']:.0f} s", highlight=False)


def json_rows(ranked: dict[str, list[RankRow]], day: dt.date, set_apart: bool = False
              ) -> list[dict[str, Any]]:
    """The --json list: one object per ranked row, with the as-of date (reasons as a list).
    Prices that are never recommended (stale, not firm, against the buyer's constraints:
    not a cluster, misses the deadline, outside the regions), whatever else their verdict, only
    with `set_apart`: a plain `rank --json` holds nothing stale, no placeholder or "from" price
    and nothing outside the workloads' regions."""
    # The API's JSON rows: the channel brings duckdb, which only a ranking needs.
    from gpuprices.flows.channels.ranking import rows_as_json

    return [d for rows in ranked.values() for d in rows_as_json(day, rows, set_apart)]


# From this many workloads on, `rank` says how far it is (on stderr, about every 5 %).
PROGRESS_FROM = 100


class _JsonArray:
    """A JSON array written one element at a time, as json.dumps(list, indent=2) writes it:
    the whole list is never held (a 10,000-workload rank writes hundreds of MB)."""

    def __init__(self) -> None:
        self.n = 0

    def add(self, obj: dict[str, Any]) -> None:
        text = json.dumps(obj, indent=2, default=str).replace("\n", "\n  ")
        typer.echo(("[\n  " if self.n == 0 else ",\n  ") + text, nl=False)
        self.n += 1

    def close(self) -> None:
        typer.echo("\n]" if self.n else "[]")


def rank(
    workload_file: WorkloadFile,
    date: Annotated[str | None, typer.Option(
        "--date", help="As of YYYY-MM-DD: each provider's latest snapshot on or before it "
                       "(default: the newest snapshot date)")] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Rows per workload")] = 10,
    currency: CurrencyOption = None,
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    max_age_days: Annotated[int | None, typer.Option(
        "--max-age-days", min=0,
        help="A provider's latest snapshot older than this on the day is stale (is_stale): "
             "never recommended. Default: $GPUPRICES_MAX_AGE_DAYS, else 14.")] = None,
    set_apart: Annotated[bool, typer.Option(
        "--set-apart", help="With --json: also list the stale and not-firm prices and the "
                            "offers against the workloads' constraints (verdict stale / "
                            "not_firm / not_cluster / misses_deadline / outside_region), which "
                            "are never recommended.")] = False,
    deadline: DeadlineOption = None,
    region: RegionOption = None,
    discounts_file: DiscountsOption = None,
    why: Annotated[bool, typer.Option(
        "--why", help="Also print each row's reasons (fit, layout, billing, spot risk, "
                      "caveats) and every offer set apart with why")] = False,
) -> None:
    """Rank every offer as of a date (each provider's latest snapshot on or before it; gpu
    model x GPUs per node x nodes) by cost per successful checkpoint, with the best firm
    on-demand, spot and committed offer of each workload side by side."""
    currency = currency_option(currency)
    day = date_option(date)
    workloads = with_overrides(load_workloads(workload_file), deadline, region)
    entries = read_discounts(discounts_file)
    db_path = data_dir_of(data_dir) / "warehouse.duckdb"
    day, offers, usd_factor = offers_or_exit(db_path, day, currency, max_age_days)
    missing = fx_missing(offers, usd_factor)
    offers, discount_notes = negotiated(offers, entries, currency, usd_factor)
    for note in discount_notes:
        (err if as_json else console).print(f"[yellow]{escape(note)}[/yellow]")
    # One workload at a time, written out as it is ranked: memory stays that of one workload
    # and output starts at once, however long the file (bench/rank_many.py measures it).
    ranked = rank_each(workloads, offers, currency=currency, usd_to_currency=usd_factor,
                       top=top, node_shapes=registry.node_shapes(),
                       measurements=read_measurements(db_path))
    if missing:
        (err if as_json else console).print(
            f"[yellow]FX rates are missing for {', '.join(missing)} on {day}: offers priced "
            f"in them cannot be shown in {currency}[/yellow]")
    total = len(workloads)
    step = max(1, total // 20)
    if not as_json and total < PROGRESS_FROM:
        # A file a person reads: the one line per workload first, then each workload's table.
        ranked = dict(ranked)
        for name, rows in ranked.items():
            console.print(one_line(name, rows, currency), highlight=False)
        ranked = ranked.items()
    if not as_json:
        console.print(f"offers as of {day} (each provider's latest snapshot): {len(offers)}; "
                      f"currency {currency}")
    out = _JsonArray()
    for i, (name, rows) in enumerate(ranked, 1):
        if as_json:
            for obj in json_rows({name: rows}, day, set_apart):
                out.add(obj)
        else:
            if total >= PROGRESS_FROM:  # streamed: each workload's line above its table
                console.print(one_line(name, rows, currency), highlight=False)
            rank_view.print_workload(console, name, rows, top, currency, why)
        if total >= PROGRESS_FROM and (i % step == 0 or i == total):
            err.print(f"ranked {i:,}/{total:,} workloads", highlight=False)
    if as_json:
        out.close()
    elif not why:
        console.print("--why: each row's reasons and every offer set apart, with why",
                      highlight=False, markup=False)


def register(target: typer.Typer) -> None:
    """Add `size` and `rank` to another Typer app (the main gpuprices CLI)."""
    target.command("size")(size)
    target.command("rank")(rank)


register(app)

if __name__ == "__main__":
    app()
