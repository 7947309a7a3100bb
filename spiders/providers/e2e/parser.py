"""E2E Networks: https://www.e2enetworks.com/pricing?region=us, the USD GPU table.

Two surfaces price the same GPUs:

- one `<table>` whose header is exactly `Item | vRAM | vCPUs | RAM, GB | Hourly/On-Demand |
  Monthly | Annually`, in USD, followed by the footnote "Prices are per GPU-hour and do not
  include taxes" (the page has a 1x/2x/4x/8x multiplier control: the parser insists on the
  footnote, so a table printed for another multiple is never read as one GPU's price);
- a `<script type="application/ld+json">` OfferCatalog whose GPU Offers are INR "per hour"
  (`priceCurrency` INR, `unitText` "per hour"), from a separate INR list (B200 671 INR beside
  $6.99 is not the dollar price converted).

Which is the offer: the USD table. It is the price list this page (`?region=us`) sells at, the
unit is stated (per GPU-hour) and it is complete (hourly, monthly, annual terms); the JSON-LD
gives only an hourly INR figure whose unit ("per hour") is read off the instance description it
carries (the 1-GPU spec of the table row). So one row per offer, in USD, and the INR list price
of the same GPU is kept on its on-demand row (`extra.inr_price_per_hour`), never a second row
and never relabelled: `inr_check.py` converts it through the one FX path (spiders/fx.py, ECB
rate in force that day) and compares it with the table price.

Rows per table row (`gpu_count` 1; `vcpus`, `ram_gb`, `gpu_memory_gb` from the row):

- `Hourly/On-Demand` `$6.99` -> `on_demand`, USD per GPU-hour;
- `Monthly` `$4,983.16` -> `committed`, 1 month, per GPU per month / 730 hours;
- `Annually` `$55,089.45` -> `committed`, 12 months, per GPU per year / 8760 hours
  (730 = 8760 / 12, the hours of an average month; the per-month and per-year figures are kept
  in `extra.price_per_month` / `extra.price_per_year`).

Two rows are both named `NVIDIA A100`: the vRAM cell (80 / 40) tells them apart, in the SKU and
the GPU wording. JSON-LD offers are matched to table rows by name and VRAM (the A100 pair again);
CPU offers (`"category":"CPU Cloud Instance"`) are ignored. After the table come escaped
Next.js flight copies of the navigation and a second, truncated OfferCatalog (`\\"price\\":671`):
not read (only real `<script type="application/ld+json">` elements are). E2E's data centres are
in India; the page prices no region: `region` is empty and `extra.price_list` = "region=us".
"""

from __future__ import annotations

import json
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

PROVIDER = "e2e"
HEADER = ["Item", "vRAM", "vCPUs", "RAM, GB", "Hourly/On-Demand", "Monthly", "Annually"]
FOOTNOTE = "Prices are per GPU-hour"
HOURS_PER_MONTH = 730  # 8760 / 12
HOURS_PER_YEAR = 8760  # 365 x 24
_GPU_CATEGORY = "GPU Cloud Instance"
_VRAM = re.compile(r"(\d+)\s*GB VRAM", re.I)
_SUFFIX = re.compile(r"\s+GPU Cloud Instance$", re.I)
# A whole price cell: "$6.99", "$4,983.16". Anything else ("$4,call us", "Contact") is no price.
_MONEY = re.compile(r"^\$\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")


def _money(text: str) -> float | None:
    return parse_price(text) if _MONEY.match(text) else None


def _num(text: str) -> float | None:
    m = re.search(r"[0-9]+(?:\.[0-9]+)?", text.replace(",", ""))
    return float(m.group(0)) if m else None


def inr_offers(tree, meta: CaptureMeta) -> dict[tuple[str, int], dict]:
    """The JSON-LD GPU Offers: (name without ' GPU Cloud Instance', VRAM GB) -> offer. A block
    that is not valid JSON is passed over (the table stands alone); an INR offer whose unit is
    not 'per hour' is a ParseError (its figure would be misread)."""
    found: dict[tuple[str, int], dict] = {}
    for script in tree.xpath("//script[@type='application/ld+json']"):
        try:
            doc = json.loads(script.text or "")
        except json.JSONDecodeError:
            continue
        items = doc.get("itemListElement", []) if isinstance(doc, dict) else []
        for item in items:
            if not isinstance(item, dict) or item.get("category") != _GPU_CATEGORY:
                continue
            offered = item.get("itemOffered") or {}
            vram = _VRAM.search(str(offered.get("description", "")))
            if not vram:
                continue
            spec = item.get("priceSpecification") or {}
            unit = spec.get("unitText", "")
            if unit != "per hour":
                raise ParseError(PROVIDER, meta.url,
                                 f"JSON-LD offer {item.get('name')!r} priced {unit!r}, "
                                 "not 'per hour'")
            name = _SUFFIX.sub("", str(item.get("name", "")))
            found[(name, int(vram.group(1)))] = item
    return found


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    tree = html_tree(body, meta)
    tables = tables_headed(tree, HEADER, meta)
    if FOOTNOTE not in " ".join(tree.text_content().split()):
        raise ParseError(PROVIDER, meta.url,
                         f"the footnote {FOOTNOTE!r} is missing: the table's unit is unknown")
    ld = inr_offers(tree, meta)
    out: list[Offer] = []
    for cells in row_cells(tables[:1], len(HEADER), meta, "table row"):
        item, vram_text, vcpu_text, ram_text, hourly, monthly, annually = cells
        vram = _num(vram_text)
        if vram is None:
            raise ParseError(PROVIDER, meta.url, f"{item!r}: vRAM {vram_text!r} is no number")
        wording = f"{item} {int(vram)}GB"
        base = dict(sku=wording, gpu_model=canonical_gpu(wording), gpu_count=1,
                    gpu_memory_gb=vram, vcpus=_num(vcpu_text), ram_gb=_num(ram_text))
        extra = {"source": "page", "layout": "usd-table", "gpu_wording": item,
                 "price_basis": "per_gpu_hour", "price_list": "region=us"}
        hour = _money(hourly)
        if hour is None:
            skip_unpriced(hourly, "hourly price")
        else:
            on_demand = {**extra, "price_wording": hourly}
            inr = ld.get((item, int(vram)))
            if inr is not None and inr.get("priceCurrency") == "INR":
                on_demand.update(inr_price_per_hour=float(inr["price"]),
                                 inr_source="JSON-LD OfferCatalog (INR list, per hour)")
            out.append(make_offer(meta, **base, price_per_hour=hour,
                                  pricing_model="on_demand", extra=on_demand))
        for text, months, hours, key, term in (
                (monthly, 1, HOURS_PER_MONTH, "price_per_month", "Monthly"),
                (annually, 12, HOURS_PER_YEAR, "price_per_year", "Annually")):
            whole = _money(text)
            if whole is None:
                skip_unpriced(text, f"{term.lower()} price")
                continue
            out.append(make_offer(
                meta, **base, price_per_hour=round(whole / hours, 6),
                pricing_model="committed", commitment_months=months,
                extra={**extra, "price_wording": text, key: whole, "provider_term": term}))
    if not out:
        raise ParseError(PROVIDER, meta.url, "the USD GPU table holds no price")
    return out
