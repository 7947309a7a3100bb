"""GCP Cloud Billing Catalog API (`/v1/services/6F81-5844-456A/skus`) -> machine offers.

The API prices parts, not machines: a machine's hourly price is
    vCPUs x "<family> Instance Core" + RAM GiB x "<family> Instance Ram" + GPUs x "<GPU> GPU"
    (+ bundled local SSD GiB x "SSD backed Local Storage" per GiB-month / 730, A2 Ultra and A3)
(docs/providers.md; Cyclenerd's pricing calculator sums the same SKUs). One SKU page need not hold
every part of a machine, so parse() returns offers for each machine type of the table whose parts
are all on this page, in every region all those parts serve (`serviceRegions`), and raises
ParseError when no machine is complete. Only OnDemand SKUs are read: spot and commitment prices
come from the pricing page path for now. SKU descriptions are matched by prefix ("... running in"),
the patterns Cyclenerd's mapping.csv uses, so "attached to Spot" and "Commitment v1:" SKUs never
match. Non-USD SKUs keep their currency; a machine whose parts disagree on currency is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.gcp.machines import Machine, machines
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer

HOURS_PER_MONTH = 730  # Google's monthly estimates use 730 h (cloud.google.com pricing FAQ)


@dataclass(frozen=True)
class Part:
    sku_id: str
    price: float  # per unit-hour (GiB-month converted to GiB-hour)
    currency: str
    regions: frozenset[str]
    effective: str | None


def _unit_price(sku: dict[str, Any]) -> tuple[float, str, str, str | None] | None:
    infos = sku.get("pricingInfo") or []
    if not infos:
        return None
    info = infos[0]
    expr = info.get("pricingExpression") or {}
    rates = expr.get("tieredRates") or []
    if not rates:
        return None
    # The first tier (startUsageAmount 0) is the list price; later tiers are volume discounts.
    rate = min(rates, key=lambda r: float(r.get("startUsageAmount") or 0))
    up = rate.get("unitPrice") or {}
    value = float(up.get("units") or 0) + float(up.get("nanos") or 0) / 1e9
    return value, str(up.get("currencyCode") or "USD"), str(expr.get("usageUnit") or ""), \
        info.get("effectiveTime")


def _parts(skus: list[dict[str, Any]]) -> dict[str, list[Part]]:
    """OnDemand SKUs by description prefix (text before ' running in' / ' in ')."""
    found: dict[str, list[Part]] = {}
    for sku in skus:
        cat = sku.get("category") or {}
        if cat.get("usageType") != "OnDemand":
            continue
        desc = str(sku.get("description") or "")
        priced = _unit_price(sku)
        if priced is None:
            continue
        value, currency, unit, effective = priced
        if unit == "GiBy.mo":
            value = value / HOURS_PER_MONTH
        elif unit not in ("h", "GiBy.h"):
            continue
        if value <= 0:
            continue
        if " running in " in desc:
            key = desc.split(" running in ")[0] + " running in"
        elif desc.startswith("SSD backed Local Storage") and "Spot" not in desc:
            key = "SSD backed Local Storage"
        else:
            continue
        regions = frozenset(sku.get("serviceRegions") or [])
        found.setdefault(key, []).append(
            Part(str(sku.get("skuId")), value, currency, regions, effective))
    return found


def _needs(m: Machine) -> list[tuple[str, float]] | None:
    if not (m.cpu_ram_family and m.gpu_sku_prefix):
        return None
    needs = [
        (f"{m.cpu_ram_family} Instance Core running in", m.vcpus),
        (f"{m.cpu_ram_family} Instance Ram running in", m.ram_gib),
        (m.gpu_sku_prefix, m.gpu_count),
    ]
    if m.local_ssd_gib:
        needs.append(("SSD backed Local Storage", m.local_ssd_gib))
    return needs


def parse_billing(data: dict[str, Any], meta: CaptureMeta) -> list[Offer]:
    skus = data.get("skus")
    if not isinstance(skus, list):
        raise ParseError(meta.provider, meta.url, "Billing Catalog page without a skus list")
    try:
        parts = _parts(skus)
    except (ValueError, TypeError, AttributeError) as exc:
        # units/nanos are numbers (or numeric strings) in the API; anything else is not a price.
        raise ParseError(meta.provider, meta.url, f"a SKU price is not a number ({exc})") from exc
    offers: list[Offer] = []
    for m in machines().values():
        needs = _needs(m)
        if needs is None or any(key not in parts for key, _ in needs):
            continue
        regions = sorted(set.union(*(set(p.regions) for p in parts[needs[0][0]])))
        for region in regions:
            chosen = []
            for key, qty in needs:
                cands = [p for p in parts[key] if region in p.regions]
                if len(cands) != 1:
                    break
                chosen.append((cands[0], qty))
            else:
                if len({p.currency for p, _ in chosen}) != 1:
                    continue
                # rounded to 1e-9 USD: the API states nanos, float sums add noise below it
                price = round(sum(p.price * qty for p, qty in chosen), 9)
                effective = max((p.effective for p, _ in chosen if p.effective), default=None)
                offers.append(make_offer(
                    meta,
                    sku=m.machine_type,
                    gpu_model=m.gpu_model,
                    gpu_count=m.gpu_count,
                    gpu_memory_gb=m.gpu_memory_gb,
                    vcpus=m.vcpus,
                    ram_gb=m.ram_gib,
                    interconnect=m.interconnect,
                    price_per_hour=price,
                    pricing_model="on_demand",
                    region=region,
                    currency=chosen[0][0].currency,
                    extra={
                        "source": "api",
                        "gpu_wording": m.gpu_sku_prefix.removesuffix(" running in"),
                        "billing_skus": {p.sku_id: qty for p, qty in chosen},
                        # when the SKU prices took effect: history, not an announced change
                        "effective_time": effective,
                    },
                ))
    if not offers:
        raise ParseError(meta.provider, meta.url,
                         "no machine type whose vCPU, RAM and GPU SKUs are all on this page")
    return offers
