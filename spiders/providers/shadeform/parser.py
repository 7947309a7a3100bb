"""Shadeform: the instance-types book inside the homepage's `self.__next_f.push` flight data.

The book is an escaped JSON array (`\\"cloud\\":\\"hyperstack\\"`): the parser unescapes the
quotes and reads each `{"cloud": ..., "deployment_type": ...}` object (`cloud` comes first and
`deployment_type` last in every entry), so an excerpt that starts mid-tag or ends mid-key still
yields every whole entry. `dehydratedAt` (Unix ms) dates the book.

One price: `hourly_price` is an integer of US CENTS per INSTANCE-hour for `num_gpus` GPUs
(250 = $2.50; 2560 for 8x H100 = $3.20 per GPU-hour), on-demand; the offer's price is
cents / 100 and make_offer divides by the GPU count.

Every entry is another cloud's instance: `cloud` is kept as `extra.underlying`, with "via
Shadeform from <cloud>", and a cloud we read first-party is not counted twice
(spiders/resold.py). One row per region of the entry's `availability` list (one price for all
of them, each region with its own `available`), as the source lists it.

Traps (../shared/PROVIDERS_MORE2.md, Shadeform): CPU entries (`gpu_type` "CPU", `num_gpus` 0)
are skipped; `gpu_type` names are Shadeform's (A100_80G, H100_nvl, RTXPro6000), read with the
row's `vram_per_gpu_in_gb` and `interconnect`; Intel Gaudi2 and NVIDIA A16 are not in the GPU
table and stay unmapped with their reason.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from gpuprices.spiders import resold
from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import gpu_with_form
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "shadeform"
SELLER = "Shadeform"
CENTS_PER_DOLLAR = 100
_ENTRY = re.compile(r'\{"cloud":"[^"]*".*?"deployment_type":"[^"]*"\}', re.S)
_DEHYDRATED = re.compile(r'"dehydratedAt":(\d{10,})')
# Accelerators the GPU table (warehouse/gpus.csv) does not hold, with why they stay unmapped.
UNMAPPED = {
    "A16": "NVIDIA A16 is a four-GPU virtual-desktop board (16 GB per GPU) with no training "
           "figures in the GPU table (nvidia.com/en-us/data-center/products/a16-gpu/)",
    "GAUDI2": "Intel Gaudi2 is not an NVIDIA or AMD GPU; the GPU table has no Gaudi rows "
              "(intel.com, Gaudi 2 AI accelerator)",
}


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    try:
        # Not decode_html: the recorded excerpt starts inside a <script> and holds no "<".
        text = body.decode("utf-8").replace('\\"', '"')
    except UnicodeDecodeError as exc:
        raise ParseError(PROVIDER, meta.url, "body is not UTF-8 text") from exc
    entries = _ENTRY.findall(text)
    if not entries:
        raise ParseError(PROVIDER, meta.url, "no instance_types entry ({\"cloud\": ... "
                         "\"deployment_type\": ...}) in the page's flight data")
    stamp = _DEHYDRATED.search(text)
    dehydrated = (dt.datetime.fromtimestamp(int(stamp.group(1)) / 1000, dt.UTC).isoformat()
                  if stamp else None)
    offers: list[Offer] = []
    for raw in entries:
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError:
            skip_row("instance type entry that is not whole JSON")
            continue
        offers += _entry(entry, meta, dehydrated)
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"no priced GPU instance among {len(entries)} "
                         "instance types")
    return offers


def gpu_wording(entry: dict[str, Any]) -> str:
    """Shadeform's gpu_type with its form factor, in words the GPU table knows."""
    return gpu_with_form(str(entry.get("gpu_type") or ""), entry.get("interconnect"))


def _entry(e: dict[str, Any], meta: CaptureMeta, dehydrated: str | None) -> list[Offer]:
    count = e.get("num_gpus")
    cents = e.get("hourly_price")
    gpu_type = str(e.get("gpu_type") or "")
    if gpu_type.upper() == "CPU" or not isinstance(count, int) or count < 1:
        skip_row("CPU instance type (no GPU)")
        return []
    if not isinstance(cents, int | float) or cents <= 0:
        skip_row("instance type without an hourly price")
        return []
    memory = (e.get("configuration") or {}).get("vram_per_gpu_in_gb")
    memory = memory if isinstance(memory, int | float) and memory > 0 else None
    wording = gpu_wording(e)
    model = canonical_gpu(wording, memory)
    cloud = str(e.get("cloud") or "").strip() or None
    extra = resold.tag({
        "source": "homepage",
        "gpu_wording": gpu_type,
        "shade_instance_type": e.get("shade_instance_type"),
        "cloud_instance_type": e.get("cloud_instance_type"),
        "hourly_price_cents": cents,
        "deployment_type": e.get("deployment_type"),
        "nvlink": e.get("nvlink"),
        "book_dehydrated_at": dehydrated,
    }, SELLER, cloud, reader=PROVIDER)
    if model is None and gpu_type.upper() in UNMAPPED:
        extra["unmapped_reason"] = UNMAPPED[gpu_type.upper()]
    places = [a for a in e.get("availability") or [] if isinstance(a, dict)] or [{}]
    return [make_offer(
        meta,
        sku=f"{cloud}/{e.get('shade_instance_type')}",
        gpu_model=model,
        gpu_memory_gb=memory,
        gpu_count=count,
        price_per_hour=cents / CENTS_PER_DOLLAR,
        pricing_model="on_demand",
        region=place.get("region"),
        interconnect=e.get("interconnect"),
        currency="USD",
        available=place.get("available"),
        extra={**extra, "region_name": place.get("display_name")},
    ) for place in places]
