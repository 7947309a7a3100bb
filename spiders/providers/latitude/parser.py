"""Latitude.sh: the plans in https://www.latitude.sh/pricing's escaped Next.js flight data.

The page carries `\\"plansData\\":{\\"servers\\":[...]}` with every quote written `\\"`. After
unescaping, each plan is a JSON object `{"id":"plan_...","type":"plans","attributes":{slug, name,
specs: {cpu, memory, drives, nics, gpu}, regions: [...]}}`, read one at a time from each
`{"id":"plan_` (the capture starts and ends mid-string: a plan cut off at the end is passed
over, counted in the run summary). `specs.gpu` is `{}` for CPU plans (no row) and
`{count, type, vram_per_gpu, interconnect}` for GPU servers.

One row per plan, region and term, priced in USD per **node**-hour (`gpu_count` = the plan's
GPUs, so price_per_gpu_hour = hour / count):

- `pricing.USD.hour` -> `on_demand`;
- `pricing.USD.month` (per node per month) -> `committed`, 1 month, at month / 730 h;
- `pricing.USD.year` (per node per year) -> `committed`, 12 months, at year / 8760 h.
  (730 h a month and 8760 a year: the page's own month/hour ratio, 46720 / 128 = 365 for the
  B300 at half the hourly rate, is the billing month of ../shared/PROVIDERS_MORE2.md.)
  The whole-term price is kept in `extra.term_price`.

BRL is Latitude's own separate list, not an FX conversion of USD (640 BRL vs 128 USD for the
B300, 18.54 vs 3.37 for the H100): it is recorded beside each row (`extra.price_brl`), never
converted, and never a row of its own. An unavailable region prints USD `null` and BRL `0`:
not offered, no row (never $0). `stock_level` (high / medium / low / unavailable) sets
`available` (unavailable -> False) and is kept in `extra.stock`; a priced region can still be
unavailable. The region is Latitude's region name (a country: "United States", "Japan"); its
sites are in `extra.locations`, those in stock in `extra.in_stock`.

Latitude's "NVIDIA H100 80GB" (g3-h100-small) names no form factor. The alias table would read
it as the SXM part (its "H100 80GB HBM3" is Runpod's SXM id, and HBM3 is the noise word that
tells SXM from the HBM2e PCIe card); Latitude does not say HBM3, so it stays unmapped with its
reason (UNMAPPED) rather than guessed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import decode_html
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "latitude"
_PLAN = re.compile(r'\{"id":"plan_')
# (term in pricing.USD, pricing_model, commitment_months, hours in the term)
TERMS = (("hour", "on_demand", None, 1), ("month", "committed", 1, 730),
         ("year", "committed", 12, 8760))
UNMAPPED = {
    "NVIDIA H100 80GB": (
        "Latitude's g3-h100-small names 'NVIDIA H100 80GB' without SXM or PCIe (both are 80 GB "
        "parts); the pricing data has no further field and Latitude's plan page was not "
        "captured (searched 2026-12-03)"),
}


def plans(text: str) -> tuple[list[dict[str, Any]], int]:
    """The plan objects in the (unescaped) flight text, and how many were cut off."""
    decoder = json.JSONDecoder()
    found, cut = [], 0
    for m in _PLAN.finditer(text):
        try:
            plan, _ = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            cut += 1
            continue
        if isinstance(plan, dict) and isinstance(plan.get("attributes"), dict):
            found.append(plan)
    return found, cut


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    text = decode_html(body, meta) if b"<" in body[:200] else body.decode("utf-8", "replace")
    if '\\"plansData\\"' not in text and '"plansData"' not in text:
        raise ParseError(PROVIDER, meta.url, "unknown layout: no plansData in the page")
    found, cut = plans(text.replace('\\"', '"'))
    if not found:
        raise ParseError(PROVIDER, meta.url, "plansData holds no plan object that parses")
    for _ in range(cut):
        skip_row("plan cut off in the captured flight data")
    offers: list[Offer] = []
    for plan in found:
        offers += _plan_offers(plan["attributes"], meta)
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"{len(found)} plans, no GPU plan with a USD price")
    return offers


def _plan_offers(attrs: dict[str, Any], meta: CaptureMeta) -> list[Offer]:
    gpu = (attrs.get("specs") or {}).get("gpu") or {}
    if not gpu:
        return []  # a CPU server
    count, wording = gpu.get("count"), str(gpu.get("type") or "").strip()
    if not isinstance(count, int) or count < 1 or not wording:
        raise ParseError(PROVIDER, "", f"plan {attrs.get('slug')}: gpu spec without count/type")
    memory = gpu.get("vram_per_gpu")
    # UNMAPPED overrides the alias table, which reads "H100 80GB" as Runpod's "H100 80GB HBM3"
    model = None if wording in UNMAPPED else canonical_gpu(wording, memory)
    specs = attrs.get("specs") or {}
    cpu = specs.get("cpu") or {}
    vcpus = (cpu.get("cores") or 0) * (cpu.get("count") or 1) or None
    out = []
    for region in attrs.get("regions") or []:
        usd = (region.get("pricing") or {}).get("USD") or {}
        brl = (region.get("pricing") or {}).get("BRL") or {}
        stock = region.get("stock_level")
        for term, pricing_model, months, hours in TERMS:
            price = usd.get(term)
            if not isinstance(price, int | float) or price <= 0:
                skip_row(f"no USD {term} price in region (not offered)")
                continue
            extra: dict[str, Any] = {
                "source": "page", "gpu_wording": wording, "plan": attrs.get("name"),
                "price_basis": "per_node", "stock": stock,
                "locations": (region.get("locations") or {}).get("available"),
                "in_stock": (region.get("locations") or {}).get("in_stock"),
                "price_brl": brl.get(term) or None,
            }
            if term != "hour":
                extra["term_price"] = price
            if wording in UNMAPPED:
                extra["unmapped_reason"] = UNMAPPED[wording]
            out.append(make_offer(
                meta, sku=str(attrs.get("slug")), region=region.get("name"), gpu_model=model,
                gpu_memory_gb=memory, gpu_count=count,
                price_per_hour=round(price / hours, 6), pricing_model=pricing_model,
                commitment_months=months, ram_gb=(specs.get("memory") or {}).get("total"),
                vcpus=vcpus, interconnect=gpu.get("interconnect"), currency="USD",
                available=None if stock is None else stock != "unavailable", extra=extra))
    return out
