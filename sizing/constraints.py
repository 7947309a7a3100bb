"""Checking one offer against the buyer's constraints (sizing/constraint_fields.py: the fields,
areas and parsing): where it runs, whether it finishes by the deadline, whether machines sold
apart can be one cluster. Each check returns the sentence sizing/rank.py lists the offer apart
with, or None.
"""

from __future__ import annotations

from dataclasses import replace

from gpuprices.sizing import network as net
from gpuprices.sizing.constraint_fields import AREAS
from gpuprices.sizing.workload_fields import Workload

# Verdicts of offers that break one of the buyer's constraints: priced, never chosen.
CONSTRAINT_VERDICTS = ("not_cluster", "misses_deadline", "outside_region")


def allowed_countries(w: Workload) -> frozenset[str] | None:
    """The countries the workload may run in (None: anywhere)."""
    if not w.regions and not w.countries:
        return None
    out: set[str] = set(w.countries or ())
    for r in w.regions or ():
        out |= AREAS.get(r, frozenset())
    return frozenset(out)


def where_text(w: Workload) -> str:
    return ", ".join([*(w.regions or ()), *(w.countries or ())])


def outside_region(w: Workload, provider: str, region: str | None, country: str | None,
                   why_country: str) -> str | None:
    """Why the offer is outside the workload's regions, or None when it may run there."""
    if not w.regions and not w.countries:
        return None
    if region and region in (w.regions or ()):
        return None
    allowed = allowed_countries(w) or frozenset()
    if country and country in allowed:
        return None
    if not country:
        return f"outside the allowed regions ({where_text(w)}): country {why_country}"
    return (f"outside the allowed regions ({where_text(w)}): {provider} "
            f"{region or ''} is in {country}").replace("  ", " ")


def deadline_layouts(w: Workload) -> list[Workload]:
    """The GPU counts a deadline may use: the workload as written, and, when it sets
    `deadline_hours` and a `max_gpus` above `gpus`, the same job on 2x, 4x, ... `gpus` up to
    `max_gpus` (sizing/rank.py keeps, per offer, the cheapest that finishes in time)."""
    if w.deadline_hours is None or not w.gpus or not w.max_gpus or w.max_gpus <= w.gpus:
        return [w]
    out, n = [w], w.gpus * 2
    while n <= w.max_gpus:
        out.append(replace(w, gpus=n))
        n *= 2
    return out


def misses_deadline(w: Workload, hours: float) -> str | None:
    if w.deadline_hours is None or hours <= w.deadline_hours:
        return None
    return (f"misses the deadline (needs {hours:,.1f} h, deadline {w.deadline_hours:,.0f} h"
            + (f" with at most {w.gpu_cap} GPUs" if w.gpu_cap else "") + ")")


def is_cluster(network: net.OfferNetwork, pricing_model: str) -> bool:
    """Sold as a cluster or with a published inter-node fabric built for GPU collectives
    (InfiniBand, RoCE, EFA, GPUDirect-TCPX(O): sizing/network.py); community pods on
    third-party hosts never are, whatever their host has."""
    return pricing_model != "community" and net.is_fast(network)


def not_a_cluster(nodes: int, network: net.OfferNetwork, pricing_model: str) -> str | None:
    """Why a job across `nodes` machines cannot run on this offer, or None."""
    if nodes <= 1 or is_cluster(network, pricing_model):
        return None
    if pricing_model == "community":
        what = "community pods on independent third-party hosts, no shared fabric"
    elif network.fabric == "unknown":
        what = "the provider publishes no inter-node fabric for this offer"
    else:
        what = f"only {network.fabric} between machines, no InfiniBand/RoCE/EFA"
    return (f"not a cluster: {nodes} separate machines ({what}); a job across nodes needs "
            "an offer sold as a cluster or with a published RDMA fabric")
