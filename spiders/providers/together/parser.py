"""Together AI: the GPU Clusters section of https://www.together.ai/pricing (Webflow).

One price: USD per GPU-hour ("All prices are per GPU per hour"), one row per hardware and
column of the visible table "On-demand hourly rates and reserved capacity": ON-Demand (Pay as
you go) -> `on_demand`; Reserved 7-30 / 31-90 / 91-180 / 181+ days -> `reserved`, with the
longest term of the band in `commitment_months` (30 days = 1 month, 90 = 3, 180 = 6) and the
band itself in `extra.term_days` and `extra.provider_term` (the header). A reserved price is an
hourly rate for capacity held for that many days.

Traps (../shared/PROVIDERS_MORE.md, Together AI):
- the Dedicated Inference section above has a look-alike table (HGX H100 $5.49): a managed
  inference price, not GPU rental. Only the part of the page between the `gpu-clusters` and
  `sandbox` anchors is read;
- inside GPU Clusters a hidden table (`<div class="hide">`, Hardware | Hourly) repeats the
  on-demand prices: tables inside an element of class `hide` are skipped;
- empty cells are an em dash (not offered), "Contact us" cells can span the four tenors
  (`colspan="4"`): no row; a price cell may have a leading space (" $3.45").
"""

from __future__ import annotations

import re
from typing import Any

from lxml import html as lxml_html

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import decode_html, el_text, parse_price, skip_unpriced
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "together"
START, END = 'id="gpu-clusters"', 'id="sandbox"'
_DAYS = re.compile(r"(\d+)\s*(?:-\s*(\d+)|\+)?\s*days", re.I)
DAYS_PER_MONTH = 30


def gpu_clusters_section(text: str, meta: CaptureMeta) -> str:
    start = text.find(START)
    if start < 0:
        raise ParseError(PROVIDER, meta.url, f"unknown page layout: no {START} anchor")
    end = text.find(END, start)
    return text[start:end if end > 0 else len(text)]


def _hidden(el: Any) -> bool:
    return any("hide" in (a.get("class") or "").split() for a in el.iterancestors())


def column(header: str) -> tuple[str, int | None, list[int] | None] | None:
    """(pricing model, commitment months, term days) of a header cell, None for others."""
    h = " ".join(header.split()).lower()
    if "pay as you go" in h or "on-demand" in h:
        return "on_demand", None, None
    m = _DAYS.search(h)
    if not m:
        return None
    low, high = int(m.group(1)), int(m.group(2)) if m.group(2) else None
    if high is None:
        return "reserved", None, [low]  # "181+ days": open-ended, always "Contact us" today
    return "reserved", max(round(high / DAYS_PER_MONTH), 1), [low, high]


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    section = gpu_clusters_section(decode_html(body, meta), meta)
    tree = lxml_html.fromstring(f"<div>{section}</div>")
    tables = [t for t in tree.iter("table") if not _hidden(t)]
    if not tables:
        raise ParseError(PROVIDER, meta.url, "no visible table in the GPU Clusters section")
    offers = [o for t in tables for o in _table(t, meta)]
    if not offers:
        raise ParseError(PROVIDER, meta.url, "no price in the GPU Clusters tables")
    return offers


def price_headers(table: Any) -> list[str]:
    """The price columns' headers: the last header row names the columns under the grouping
    row (ON-Demand | Reserved), the hardware column spanning both rows."""
    rows = [r for r in table.iter("tr") if r.find(".//th") is not None]
    return [el_text(th) for th in rows[-1].findall(".//th")] if rows else []


def _table(table: Any, meta: CaptureMeta) -> list[Offer]:
    headers = price_headers(table)
    offers: list[Offer] = []
    for tr in table.iter("tr"):
        cells = tr.findall("td")
        if len(cells) < 2:
            continue
        hardware = el_text(cells[0])
        col = 0
        for cell in cells[1:]:
            span = int(cell.get("colspan") or 1)
            header = headers[col] if col < len(headers) else ""
            col += span
            kind = column(header)
            price = parse_price(el_text(cell)) if span == 1 else None
            if kind is None or price is None:
                if kind is not None and span == 1:
                    skip_unpriced(el_text(cell))
                continue
            offers.append(_offer(meta, hardware, header, kind, price))
    return offers


def _offer(meta: CaptureMeta, hardware: str, header: str,
           kind: tuple[str, int | None, list[int] | None], price: float) -> Offer:
    pricing_model, months, days = kind
    sku = re.sub(r"^NVIDIA\s+", "", hardware)
    extra: dict[str, Any] = {"source": "page", "gpu_wording": hardware,
                             "section": "GPU Clusters"}
    if days:
        extra.update({"provider_term": f"Reserved {header}", "term_days": days})
    return make_offer(
        meta,
        sku=sku,
        gpu_model=canonical_gpu(hardware),
        gpu_count=1,  # "All prices are per GPU per hour"
        price_per_hour=price,
        pricing_model=pricing_model,
        commitment_months=months,
        currency="USD",
        extra=extra,
    )
