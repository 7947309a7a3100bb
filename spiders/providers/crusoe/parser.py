"""Crusoe: the public price page https://www.crusoe.ai/cloud/pricing (Webflow, server-rendered;
formerly https://crusoe.ai/cloud/pricing and https://crusoecloud.com/pricing), in the layouts it
has had. Every price on it is USD per GPU-hour, so each row has gpu_count 1.

- To mid-2025 ("table"): a `<table>` whose header row is GPU Pricing | On-Demand | Current Spot |
  6-month reserved | 1-year reserved | 3-year reserved. The first cell holds the model
  ("NVIDIA A100") and its tags ("80GB", "SXM"); price cells read "$ 3.90 /hr" or "Contact Sales".
- Late 2025+ ("cards"): under `h3` "GPU instances pricing", a heading row GPU model | On-demand |
  Current spot and one `div.prixing-item` (sic) card per GPU: `h4.pricing-item-heading`,
  `.pricing-tag` tags, one `.pricing-rich` cell per price column ("$3.90/GPU-hr" or "Contact
  sales"). The same card markup holds CPU, storage, inference and "Self-Serve Deployments"
  prices (H100 $5.50 per hour: a managed endpoint, not GPU rental), so cards are read only in
  the GPU instances section and only cells that say "/GPU-hr".

Columns are mapped by header text. "Contact sales" (any case) and other non-prices give no row.
A100 SXM and PCIe differ only by tag, so tags are part of the GPU wording. SKU = canonical GPU
model (one per-GPU price per model on this page) so that rows link across layouts; a wording
that maps to no model keeps its slug and the row is quarantined downstream.
"""

from __future__ import annotations

import re

from parsel import Selector

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import decode_html, parse_price, skip_unpriced
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "crusoe"

_MEM_TAG = re.compile(r"^(\d+(?:\.\d+)?)\s*GB$", re.I)
_TERM = re.compile(r"(\d+)\s*-?\s*(month|year)", re.I)


def _text(sel: Selector) -> str:
    return re.sub(r"\s+", " ", " ".join(sel.css("::text").getall()).replace("\xa0", " ")).strip()


def _column(header: str) -> tuple[str, int | None] | None:
    """(pricing_model, commitment_months) of a price column by its header, None otherwise."""
    h = header.lower()
    if "reserved" in h or "reserve" in h:
        m = _TERM.search(h)
        if not m:
            return "reserved", None
        n = int(m.group(1))
        return "reserved", n * 12 if m.group(2).lower() == "year" else n
    if "spot" in h:
        return "spot", None
    if "on-demand" in h or "on demand" in h:
        return "on_demand", None
    return None


def _gpu(name: str, tags: list[str]) -> tuple[str, str | None, float | None]:
    """(raw wording, canonical model, per-GPU memory) from a model name and its tags."""
    mem = None
    others = []
    for tag in tags:
        m = _MEM_TAG.match(tag)
        if m and mem is None:
            mem = float(m.group(1))
        else:
            others.append(tag)
    wording = " ".join([name, *tags])
    model = canonical_gpu(" ".join([name, *others]), memory_gb=mem)
    return wording, model, mem


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _offers_for(meta: CaptureMeta, name: str, tags: list[str],
                cells: list[tuple[str, str]], layout: str, require: str | None) -> list[Offer]:
    wording, model, mem = _gpu(name, tags)
    out = []
    for header, cell in cells:
        col = _column(header)
        if col is None:
            continue
        if require and require.lower() not in cell.lower():
            skip_unpriced(cell, f"price per {require}")
            continue  # "Contact sales", or a price in another unit
        price = parse_price(cell) if "$" in cell else None
        if price is None:
            skip_unpriced(cell)
            continue
        pricing_model, months = col
        out.append(make_offer(
            meta, sku=model or _slug(wording), gpu_model=model, gpu_count=1,
            price_per_hour=price, pricing_model=pricing_model, commitment_months=months,
            gpu_memory_gb=mem,
            extra={"source": "page", "gpu_wording": wording, "column": header,
                   "layout": layout, "unit": "GPU-hour"},
        ))
    return out


def _price_tables(sel: Selector) -> list[Selector]:
    return [t for t in sel.css("table")
            if any("on-demand" in _text(th).lower() for th in t.css("th"))]


def _parse_table(tables: list[Selector], meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    for table in tables:
        headers = [_text(th) for th in table.css("thead th, tr:first-child th")]
        for row in table.css("tbody tr"):
            tds = row.xpath("./td")
            if not tds:
                continue
            # First cell: the model name, then its tags ("80GB", "SXM").
            parts = [t.strip() for t in tds[0].css("::text").getall() if t.strip()]
            if not parts:
                continue
            cells = [(headers[i], _text(td)) for i, td in enumerate(tds)
                     if 0 < i < len(headers)]
            offers.extend(_offers_for(meta, parts[0], parts[1:], cells, "table", None))
    return offers


def _gpu_cards(sel: Selector) -> list[Selector]:
    cards = []
    for card in sel.css("div.prixing-item, div.pricing-item"):
        section = card.xpath(
            "normalize-space(preceding::h3[contains(@class,'pricing-col-heading')][1])"
        ).get() or ""
        if "gpu instances" in section.lower():
            cards.append(card)
    return cards


def _parse_cards(cards: list[Selector], meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    for card in cards:
        heading_row = card.xpath(
            "preceding::div[contains(@class,'pricing-table-heading')][1]"
            "//div[contains(@class,'pricing-heading')]"
        )
        headers = [_text(h) for h in heading_row]
        name = _text(card.css(".pricing-item-heading")[:1]) if card.css(
            ".pricing-item-heading") else ""
        if not name:
            continue
        tags = [t for t in (_text(t) for t in card.css(".pricing-tag")) if t]
        rich = [_text(c) for c in card.css(".pricing-rich")]
        # Heading 0 is "GPU model"; price cell i sits under heading i + 1.
        cells = [(headers[i + 1], cell) for i, cell in enumerate(rich) if i + 1 < len(headers)]
        offers.extend(_offers_for(meta, name, tags, cells, "cards", "/GPU-hr"))
    return offers


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    text = decode_html(body, meta)
    sel = Selector(text=text)
    cards = _gpu_cards(sel)
    if cards:
        offers = _parse_cards(cards, meta)
    else:
        tables = _price_tables(sel)
        if not tables:
            raise ParseError(
                PROVIDER, meta.url,
                "no GPU price table: neither 'GPU instances pricing' cards (.prixing-item) nor "
                "a <table> with an On-Demand column",
            )
        offers = _parse_table(tables, meta)
    if not offers:
        raise ParseError(PROVIDER, meta.url,
                         "GPU price table found but no row has a per-GPU-hour price")
    return offers
