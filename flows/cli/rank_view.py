"""What plain `gpuprices rank` prints for one workload: one compact table, one row per ranked
offer that may be chosen (a few short columns, one line each), then one line per kind of offer
set apart. The reasons (caveats, why each figure is what it is, every set-apart offer with its
reason) only with `--why`; `--json` holds everything either way."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpuprices.flows.cli.rank_inputs import money
from gpuprices.sizing.rank_row import RankRow

CHOICE_LABELS = {"on_demand": "on-demand", "spot": "spot", "committed": "committed"}
PRICING = {"on_demand": "on-demand", "community": "community", "spot": "spot",
           "reserved": "reserved", "committed": "committed"}
# Why an offer is set apart, one phrase per verdict, in the order the summary lines come.
APART_WORDS = {
    "misses_deadline": "misses the deadline",
    "not_cluster": "not a cluster (separate machines for a multi-node job)",
    "sold_out": "sold out at snapshot",
    "stale": "stale (snapshot past the age limit)",
    "not_firm": "not a firm price",
    "outside_region": "outside the workload's regions",
    "no_fit": "does not fit in memory",
    "incompatible": "cannot run the workload's software",
    "never_finishes": "spot: never finishes",
    "no_fx": "no FX rate",
    "no_speed": "speed unknown",
    "unknown_gpu": "GPU model unknown",
    "slice": "a GPU slice",
}


# The offer column (provider and SKU) is cut here with an ellipsis: the row stays one line;
# --why and --json name the offer in full.
OFFER_WIDTH = 30


def _gpus(r: RankRow) -> str:
    used = f" (uses {r.gpus})" if r.gpus and r.gpus < r.nodes * r.gpus_per_node else ""
    return f"{r.nodes}×{r.gpus_per_node} {r.gpu_model}{used}"


def _pricing(r: RankRow) -> str:
    term = f" {r.commitment_months:g} mo" if r.commitment_months else ""
    return PRICING.get(r.pricing_model, r.pricing_model) + term


def _where(r: RankRow) -> str:
    return ", ".join(p for p in (r.region, r.country) if p) or "—"


def _hours(r: RankRow) -> str:
    return f"{r.hours:,.1f}" if math.isfinite(r.hours) else "—"


def flags(r: RankRow) -> str:
    """Short words for what a buyer checks first; the sentences behind them are --why's."""
    out = [f"{CHOICE_LABELS[r.choice]} pick"] if r.choice in CHOICE_LABELS else []
    if r.fit_verdict == "tight":
        out.append("tight fit")
    if r.compat == "caveat":
        out.append("sw caveat")
    if r.negotiated:
        out.append("negotiated")
    if r.measured_tokens_per_s is not None:
        out.append("speed measured")
    elif r.efficiency_assumed:
        out.append("speed assumed")
    if r.nodes > 1 and "assumed" in r.network:
        out.append("fabric assumed")
    return ", ".join(out)


def shown_rows(rows: Sequence[RankRow], top: int) -> list[tuple[int, RankRow]]:
    """(rank, row) of the offers that may be chosen: the `top` cheapest per successful
    checkpoint, and each choice even when it ranks lower."""
    ok = [r for r in rows if r.verdict == "ok"]
    return [(i, r) for i, r in enumerate(ok, 1) if i <= top or r.choice]


def table(name: str, rows: Sequence[RankRow], top: int, currency: str) -> Table:
    t = Table(title=f"{name}: ranked by cost per successful checkpoint", box=box.SIMPLE_HEAD,
              title_justify="left", pad_edge=False, show_edge=False)
    # Figures never shrink (min_width); the offer, GPU and place names are cut instead.
    for col, fixed in (("#", 3), ("offer", 0), ("GPUs", 0), ("pricing", 9), ("where", 0),
                       (f"cost {currency}", 9), ("per ckpt", 8), ("hours", 5), ("flags", 0)):
        t.add_column(col, justify="right" if fixed and col != "pricing" else "left",
                     no_wrap=True, overflow="ellipsis", min_width=fixed or None,
                     max_width=OFFER_WIDTH if col == "offer" else None)
    for i, r in shown_rows(rows, top):
        t.add_row(str(i), escape(f"{r.provider} {r.sku}"), escape(_gpus(r)), _pricing(r),
                  escape(_where(r)), money(r.cost_to_finish, "").strip(),
                  money(r.cost_per_checkpoint, "").strip(), _hours(r), flags(r),
                  style="bold" if r.choice else None)
    return t


