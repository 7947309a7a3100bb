"""Oracle Cloud (OCI): the cetools price list `{lastUpdated, items: [...]}`.

One price: an item whose `metricName` is "GPU Per Hour" is USD per GPU-hour, the on-demand list
price (`model` PAY_AS_YOU_GO, the only model), the same in every region; a bare-metal shape of
8 GPUs costs 8x it. Each such item is one row with gpu_count 1.

Not GPU rentals, though they share the metric (../shared/PROVIDERS_MORE.md, Oracle):
- "OCI - NVIDIA AI Enterprise - <GPU>": per-GPU-hour software licences;
- "Compute Cloud@Customer" rows: on-premises appliance prices (two share one name, so rows are
  keyed by `partNumber`);
- "Node Per Hour" (VMware on BM.GPU.A10.64, per node and commitment) and "Resource Possession
  Per Day" (Roving Edge, Cloud@Customer infrastructure) have other metrics and are not read.

The chip is what follows the last "GPU -" (or "GPU Standard -") in `displayName`, whose spacing
is untidy ("OCI- Compute - GPU - MI355X", "Compute  - GPU - A10"). Most are chip names mapped by
warehouse/gpus.py; chips.csv (beside this module) names the two whose label alone is ambiguous
(H100, "A100 - v2") and the one platform label Oracle's Compute Shapes page ties to a single GPU
series (E3: BM.GPU4, A100 40 GB). The other labels without a chip (X7: both P100 and V100 shapes
are X7-based; V2; E4: its only GPU series is already priced as "A100 - v2") and "H100T" cannot be
mapped: their rows keep gpu_model None and are quarantined with their label.
"""

from __future__ import annotations

import csv
import re
from functools import cache
from pathlib import Path
from typing import Any

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import load_json, parse_price
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "oracle"
GPU_METRIC = "GPU Per Hour"
CURRENCY = "USD"  # the currency the fetch plan asks for (source.py)
# Rows with the GPU metric that are not GPU rentals (module docstring).
_NOT_RENTALS = re.compile(r"NVIDIA AI Enterprise|Cloud@Customer", re.I)
_CHIP = re.compile(r"GPU(?:\s+Standard)?\s*-\s*(.+?)\s*$", re.I)
CHIPS_CSV = Path(__file__).with_name("chips.csv")


@cache
def chip_wordings() -> dict[str, str]:
    with CHIPS_CSV.open(newline="") as fh:
        return {r["label"]: r["gpu_wording"] for r in csv.DictReader(fh)}


def chip_label(display_name: str) -> str | None:
    """The chip label of a GPU item's name: 'OCI - Compute - GPU - H200' -> 'H200'."""
    m = _CHIP.search(" ".join(display_name.split()))
    return m.group(1) if m else None


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    doc = load_json(body, meta)
    items = doc.get("items") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise ParseError(PROVIDER, meta.url, "no 'items' list in the JSON")
    offers = [o for o in (_item(i, doc.get("lastUpdated"), meta) for i in items
                          if isinstance(i, dict)) if o]
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"no '{GPU_METRIC}' rental with a {CURRENCY} "
                         f"price among {len(items)} items")
    return offers


def _usd_price(item: dict[str, Any]) -> float | None:
    for loc in item.get("currencyCodeLocalizations") or []:
        if isinstance(loc, dict) and loc.get("currencyCode") == CURRENCY:
            for p in loc.get("prices") or []:
                if isinstance(p, dict) and p.get("model") == "PAY_AS_YOU_GO":
                    return parse_price(p.get("value"))
    return None


def _item(item: dict[str, Any], list_updated: Any, meta: CaptureMeta) -> Offer | None:
    name = str(item.get("displayName") or "")
    if item.get("metricName") != GPU_METRIC or _NOT_RENTALS.search(name):
        return None
    price = _usd_price(item)
    label = chip_label(name)
    part = str(item.get("partNumber") or "").strip()
    if price is None or not label or not part:
        return None
    wording = chip_wordings().get(label, label)
    return make_offer(
        meta,
        sku=f"GPU {label} ({part})",
        gpu_model=canonical_gpu(wording),
        gpu_count=1,  # "GPU Per Hour": one GPU's price
        price_per_hour=price,
        pricing_model="on_demand",
        currency=CURRENCY,
        extra={
            "source": "api",
            "gpu_wording": wording,
            "part_number": part,
            "display_name": name,
            "service_category": item.get("serviceCategory"),
            "metric": GPU_METRIC,
            "price_model": "PAY_AS_YOU_GO",
            "list_updated": list_updated,
        },
    )
