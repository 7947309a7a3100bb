"""DeepInfra: https://deepinfra.com/pricing, the Custom LLMs GPU table only.

The page holds about 34 MUI tables: per-token model tables (`Model | Context | $ per 1M input
tokens | $ per 1M output tokens`), a service-tier table (`Tier | Scheduling | Price`, cells like
"1x base price"), a usage-tier table (`Tier | Qualification & Invoicing Threshold | $`) and ONE
GPU table whose header is exactly `GPU | Memory | Price`. Only that table gives rows, chosen by
its exact header (the others also say "Price"); chip names are never grepped page-wide (an i18n
blob carries `"gpu_b200":"B200"` and an unpriced `${{price}} / hour` template).

One price: `<b>$X</b> / GPU-hour` = USD per GPU-hour of a dedicated deployment of the buyer's own
model ("Custom LLMs"), billed by the minute (shared PROVIDERS_MORE2.md, read off the page). It is
inference hosting, not a VM: the declaration's kind is `inference_host` and every row says
`extra.service = "dedicated_inference_deployment"`. One row per GPU type, `gpu_count` 1 (a
deployment picks `num_gpus`; the price is per GPU). Per-token prices are inference APIs, out of
scope for a GPU-hour index: no row ever comes from those tables. DGX/B200/B300 clusters are
"contact us" on the page: no figure, no row.
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

PROVIDER = "deepinfra"
HEADER = ["GPU", "Memory", "Price"]
_PER_GPU_HOUR = re.compile(r"\$\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*GPU-hour", re.I)
_MEM = re.compile(r"^(\d+(?:\.\d+)?)\s*GB$", re.I)
# Custom LLMs are billed by the minute, invoiced weekly (deepinfra.com/pricing, Custom LLMs
# section, as recorded in the shared PROVIDERS_MORE2.md; the trimmed capture keeps only tables).
_MINUTE_S = 60


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    tables = tables_headed(html_tree(body, meta), HEADER, meta)
    out: list[Offer] = []
    for gpu, memory, price_text in row_cells(tables, len(HEADER), meta):
        m = _PER_GPU_HOUR.search(price_text)
        price = parse_price(m.group(1)) if m else None
        if price is None:
            skip_unpriced(price_text, "GPU-hour price")
            continue
        mem = _MEM.match(memory)
        out.append(make_offer(
            meta, sku=f"{gpu} {memory}".strip(), gpu_model=canonical_gpu(f"{gpu} {memory}"),
            gpu_count=1, price_per_hour=price, pricing_model="on_demand",
            gpu_memory_gb=float(mem.group(1)) if mem else None,
            billing_increment_s=_MINUTE_S,
            extra={"source": "page", "layout": "gpu-table", "gpu_wording": gpu,
                   "memory_wording": memory, "price_wording": price_text,
                   "price_basis": "per_gpu_hour", "product": "Custom LLMs",
                   "service": "dedicated_inference_deployment"},
        ))
    if not out:
        raise ParseError(PROVIDER, meta.url,
                         "the 'GPU | Memory | Price' table holds no '$X / GPU-hour' price")
    return out