def apart_groups(rows: Sequence[RankRow]) -> dict[str, list[RankRow]]:
    """The rows that may not be chosen, by verdict, cheapest first (rows come sorted)."""
    groups: dict[str, list[RankRow]] = {}
    for r in rows:
        if r.verdict != "ok":
            groups.setdefault(r.verdict, []).append(r)
    order = list(APART_WORDS)
    return dict(sorted(groups.items(),
                       key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def _offer(r: RankRow) -> str:
    where = _where(r)
    return f"{_gpus(r)} {_pricing(r)} at {r.provider} {r.sku}" + (
        f" ({where})" if where != "—" else "")


def apart_line(verdict: str, group: list[RankRow], currency: str) -> str:
    """'set apart, sold out at snapshot: 3 (cheapest: … for 1.20 USD)'."""
    words = APART_WORDS.get(verdict, verdict)
    priced = [r for r in group if math.isfinite(r.cost_to_finish)]
    cheapest = (f" (cheapest: {_offer(priced[0])} for {money(priced[0].cost_to_finish, currency)}"
                ")" if priced else "")
    return f"  set apart, {words}: {len(group)}{cheapest}"


def _details(r: RankRow, currency: str) -> str:
    snap = f"snapshot {r.snapshot_date} ({r.age_days} d)" if r.snapshot_date else "snapshot ?"
    tps = (f"measured {r.measured_tokens_per_s:,.0f} tokens/s (estimate "
           f"{r.estimated_tokens_per_s:,.0f}, {r.estimate_error:+.0%})"
           if r.measured_tokens_per_s is not None
           else f"{r.tokens_per_s:,.0f} tokens/s" if r.tokens_per_s else "speed —")
    return (f"{snap}; {money(r.price_per_hour, currency)}/h per node; {tps}; marginal ckpt "
            f"{money(r.marginal_checkpoint_cost, currency)}; expected preemptions "
            f"{r.expected_preemptions:.2f}; {r.network}")


def _say(console: Console, text: str) -> None:
    """Provider text as written: no Rich markup or highlighting read into a SKU."""
    console.print(text, highlight=False, markup=False)


def print_workload(console: Console, name: str, rows: Sequence[RankRow], top: int,
                   currency: str, why: bool = False) -> None:
    """The table, the committed cell when no commitment pays, what is missing, and one line per
    kind of offer set apart; with `why` every shown row's reasons and every set-apart row."""
    if shown_rows(rows, top):
        console.print(table(escape(name), rows, top, currency))
    else:  # an empty table says less than this
        _say(console, f"{name}: no offer may be chosen (see below)")
    picks = {r.choice for r in rows if r.choice}
    noted = next((r for r in rows if r.choice_note), None)
    if noted:
        _say(console, f"  committed: {noted.choice_note}")
    missing = [CHOICE_LABELS[c] for c in CHOICE_LABELS
               if c not in picks and not (c == "committed" and noted)]
    if missing:
        _say(console, f"  no firm, fitting {', '.join(missing)} offer")
    groups = apart_groups(rows)
    for verdict, group in groups.items():
        _say(console, apart_line(verdict, group, currency))
    if not why:
        console.print()
        return
    for i, r in shown_rows(rows, top):
        _say(console, f"  #{i} {_offer(r)}: {_details(r, currency)}")
        for reason in r.reasons:
            _say(console, f"      - {reason}")
    for verdict, group in groups.items():
        _say(console, f"  set apart, {APART_WORDS.get(verdict, verdict)}:")
        for r in group:
            cost = (f" for {money(r.cost_to_finish, currency)}, {_hours(r)} h"
                    if math.isfinite(r.cost_to_finish) else "")
            _say(console, f"    {_offer(r)}{cost}: {'; '.join(r.reasons)}")
    console.print()
