"""Lium: the executors book `GET https://lium.io/api/executors`, one object per machine.

One price: `price_per_gpu` is USD per GPU-hour (already per GPU; the machine costs that x
`gpu_count`, which is `price_per_hour`). Miners set prices, so float residue
(`8.000300000000001`) is kept as written. `tier` is `secure` (on-demand) or `spot`
(interruptible), cross-checked with `specs.is_spot`: a row where they disagree is refused with
its reason rather than guessed. `pending_price_per_hour` is a scheduled future change, never the
current price (kept in `extra.pending_price_per_hour`). `machine_name` is the exact part label
("NVIDIA RTX PRO 6000 Blackwell Server Edition" vs "Workstation Edition", "H200" vs "H200 NVL")
and is what the alias table maps.

Availability: `available_gpu_count` may be below `gpu_count` (4 of 8 free): `available` is
whether any GPU of the machine is free, the count in `extra.available_gpu_count`.

`parse` returns one offer per machine (`extra.listing_id` = the executor id, `extra.host` = the
same id: each executor is one machine, and the miner hotkeys are placeholders in the bundled
capture); `postprocess` reduces the book to min / p25 / median per GPU model, count and tier
(spiders/marketplace.py) and adds, from the day's `/api/machines` catalog when it was read, the
fleet size (`extra.fleet_gpus` = `total_gpu_count`) and rented share (`extra.rental_rate`) of
the same exact model name. The capacity matrix uses collapsed names and is not joined.
"""

from __future__ import annotations

import json
from typing import Any

from gpuprices.spiders import marketplace
from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import load_json, parse_price
from gpuprices.spiders.providers.lium.source import CAPACITY_URL, MACHINES_URL
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "lium"
TIERS = {"secure": "on_demand", "spot": "spot"}


def wants(meta: CaptureMeta) -> bool:
    return meta.url not in (MACHINES_URL, CAPACITY_URL)


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    doc = load_json(body, meta)
    if not isinstance(doc, list):
        raise ParseError(PROVIDER, meta.url, "unknown layout: the executors answer is not a list")
    offers = [o for o in (_machine(r, meta) for r in doc if isinstance(r, dict)) if o]
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"no machine with a price_per_gpu and a tier "
                         f"({len(doc)} entries in the answer)")
    return offers


def _machine(r: dict[str, Any], meta: CaptureMeta) -> Offer | None:
    name = str(r.get("machine_name") or "").strip()
    per_gpu = parse_price(r.get("price_per_gpu"))
    count = r.get("gpu_count")
    if not name or per_gpu is None or not isinstance(count, int) or count < 1:
        skip_row("machine without name, price_per_gpu or gpu_count")
        return None
    tier = r.get("tier")
    is_spot = (r.get("specs") or {}).get("is_spot")
    if tier not in TIERS or (is_spot is not None and bool(is_spot) != (tier == "spot")):
        skip_row(f"tier {tier!r} disagrees with specs.is_spot {is_spot!r}")
        return None
    free = r.get("available_gpu_count")
    loc = r.get("location") or {}
    return make_offer(
        meta,
        sku=f"{name}/{count}x/machine {r.get('id')}",
        gpu_model=canonical_gpu(name),
        gpu_count=count,
        price_per_hour=per_gpu * count,
        pricing_model=TIERS[tier],
        region=loc.get("country_code") or None,
        currency="USD",
        interconnect="infiniband" if r.get("on_infiniband_fabric") else None,
        available=None if not isinstance(free, int) else free > 0,
        extra={
            "source": "api",
            "gpu_wording": name,
            "listing_id": r.get("id"),
            "host": r.get("id"),
            "price_field": "price_per_gpu",
            "price_per_gpu": r.get("price_per_gpu"),
            "tier": tier,
            "available_gpu_count": free,
            "pending_price_per_hour": r.get("pending_price_per_hour"),
            "country": loc.get("country"),
            "city": loc.get("city"),
            "reliability_score": r.get("reliability_score"),
        },
    )


def fleet(body: bytes) -> dict[str, dict[str, Any]]:
    """The /api/machines catalog by exact model name: fleet GPUs and rented share."""
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    if not isinstance(doc, list):
        return {}
    return {m["name"]: {"fleet_gpus": m.get("total_gpu_count"),
                        "rental_rate": m.get("rental_rate")}
            for m in doc if isinstance(m, dict) and m.get("name")}


def postprocess(offers: list[Offer], captures: list) -> list[Offer]:
    """The day's book as loaded: min / p25 / median per GPU model, count and tier
    (spiders/marketplace.py), each row with its model's fleet size when the catalog was read."""
    rows = marketplace.summarise(offers)
    catalog = [c for c in captures if c.url == MACHINES_URL and c.status == 200]
    if catalog:
        by_name = fleet(catalog[-1].body)
        for o in rows:
            o.extra.update(by_name.get(o.extra.get("gpu_wording"), {}))
    return rows
