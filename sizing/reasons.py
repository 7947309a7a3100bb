"""The sentences a ranked row gives for its verdict and its cost: each figure says where it comes
from, so that a buyer can check it (fit, layout, node bought whole, spot risk, commitment term,
age and firmness of the price)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpuprices.sizing.cost import CostEstimate
from gpuprices.sizing.fit import fit_sentence
from gpuprices.sizing.memory import MemoryEstimate
from gpuprices.sizing.throughput import Throughput
from gpuprices.sizing.workload import Workload

POOR_SCALING = 0.8  # below this scaling efficiency the verdict says so
# What multi-card PCIe boxes reached per card against one card of the same kind in one training
# code (github.com/whyNLP/tinyllama README, TinyLlama 1.1B, 2048-token blocks, no
# accumulation): 4 x RTX A6000 DDP 40.4k / 4 / 12.2k = 83%, 8 x RTX A6000 DDP 73.3k / 8 / 12.2k
# = 75%, 8 x RTX 3090 ZeRO-2 36k / 8 / 8.2k = 55%, where the step model times them at 100%,
# 100% and 79% (bench/pcie_cards.py; the 3090's ZeRO-2 gather pays the shared host's
# 6.1 GB/s, the DDP all-reduces still hide behind the backward). The step model is not fitted
# to them (their hosts, P2P setting and overlap are not stated): a PCIe offer says so instead.
PCIE_PUBLISHED_SCALING = (40.4 / 4 / 12.2, 73.3 / 8 / 12.2, 36 / 8 / 8.2)

# Which prices compete in which of the three side-by-side choices. Runpod's community cloud has
# its own interruptible price (the API's communitySpotPrice, parsed as `spot`), so its
# `community` price is the uninterrupted one: it competes as on-demand, and its reason says it
# runs on third-party hosts (docs/providers.md, Runpod).
CHOICES = {"on_demand": ("on_demand", "community"), "spot": ("spot",),
           "committed": ("reserved", "committed")}


def choice_of(pricing_model: str) -> str | None:
    """The side-by-side choice a pricing model competes in (on_demand, spot, committed)."""
    return next((c for c, models in CHOICES.items() if pricing_model in models), None)


def fit(w: Workload, mem: MemoryEstimate, capacity_gb: float, tp: Throughput, nodes: int,
        n: int) -> list[str]:
    """The headroom (or, for a tight fit, the risk: sizing/fit.py), and what spreading the job
    over GPUs and nodes costs in speed."""
    reasons = [fit_sentence(mem.verdict or "no", mem.per_gpu_gb, capacity_gb, mem.margin,
                            mem.margin_measured)]
    if tp.scaling_efficiency < POOR_SCALING:
        where = f" ({nodes} nodes)" if nodes > 1 else ""
        reasons.append(f"{tp.link} across {n} GPUs{where} over {tp.link_gbs:.3g} GB/s per GPU: "
                       f"scaling {tp.scaling_efficiency:.0%}")
    elif nodes > 1:
        reasons.append(f"{nodes} nodes over {tp.link_gbs:.3g} GB/s per GPU")
    if tp.link == "pcie" and n > 1:
        reasons.append(pcie_box(tp))
    return reasons


def pcie_box(tp: Throughput) -> str:
    """A multi-GPU job on PCIe cards: the published per-card scaling of such boxes is below what
    the step model gives, so the time is the fast end (PCIE_PUBLISHED_SCALING)."""
    lo, hi = min(PCIE_PUBLISHED_SCALING), max(PCIE_PUBLISHED_SCALING)
    return (f"PCIe box, no NVLink: scaling {tp.scaling_efficiency:.0%} is the fast end; "
            f"published 4-8 card RTX A6000 / RTX 3090 runs kept {lo:.0%}-{hi:.0%} of one card's "
            "rate per card where the step model gives 79%-100% (whyNLP/tinyllama): time one "
            "node before committing")


def whole_node(per_node: int, nodes: int, used: int, cap: int | None) -> str:
    """A node bigger than the job is paid for whole: say so, and why no more GPUs are used."""
    bought = f"{per_node}-GPU node" if nodes == 1 else f"{nodes} x {per_node}-GPU nodes"
    return (f"{bought} priced whole for a {used}-GPU job (max_gpus {cap}: "
            f"{per_node * nodes - used} GPU(s) idle)")


def per_gpu_price(provider: str, shapes: tuple[int, ...], per_node: int, listed: float,
                  currency: str) -> str:
    return (f"priced per GPU: a {per_node}-GPU node at {per_node} x {listed:g} "
            f"{currency}/h ({provider} sells nodes of {', '.join(map(str, shapes))} GPUs)")


def spot(cost: CostEstimate, nodes: int) -> str:
    band = cost.inputs["interruption_band"]
    src = cost.inputs["interruption_band_source"]
    return (f"spot risk: {band} per node ({src}) x {nodes} node(s) over "
            f"{cost.wall_hours:,.1f} h -> {cost.expected_preemptions:.2f} expected "
            f"preemptions, +{cost.rework_hours:.2f} h rework")


def never_finishes(cost: CostEstimate, nodes: int) -> str:
    """A spot job whose nodes are reclaimed faster than it recovers a checkpoint interval."""
    lam = cost.inputs["preemptions_per_hour"]
    return (f"spot: {nodes} node(s) at {cost.inputs['interruption_band']} per node "
            f"({cost.inputs['interruption_band_source']}) give a preemption every "
            f"{1 / lam:.1f} h, less than the restart plus half a checkpoint interval "
            f"({cost.inputs['restart_h'] + cost.inputs['interval_h'] / 2:.1f} h): the run never "
            "finishes")


def commitment(cost: CostEstimate) -> str:
    term = cost.inputs["term_hours"]
    months = cost.inputs["commitment_months"]
    return (f"{months:g}-month commitment paid whole: {term:,.0f} h per node; the job uses "
            f"{cost.wall_hours:,.1f} h ({cost.wall_hours / term:.1%} of the term)")


def no_term(cost: CostEstimate) -> str:
    """A reservation priced per hour with no term: its own billing rules (GCP calendar mode:
    whole days, at least one), else the job's hours."""
    inc, least = cost.inputs.get("billing_increment_s"), cost.inputs.get("min_billing_s")
    if least or inc:
        return (f"reserved capacity without a term: billed in steps of {(inc or 3600) / 3600:g} h"
                f", at least {(least or 0) / 3600:g} h: {cost.billed_hours:,.1f} h per node paid "
                f"for {cost.wall_hours:,.1f} h of run")
    return ("reserved capacity without a term on the offer: billed for the job's hours only "
            "(the provider's minimum reservation is not in the row)")


def community() -> str:
    return "community cloud (third-party hosts, not interruptible): counted as on-demand"


def snapshot_age(o: dict[str, Any]) -> str:
    """The offer's snapshot date and age, as offers_as_of gives them."""
    day, age = o.get("snapshot_date"), o.get("age_days")
    if day is None:
        return "snapshot date unknown"
    when = day.isoformat() if isinstance(day, dt.date) else str(day)
    return f"snapshot of {when}" + ("" if age is None else f" ({int(age)} d old)")


def sold_out(o: dict[str, Any]) -> str:
    return (f"sold out at snapshot: the source listed no stock ({snapshot_age(o)}); "
            "not recommended")


def stale(o: dict[str, Any]) -> str:
    return f"stale: {snapshot_age(o)} is past the age limit; not recommended"
