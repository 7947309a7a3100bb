"""Vast.ai: the offer search answer `{"offers": [...]}`, one object per rentable offer.

One price: `dph_total` is USD per INSTANCE-hour for `num_gpus` GPUs, including the default disk
(`storage_total_cost`); `dph_base` is the GPU part alone. A buyer pays `dph_total`, so the per-GPU
price is `dph_total / num_gpus` (`make_offer` derives it from gpu_count). `search.totalHour`
repeats `dph_total`; `instance.gpuCostPerHour` is 0 and is not a price.

`parse` returns one offer per listing (`extra.listing_id` = the offer id, `extra.host` = its
`machine_id`); `postprocess` reduces the day's book to the min / p25 / median rows per GPU model
and GPU count (spiders/marketplace.py), which is what is loaded. The raw answers, every listing
in them, stay in the archive.

Traps (../shared/PROVIDERS_MORE.md, Vast.ai): `verification` is a string (verified, unverified,
deverified), kept as written and not filtered; `gpu_frac` < 1 is a slice of a bigger host, still
whole GPUs; `gpu_ram` is MiB; `is_bid` true or `rentable` false is not an on-demand offer to buy.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpuprices.spiders import marketplace
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import load_json, parse_price
from gpuprices.spiders.providers.vast.source import query_of
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "vast"

MIB_PER_GB = 1024  # gpu_ram is in MiB: 81559 = an 80 GB H100 (PROVIDERS_MORE.md)


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    doc = load_json(body, meta)
    records = doc.get("offers") if isinstance(doc, dict) else None
    if not isinstance(records, list):
        raise ParseError(PROVIDER, meta.url, "no 'offers' list in the JSON")
    offers = [o for o in (_listing(r, meta) for r in records if isinstance(r, dict)) if o]
    if not offers:
        q = query_of(meta.url) or {}
        name = (q.get("gpu_name") or {}).get("eq", "?")
        raise ParseError(PROVIDER, meta.url, f"no rentable on-demand offer with a price for "
                         f"gpu_name {name!r} ({len(records)} offers in the answer)")
    return offers


def _listing(r: dict[str, Any], meta: CaptureMeta) -> Offer | None:
    if r.get("rentable") is False or r.get("is_bid") is True:
        return None
    price = parse_price(r.get("dph_total"))
    count = r.get("num_gpus")
    name = str(r.get("gpu_name") or "").strip()
    if price is None or not isinstance(count, int) or count < 1 or not name:
        return None
    memory = round(r["gpu_ram"] / MIB_PER_GB, 1) if r.get("gpu_ram") else None
    extra = {
        "source": "api",
        "gpu_wording": name,
        "listing_id": r.get("id"),
        "host": r.get("machine_id"),
        "price_field": "dph_total",
        "dph_base": r.get("dph_base"),
        "storage_total_cost": r.get("storage_total_cost"),
        "verification": r.get("verification"),
        "gpu_frac": r.get("gpu_frac"),
        "geolocation": r.get("geolocation"),
        "reliability": r.get("reliability2", r.get("reliability")),
    }
    return make_offer(
        meta,
        sku=f"{name}/{count}x/offer {r.get('id')}",
        gpu_model=canonical_gpu(name, memory),
        gpu_memory_gb=memory,
        gpu_count=count,
        price_per_hour=price,
        pricing_model="on_demand",
        region=(r.get("geolocation") or "").strip(", ") or None,
        vcpus=r.get("cpu_cores_effective"),
        ram_gb=round(r["cpu_ram"] / MIB_PER_GB, 1) if r.get("cpu_ram") else None,
        currency="USD",
        available=not r.get("rented", False),
        extra=extra,
    )


def capture_time(record: dict[str, Any]) -> dt.datetime | None:
    """When an offer was read: the payload has no timestamp, but `end_date - duration` (both
    Unix seconds) is the moment the search ran (PROVIDERS_MORE.md, Vast.ai)."""
    try:
        return dt.datetime.fromtimestamp(float(record["end_date"]) - float(record["duration"]),
                                         dt.UTC)
    except (KeyError, TypeError, ValueError):
        return None


def postprocess(offers: list[Offer], captures: list) -> list[Offer]:
    """The day's book as loaded: min / p25 / median per GPU model and count, every window of
    one book merged (spiders/marketplace.py)."""
    return marketplace.summarise(offers)
