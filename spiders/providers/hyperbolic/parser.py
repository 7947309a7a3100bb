"""Hyperbolic: the rental-options answer, a bare JSON list of options.

One price: `costPerHourCents` is US CENTS per hour for the whole option (`gpuCount` GPUs), so
the option costs cents / 100 USD per hour and one GPU cents / gpuCount / 100.
`providerCostPerHourCents` is the supplier's cost, not a customer price (placeholders in the
recorded answer, missing on some options): never read. An option with `enabled` false is shown
but cannot be rented: no row. `totalAvailable` missing means unknown, not none.

`parse` returns one offer per option (`extra.listing_id` = region/type/count/network, Hyperbolic
gives no id; `extra.host` None: every option is its own seller); `postprocess` reduces them to
the min / p25 / median rows per GPU model and GPU count (spiders/marketplace.py). The same GPU
costs very different amounts by region (1x H100 SXM5: 319 cents in us-east-1, 485 in ca-east-3).
"""

from __future__ import annotations

from typing import Any

from gpuprices.spiders import marketplace
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import load_json, parse_price
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "hyperbolic"
CENTS_PER_USD = 100


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    doc = load_json(body, meta)
    if not isinstance(doc, list):
        raise ParseError(PROVIDER, meta.url, "rental options are not a JSON list")
    offers = [o for o in (_option(r, meta) for r in doc if isinstance(r, dict)) if o]
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"no enabled option with costPerHourCents among "
                         f"{len(doc)} options")
    return offers


def _network(r: dict[str, Any]) -> str | None:
    kind = r.get("connectionType")
    variant = r.get("ethernetVariant")
    return f"{kind} ({variant})" if kind and variant else kind


def _option(r: dict[str, Any], meta: CaptureMeta) -> Offer | None:
    if r.get("enabled") is False:
        return None
    cents = parse_price(r.get("costPerHourCents"))
    count = r.get("gpuCount")
    if cents is None or not isinstance(count, int) or count < 1:
        return None
    gpu = str(r.get("gpuType") or "").strip()
    form = str(r.get("gpuFormFactor") or "").strip()
    wording = f"{gpu} {form}".strip()
    nodes = [n for n in r.get("nodes") or [] if isinstance(n, dict)]
    region = r.get("region")
    extra = {
        "source": "api",
        "gpu_wording": wording,
        "listing_id": "/".join(str(x) for x in (region, r.get("machineType"), count,
                                                 _network(r))),
        "host": None,
        "price_field": "costPerHourCents",
        "cost_per_hour_cents": r.get("costPerHourCents"),
        "machine_type": r.get("machineType"),
    }
    if r.get("totalAvailable") is not None:
        extra["total_available"] = r["totalAvailable"]
    return make_offer(
        meta,
        sku=f"{wording}/{count}x/{extra['listing_id']}",
        gpu_model=canonical_gpu(wording),
        gpu_count=count,
        price_per_hour=cents / CENTS_PER_USD,
        pricing_model="on_demand",
        region=region,
        vcpus=_sum(nodes, "vcpuCount") or _sum(nodes, "cpuCount"),
        ram_gb=_sum(nodes, "ramGb"),
        interconnect=_network(r),
        currency="USD",
        available=(r["totalAvailable"] > 0) if isinstance(r.get("totalAvailable"), int)
        else None,
        extra=extra,
    )


def _sum(nodes: list[dict[str, Any]], key: str) -> float | None:
    values = [n[key] for n in nodes if isinstance(n.get(key), int | float)]
    return float(sum(values)) if values else None


def postprocess(offers: list[Offer], captures: list) -> list[Offer]:
    """The day's options as loaded: min / p25 / median per GPU model and count
    (spiders/marketplace.py)."""
    return marketplace.summarise(offers)
