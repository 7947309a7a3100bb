"""GMI Cloud: https://www.gmicloud.ai/en/pricing, one card per GPU.

Each card is an availability badge (`<div class="absolute ...">AVAILABLE NOW</div>` or
"Limited Availability"), `<h3>NVIDIA <chip></h3>` and the span pair `<span>from $X.XX</span>
<span>/GPU-hour</span>`. Only that pair is read: `$2.00` is also in the meta, og, twitter and
JSON-LD descriptions, which are marketing copy, not a card.

One price: USD per GPU-hour, a "from" floor (GMI's FAQ says on-demand and committed prices
differ): `on_demand` with `extra.price_kind = "from"`, so the views keep it out of firm figures
(warehouse/sql/staging/price_caveat.sql) and it is a different offer from a firm price. A card
whose price span says "Pre order" (GB300 at capture) has no price and gives no row. GB200 and
GB300 are Grace-Blackwell superchips, never B200/B300 (alias table: GB200, GB300). The badge
sets `available` (both badges mean the card can be ordered; the wording is kept in
`extra.stock`).

GMI prints "NVIDIA H100 GPU" with no form factor or memory anywhere on the page; its H100 could
be the SXM or the PCIe part and public third-party tables disagree, so it stays unmapped with
its reason (UNMAPPED) rather than guessed (tests/test_coverage.py holds it to that list).

The datacenter roster (source.py IDCS_URL) holds no prices: `wants` passes over it and
`postprocess` adds the countries of the available datacenters (pseudo-entry `global` left out)
to each row as `extra.idc_countries`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from parsel import Selector

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import decode_html, parse_price, skip_unpriced
from gpuprices.spiders.providers.gmicloud.source import IDCS_URL
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "gmicloud"
_FROM = re.compile(r"^\s*from\s+\$", re.I)
# Card wordings whose chip the page does not pin down, with what was looked for.
UNMAPPED = {
    "NVIDIA H100 GPU": (
        "GMI's card names no H100 form factor or memory (SXM 80GB, PCIe 80GB and NVL 94GB all "
        "sell as 'H100'); the pricing page excerpt, its JSON-LD and the IDC roster say nothing "
        "more; third-party tables disagree (searched 2026-12-03)"),
}


def wants(meta: CaptureMeta) -> bool:
    return meta.url != IDCS_URL


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    sel = Selector(text=decode_html(body, meta))
    cards = sel.xpath("//h3[starts-with(normalize-space(.), 'NVIDIA')]")
    if not cards:
        raise ParseError(PROVIDER, meta.url, "unknown layout: no 'NVIDIA <chip>' card heading")
    offers = [o for o in (_card(h3, meta) for h3 in cards) if o]
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"{len(cards)} GPU cards, none with a "
                         "'from $X' + '/GPU-hour' price")
    return offers


def _card(h3: Selector, meta: CaptureMeta) -> Offer | None:
    label = " ".join(h3.xpath("string(.)").get().split())
    spans = h3.xpath("following-sibling::div[1]/span")
    texts = [" ".join(s.xpath("string(.)").get().split()) for s in spans]
    if len(texts) < 2 or texts[1] != "/GPU-hour":
        raise ParseError(PROVIDER, meta.url, f"card {label!r}: no price span + '/GPU-hour' "
                         f"pair after the heading (found {texts!r})")
    price = parse_price(texts[0]) if _FROM.match(texts[0]) else None
    if price is None:
        skip_unpriced(texts[0])  # "Pre order": announced, not priced
        return None
    badge = " ".join(h3.xpath("string(preceding-sibling::div[1])").get().split())
    model = None if label in UNMAPPED else canonical_gpu(label)
    extra: dict[str, Any] = {"source": "page", "gpu_wording": label, "price_kind": "from",
                             "price_wording": texts[0], "price_basis": "per_gpu_hour",
                             "stock": badge or None}
    if label in UNMAPPED:
        extra["unmapped_reason"] = UNMAPPED[label]
    return make_offer(
        meta, sku=label, gpu_model=model, gpu_count=1, price_per_hour=price,
        pricing_model="on_demand", currency="USD",
        available=True if badge.lower() in ("available now", "limited availability") else None,
        extra=extra)


def idc_countries(body: bytes) -> list[str]:
    """Countries (ISO codes, sorted) of the roster's datacenters whose status is `available`;
    the `global` pseudo-entry has no country and is left out."""
    try:
        idcs = json.loads(body).get("idcs")
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return []
    if not isinstance(idcs, list):
        return []
    return sorted({i["country"] for i in idcs if isinstance(i, dict) and i.get("country")
                   and i.get("idcId") != "global" and i.get("status") == "available"})


def postprocess(offers: list[Offer], captures: list) -> list[Offer]:
    """Each row with the countries of the day's available datacenters (when the roster was
    read): the page prices one GPU-hour for all of them."""
    roster = [c for c in captures if c.url == IDCS_URL and c.status == 200]
    if not roster:
        return offers
    countries = idc_countries(roster[-1].body)
    for o in offers:
        o.extra["idc_countries"] = countries
    return offers
