"""A committed or reserved choice belongs in the headline only when it pays for this run.

The cheapest committed offer for a short run is often a whole reserved node for a whole term:
hundreds of times the on-demand choice's cost. Such a row loses its `choice`; instead it carries
`choice_note`: that no commitment pays for a run this size, and which term would pay from what
usage, in GPU-hours a month of the same GPU model, with `gpuprices compare`'s arithmetic
(sizing/rent_or_own.py: a term paid for every hour against the cheapest firm on-demand price
per GPU-hour), so that the two commands agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuprices.sizing import offer_row as orow
from gpuprices.sizing.rank_row import RankRow
from gpuprices.sizing.reasons import choice_of
from gpuprices.sizing.rent_or_own import (
    WEEKS_PER_MONTH,
    Demand,
    TermPrice,
    break_even_hours,
    rented,
)


def _per_gpu_hour(o: dict[str, Any]) -> float | None:
    price = orow.price(o.get("price_per_hour"))
    count = float(o.get("gpu_count") or 0)
    if price is None or count < 1 or orow.is_stale(o) or orow.price_caveat(o):
        return None
    return price / count


def _cheapest(records: Sequence[dict[str, Any]], gpu: str, committed: bool
              ) -> list[TermPrice]:
    """The firm, fresh prices per GPU-hour of `gpu`: the cheapest on-demand one, or every
    committed one with a term (cheapest per provider, SKU and term)."""
    best: dict[tuple, TermPrice] = {}
    for o in records:
        if o.get("gpu_model") != gpu:
            continue
        model = str(o.get("pricing_model") or "")
        term = orow.commitment_months(o)
        if committed and (choice_of(model) != "committed" or not term):
            continue
        if not committed and model != "on_demand":
            continue
        p = _per_gpu_hour(o)
        if p is None:
            continue
        key = (o.get("provider"), o.get("sku"), term) if committed else ()
        if key not in best or p < best[key].price_per_gpu_hour:
            best[key] = TermPrice(model, term, p, str(o.get("provider") or ""),
                                  str(o.get("sku") or ""), o.get("snapshot_date"))
    return list(best.values())


def pays_from(records: Sequence[dict[str, Any]], gpu: str, gpus: int, currency: str = ""
              ) -> tuple[TermPrice, TermPrice, float] | str:
    """(the committed term that pays soonest, the on-demand price it beats, GPU-hours a month
    of `gpus` GPUs from which it pays), or why none does."""
    on_demand = _cheapest(records, gpu, committed=False)
    if not on_demand:
        return f"no firm on-demand price for {gpu} to break even against"
    base = on_demand[0]
    best: tuple[TermPrice, TermPrice, float] | None = None
    for term in _cheapest(records, gpu, committed=True):
        demand = Demand("run", gpu, gpus, 0.0, float(term.commitment_months or 1))
        h_week = break_even_hours(rented(term, demand), rented(base, demand))
        if h_week is None:
            continue
        gpu_hours = h_week * WEEKS_PER_MONTH * gpus
        if best is None or gpu_hours < best[2]:
            best = (term, base, gpu_hours)
    if best is None:
        return (f"no committed term for {gpu} ever beats its on-demand price "
                f"({base.price_per_gpu_hour:,.2f} {currency} per GPU-hour at {base.provider})"
                .replace("  ", " "))
    return best


def note(committed: RankRow, on_demand: RankRow, records: Sequence[dict[str, Any]]) -> str:
    """The headline's committed cell when the commitment does not pay for this run."""
    ratio = committed.cost_to_finish / on_demand.cost_to_finish
    head = (f"no commitment pays for a run this size: the best committed offer "
            f"({committed.provider} {committed.sku}) costs x{ratio:,.1f} the on-demand "
            "choice")
    found = pays_from(records, committed.gpu_model, committed.gpus or 1, committed.currency)
    if isinstance(found, str):
        return f"{head}; {found}"
    term, base, gpu_hours = found
    cur = committed.currency
    return (f"{head}; a {term.commitment_months:g}-month term ({term.provider} {term.sku}, "
            f"{term.price_per_gpu_hour:,.2f} {cur} per GPU-hour) pays from "
            f"{gpu_hours:,.0f} GPU-hours a month on {committed.gpus or 1} x "
            f"{committed.gpu_model} (against on-demand at {base.provider}, "
            f"{base.price_per_gpu_hour:,.2f} {cur} per GPU-hour; as `gpuprices compare` "
            "counts it)")


def settle(rows: list[RankRow], records: Sequence[dict[str, Any]]) -> None:
    """Take `choice` off a committed pick that costs more to finish this run than the
    on-demand pick, and say why on it (choice_note)."""
    picks = {r.choice: r for r in rows if r.choice}
    committed, on_demand = picks.get("committed"), picks.get("on_demand")
    if committed is None or on_demand is None:
        return
    if committed.cost_to_finish <= on_demand.cost_to_finish:
        return
    committed.choice = None
    committed.choice_note = note(committed, on_demand, records)
