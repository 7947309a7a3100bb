"""fal: https://fal.ai/pricing, the "Serverless & Compute Pricing" GPU table only.

Three `<table>`s share one markup and have no ids; the GPU table's header is exactly `GPU | VRAM |
List Price | As low as`, the two others `Model | Unit | Price | Output per $1` (dollars per second
of video, per image: model APIs, never GPU-hour rows). Every GPU price is also printed in an RSC
flight copy (`$$8.50/h`) after the tables: not read (rows come from the table alone, so each
price is counted once).

One price: `List Price` `$8.50/h` = USD per GPU-hour of serverless compute for the buyer's own app,
billed per second (shared PROVIDERS_MORE2.md, from the page) -> `on_demand`, `gpu_count` 1,
`billing_increment_s` 1. "As low as" is a contact-sales floor, not a rate anyone can buy at: it
stays in `extra.as_low_as`, never a row. fal's serverless apps are inference serving, not a
training VM: the declaration's kind is `inference_host` and each row has `extra.service`.

GPU wording: the chip cell and the VRAM cell together (`H200 141GB`). fal's bare `H100 80GB` does
not say SXM or PCIe on this page; fal's machine-type docs give GPU-H100 "80 GB, 3.4 TB/s"
(docs.fal.ai/documentation/deployment/machine-types), the SXM part's bandwidth (3.35 TB/s; the
PCIe card has 2.0 TB/s, NVIDIA H100 datasheet), so it is read as `H100 SXM 80GB` (`_WORDING`).
"""

from __future__ import annotations

import re

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import (
    html_tree,
    parse_price,
    row_cells,
    skip_unpriced,
    tables_headed,
)
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "fal"
HEADER = ["GPU", "VRAM", "List Price", "As low as"]
_PER_HOUR = re.compile(r"^\$\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*h$", re.I)
_MEM = re.compile(r"^(\d+(?:\.\d+)?)\s*GB$", re.I)
# Serverless compute is billed per second (fal.ai/pricing, as recorded in the shared
# PROVIDERS_MORE2.md; the trimmed capture keeps only the tables).
_SECOND_S = 1
# fal's own wording -> the wording the alias table reads, with the public source.
_WORDING = {
    # docs.fal.ai machine types: GPU-H100 80 GB at 3.4 TB/s = the SXM part (NVIDIA H100
    # datasheet: SXM 3.35 TB/s, PCIe 2.0 TB/s).
    "H100 80GB": "H100 SXM 80GB",
}


def _price(text: str) -> float | None:
    m = _PER_HOUR.match(text)
    return parse_price(m.group(1)) if m else None


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    tables = tables_headed(html_tree(body, meta), HEADER, meta)
    out: list[Offer] = []
    for gpu, vram, list_text, floor_text in row_cells(tables, len(HEADER), meta):
        price = _price(list_text)
        if price is None:
            skip_unpriced(list_text, "list price")
            continue
        wording = f"{gpu} {vram}".strip()
        mem = _MEM.match(vram)
        extra = {"source": "page", "layout": "gpu-table", "gpu_wording": gpu,
                 "memory_wording": vram, "price_wording": list_text,
                 "price_basis": "per_gpu_hour", "product": "Serverless & Compute",
                 "service": "serverless_app_compute"}
        floor = _price(floor_text)
        if floor is not None:
            extra["as_low_as"] = floor  # contact-sales floor, not a list rate
        out.append(make_offer(
            meta, sku=wording, gpu_model=canonical_gpu(_WORDING.get(wording, wording)),
            gpu_count=1, price_per_hour=price, pricing_model="on_demand",
            gpu_memory_gb=float(mem.group(1)) if mem else None,
            billing_increment_s=_SECOND_S, extra=extra,
        ))
    if not out:
        raise ParseError(PROVIDER, meta.url, "the GPU table holds no '$X/h' list price")
    return out
