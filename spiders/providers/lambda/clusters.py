"""Lambda's 1-Click Clusters table (lambda.ai/pricing, ~2026-08): committed per-GPU prices by
cluster size and term.

One tab per GPU family ("NVIDIA HGX B200", "NVIDIA H100"), rows ``tr[data-plan]`` with cells
``DURATION`` ("2 weeks – 1 year", "1 year+"), ``GPU COUNT`` ("16", "64", "256+", "16+") and
``PRICE/GPU/HR*`` ("$9.86", or "—" for a quote on request: no row). Each priced row is a
``committed`` offer for the smallest cluster of its size: gpu_count = the count printed
(256 for "256+"), price_per_hour = per-GPU price x that count. The term and size words go to
``extra.cluster_duration`` / ``extra.cluster_gpus``, which are identity keys
(warehouse/identity.py): one plan has a price per size and term. commitment_months stays empty:
the shortest term is two weeks, not a whole number of months.

The page repeats every table escaped inside a ``window.__islands`` script; lxml does not parse
script text as rows, so only the real ``<tr`` elements are read.
"""

from __future__ import annotations

import re
from typing import Any

from gpuprices.spiders.parsers._util import el_text, parse_price
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

_SIZE = re.compile(r"^\s*(\d+)\s*\+?\s*$")
_VENDOR = re.compile(r"^\s*NVIDIA\s+", re.I)


def _gpu_model(plan: str) -> str | None:
    """The tab names "NVIDIA HGX B200" but also bare "NVIDIA H100": 1-Click Clusters are HGX
    systems (lambda.ai/1-click-clusters: NVIDIA HGX B200 and HGX H100, InfiniBand), so a bare
    name is read as its HGX (SXM) part."""
    return canonical_gpu(plan) or canonical_gpu("HGX " + _VENDOR.sub("", plan))


def cluster_offers(tree: Any, meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    for tr in tree.xpath("//tr[@data-plan][td[@data-label='DURATION']]"):
        cells = {c.get("data-label", "").upper(): el_text(c)
                 for c in tr.xpath("./td[@data-label]|./th[@data-label]")}
        plan = (tr.get("data-plan") or "").strip()
        price_label = next((k for k in cells if k.startswith("PRICE")), None)
        size = _SIZE.match(cells.get("GPU COUNT", ""))
        price_text = cells.get(price_label or "", "")
        per_gpu = parse_price(price_text) if "$" in price_text else None
        if not plan or size is None or per_gpu is None:
            continue  # "—": priced on request
        count = int(size.group(1))
        extra = {"source": "page", "layout": "clusters", "gpu_wording": plan,
                 "provider_term": "1-Click Clusters", "price_wording": price_text,
                 "price_basis": "per_gpu_hour", "cluster_duration": cells.get("DURATION"),
                 "cluster_gpus": cells.get("GPU COUNT")}
        offers.append(make_offer(
            meta, sku=f"1-Click Cluster {plan}", gpu_model=_gpu_model(plan), gpu_count=count,
            price_per_hour=round(per_gpu * count, 6), pricing_model="committed",
            currency="USD", extra=extra,
        ))
    return offers
