"""Sesterce's console book: `self.__next_f.push([1,"..."])` chunks of
https://cloud.sesterce.com/compute, joined, JSON-unescaped once, then the one
`"filteredOffers":[...]` array read as JSON.

One price: `hourlyPrice` is USD per INSTANCE-hour for `gpuCount` GPUs (H200 x8 28.16 = 3.52 per
GPU); `hourlySpotPrice` when `spotOfferAvailable` is the spot price. One row per region of the
offer's `availability` (one price for all, each region with its own `available` and, where
given, `countryCode` as extra.country).

Each offer runs on an upstream cloud Sesterce does not name (`cloud.name` "AZ_22"): the label is
kept as `extra.upstream_label` and the buyer reads "via Sesterce from an unnamed cloud (AZ_22)";
with no cloud named, no row can be matched to a first-party offer (spiders/resold.py).

Traps (../shared/PROVIDERS_MORE2.md, Sesterce console): CPU tiers have `gpuCount` 0 (skipped);
`gpuName` is raw (`A100_80G`, `RTXPro6000`) and read with `configuration.interconnect` and the
per-GPU memory `vRamGB / gpuCount`; references like `$1b:1:props:filteredOffers:0` are not
offers; the console and homepage prices do not reconcile.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import gpu_with_form, parse_price
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "sesterce"
SELLER = "Sesterce"
_CHUNK = re.compile(r'self\.__next_f\.push\(\[1,"((?:[^"\\]|\\.)*)"\]\)', re.S)
_KEY = '"filteredOffers":'


def book(body: bytes, meta: CaptureMeta) -> list[dict[str, Any]]:
    """The filteredOffers array of the page's flight data."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(PROVIDER, meta.url, "body is not UTF-8 text") from exc
    chunks = _CHUNK.findall(text)
    if not chunks:
        raise ParseError(PROVIDER, meta.url, "no self.__next_f.push flight chunk")
    try:
        flight = "".join(json.loads(f'"{c}"') for c in chunks)
    except json.JSONDecodeError as exc:
        raise ParseError(PROVIDER, meta.url, f"a flight chunk is not a JSON string ({exc})") \
            from exc
    at = flight.find(_KEY + "[")
    if at < 0:
        raise ParseError(PROVIDER, meta.url, "no filteredOffers array in the flight data")
    try:
        offers, _ = json.JSONDecoder().raw_decode(flight, at + len(_KEY))
    except json.JSONDecodeError as exc:
        raise ParseError(PROVIDER, meta.url, f"filteredOffers is cut short ({exc})") from exc
    return [o for o in offers if isinstance(o, dict)]


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    entries = book(body, meta)
    offers: list[Offer] = []
    for e in entries:
        offers += _offer(e, meta)
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"no priced GPU offer among {len(entries)} "
                         "console offers")
    return offers


def gpu_wording(e: dict[str, Any]) -> str:
    return gpu_with_form(str(e.get("gpuName") or ""),
                         (e.get("configuration") or {}).get("interconnect"))


def _offer(e: dict[str, Any], meta: CaptureMeta) -> list[Offer]:
    count = e.get("gpuCount")
    if not isinstance(count, int) or count < 1:
        skip_row("CPU offer (gpuCount 0)")
        return []
    price = parse_price(e.get("hourlyPrice"))
    if price is None:
        skip_row("console offer without an hourly price")
        return []
    conf = e.get("configuration") or {}
    vram = conf.get("vRamGB")
    memory = round(vram / count, 1) if isinstance(vram, int | float) and vram > 0 else None
    wording = gpu_wording(e)
    label = str((e.get("cloud") or {}).get("name") or "").strip() or None
    extra = {
        "source": "console",
        "gpu_wording": e.get("gpuName"),
        "instance_id": e.get("instanceId"),
        "deployment_type": e.get("deploymentType"),
        "nvlink": e.get("nvlink"),
        "upstream_label": label,
        "via": f"via {SELLER} from an unnamed cloud ({label})" if label else f"via {SELLER}",
        "storage_gb": conf.get("storageGB"),
    }
    prices = [("on_demand", price)]
    spot = parse_price(e.get("hourlySpotPrice"))
    if e.get("spotOfferAvailable") is True and spot is not None:
        prices.append(("spot", spot))
    places = [a for a in e.get("availability") or [] if isinstance(a, dict)] or [{}]
    return [make_offer(
        meta,
        sku=f"{e.get('instanceId')}/{label}",
        gpu_model=canonical_gpu(wording, memory),
        gpu_memory_gb=memory,
        gpu_count=count,
        price_per_hour=value,
        pricing_model=model,
        region=place.get("region"),
        vcpus=conf.get("vCpu"),
        ram_gb=conf.get("ramGB"),
        interconnect=conf.get("interconnect"),
        currency="USD",
        available=place.get("available"),
        extra={**extra, "region_name": place.get("name"), "country": place.get("countryCode")},
    ) for model, value in prices for place in places]
