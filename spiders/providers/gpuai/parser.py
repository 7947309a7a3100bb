"""GPU.ai: the pricing answer `{"data": [...], "next_cursor": ...}`, one row per offering.

One price: `price_per_hour` is USD (the API names no currency; the site prices in dollars) per
hour for the WHOLE configuration of `gpu_count` GPUs (B300 lists only 8x: 50.62 = 6.33 per GPU),
so the per-GPU price is `price_per_hour / gpu_count` (make_offer derives it). `tier` spot is
spot; on-demand on `community` capacity is the community tier (hosts of varying quality, as
Runpod's Community Cloud), on `secure` capacity on-demand. `disk_price_per_gb_hour` is storage,
kept beside the price, never added to it.

One row per offering and region, as listed. Traps (../shared/PROVIDERS_MORE2.md, GPU.ai): odd
counts (7x RTX 3090) and outliers (4x RTX 5090 at 154.67) are kept as written; `available` is a
count of free machines, 0 = sold out (rows the API shows with include_unavailable=true).
"""

from __future__ import annotations

from typing import Any

from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import load_json, parse_price, spaced_gpu_name
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "gpuai"


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    doc = load_json(body, meta)
    rows = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        raise ParseError(PROVIDER, meta.url, "no 'data' list in the JSON")
    offers = [o for o in (_row(r, meta) for r in rows if isinstance(r, dict)) if o]
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"no priced offering among {len(rows)} rows")
    return offers


def _row(r: dict[str, Any], meta: CaptureMeta) -> Offer | None:
    price = parse_price(r.get("price_per_hour"))
    count = r.get("gpu_count")
    gpu_type = str(r.get("gpu_type") or "").strip()
    if price is None or not isinstance(count, int) or count < 1 or not gpu_type:
        skip_row("offering without a price, a GPU count or a GPU type")
        return None
    tier = r.get("tier")
    community = r.get("capacity_class") == "community" or r.get("community") is True
    if tier == "spot":
        model = "spot"
    elif tier == "on_demand":
        model = "community" if community else "on_demand"
    else:
        skip_row(f"tier {tier!r}")
        return None
    wording = spaced_gpu_name(gpu_type)
    free = r.get("available")
    return make_offer(
        meta,
        sku=f"{gpu_type}/{count}x/{r.get('capacity_class') or '?'}/{r.get('deployment_type')}"
            f"/offering {r.get('offering_id')}",
        gpu_model=canonical_gpu(wording),
        gpu_count=count,
        price_per_hour=price,
        pricing_model=model,
        region=str(r.get("region") or "").strip() or None,
        vcpus=r.get("cpu_cores"),
        ram_gb=r.get("ram_gb"),
        currency="USD",
        available=free > 0 if isinstance(free, int | float) else None,
        extra={
            "source": "api",
            "gpu_wording": gpu_type,
            "offering_id": r.get("offering_id"),
            "capacity_class": r.get("capacity_class"),
            "deployment_type": r.get("deployment_type"),
            "machines_free": free,
            "disk_price_per_gb_hour": r.get("disk_price_per_gb_hour"),
            "storage_gb": r.get("storage_gb"),
        },
    )
