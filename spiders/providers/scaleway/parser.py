"""Scaleway: the Instance API catalog `{"servers": {"<type>": {...}}}`.

One price: `hourly_price` is EUR per NODE-hour for `gpu` GPUs. There is no currency field: EUR
is Scaleway's billing currency (../shared/PROVIDERS_MORE.md, Scaleway; its pricing pages quote
euros), so rows are written in EUR and the warehouse converts them
(warehouse/sql/staging/fx_factor.sql, the ECB rate of the day). `make_offer` derives the
per-GPU price from gpu_count. `monthly_price` is `hourly_price` x 730, a display figure, not a
commitment tier: kept in extra only.

Traps (../shared/PROVIDERS_MORE.md, Scaleway): CPU types (`gpu` 0, `gpu_info` null) are skipped;
`gpu_memory` and `ram` are bytes (85899345920 = 80 GiB); a non-null `mig_profile` would be a GPU
slice, whose GPU count is not `gpu`: such a row keeps gpu_model None and is quarantined rather
than priced as whole GPUs. The type name encodes count and memory (`H100-SXM-8-80G`),
`gpu_info.gpu_name` the part (`H100-SXM`, `H100-PCIe`, `B300-SXM`, `L40S`, `L4`, `P100`).

The availability endpoint (stock level per type, no prices) is not parsed (`wants`);
`postprocess` writes its level into the same day's rows (`available`: available or scarce =
True, shortage = False; the word in `extra.stock`).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import load_json, parse_price
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "scaleway"
CURRENCY = "EUR"
BYTES_PER_GIB = 2**30
IN_STOCK = {"available": True, "scarce": True, "shortage": False}


def _is_availability(url: str) -> bool:
    return urlsplit(url).path.rstrip("/").endswith("/availability")


def wants(meta: CaptureMeta) -> bool:
    """The availability answers hold no prices: read in `postprocess`, not parsed."""
    return not _is_availability(meta.url)


def zone_of(url: str) -> str | None:
    parts = urlsplit(url).path.split("/")
    return parts[parts.index("zones") + 1] if "zones" in parts[:-1] else None


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    doc = load_json(body, meta)
    servers = doc.get("servers") if isinstance(doc, dict) else None
    if not isinstance(servers, dict):
        raise ParseError(PROVIDER, meta.url, "no 'servers' object in the JSON")
    offers = [o for o in (_server(name, s, meta) for name, s in servers.items()
                          if isinstance(s, dict)) if o]
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"no GPU type with an hourly_price among "
                         f"{len(servers)} types")
    return offers


def _gib(value: Any) -> float | None:
    return round(value / BYTES_PER_GIB, 1) if isinstance(value, int | float) and value else None


def _server(name: str, s: dict[str, Any], meta: CaptureMeta) -> Offer | None:
    count = s.get("gpu")
    info = s.get("gpu_info") if isinstance(s.get("gpu_info"), dict) else {}
    price = parse_price(s.get("hourly_price"))
    if not isinstance(count, int) or count < 1 or price is None:
        return None
    wording = str(info.get("gpu_name") or "").strip()
    memory = _gib(info.get("gpu_memory"))
    extra: dict[str, Any] = {"source": "api", "gpu_wording": wording,
                             "price_field": "hourly_price",
                             "monthly_price": s.get("monthly_price")}
    model = canonical_gpu(wording, memory)
    if s.get("mig_profile"):
        extra["mig_profile"] = s["mig_profile"]
        model = None  # a slice: `gpu` is not its share of a GPU (module docstring)
    return make_offer(
        meta,
        sku=name,
        gpu_model=model,
        gpu_memory_gb=memory,
        gpu_count=count,
        price_per_hour=price,
        pricing_model="on_demand",
        region=zone_of(meta.url),
        vcpus=s.get("ncpus"),
        ram_gb=_gib(s.get("ram")),
        currency=CURRENCY,
        extra=extra,
    )


def stock_levels(body: bytes) -> dict[str, str]:
    """Type -> stock word of one availability answer."""
    servers = json.loads(body).get("servers") or {}
    return {name: str(v.get("availability")) for name, v in servers.items()
            if isinstance(v, dict) and v.get("availability")}


def postprocess(offers: list[Offer], captures: list) -> list[Offer]:
    """Rows take the stock level of the same day's availability answers, when it has them."""
    levels: dict[tuple[str | None, str], str] = {}
    for cap in captures:
        if not _is_availability(cap.url) or cap.status != 200:
            continue
        try:
            zone = zone_of(cap.url)
            levels.update({(zone, k): v for k, v in stock_levels(cap.body).items()})
        except (ValueError, AttributeError):
            continue  # a broken stock answer costs the stock levels, never the prices
    for o in offers:
        word = levels.get((o.region, o.sku))
        if word is not None:
            o.extra["stock"] = word
            o.available = IN_STOCK.get(word)
    return offers
