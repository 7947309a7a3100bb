"""Hot Aisle: https://hotaisle.xyz/pricing (Astro, server-rendered), AMD MI300X only.

Prices are read from the plan cards only. A card is a `div` whose first block holds a kicker
`<p>` ("VM" or "Bare metal"), an `<h2>` plan name (Small, Medium, Large), a size line
`<span>1x</span><span>MI300x</span>` ("2x &amp; 4x" on Medium) and a `$X/GPU/hr` price, with
a note beside it ("bare metal, one-month minimum"). The hero boxes above the cards and the
`<meta>` description repeat the same prices: they give no rows (count cards, not dollars).

- One row per size a card sells: Medium "2x & 4x" gives a 2-GPU and a 4-GPU row.
  `price_per_hour` is per VM or node (per-GPU price x GPUs).
- VM cards -> `on_demand`, billed by the minute (the page: "billed by the minute").
- A card whose note says "one-month minimum" -> `committed`, `commitment_months` 1 (8x bare
  metal needs a month).
- The "grandfathered at $1.99/GPU/hr" sentence is for existing customers only: no row (a new
  buyer cannot rent at it); its figure is kept in every row's `extra.grandfathered_rate`.
"""

from __future__ import annotations

import re

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import el_text, html_tree, parse_price
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "hotaisle"

_PER_GPU = re.compile(r"\$\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*GPU\s*/\s*hr", re.I)
_SIZES = re.compile(r"(\d+)\s*x\b", re.I)
_MINIMUM = re.compile(r"one[- ]month minimum", re.I)
_GRANDFATHERED = re.compile(r"grandfathered at\s*\$\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*GPU", re.I)
_MINUTE_S = 60  # "billed by the minute" (the page's VM box)


def _cards(tree) -> list:
    """Plan cards: a block with an h2 plan name and a size line of spans before a $/GPU/hr."""
    return tree.xpath("//div[h2 and div[span] and .//p[contains(., '/GPU/hr')]]")


def _card_offers(card, meta: CaptureMeta, grandfathered: float | None) -> list[Offer]:
    kicker = el_text(card.xpath("./p[1]")[0]) if card.xpath("./p[1]") else ""
    plan = el_text(card.xpath("./h2")[0])
    spans = [el_text(s) for s in card.xpath("./div[span][1]/span")]
    price_p = card.xpath(".//p[contains(., '/GPU/hr')]")[0]
    price_text = el_text(price_p)
    m = _PER_GPU.search(price_text)
    if not m or len(spans) < 2:
        return []
    per_gpu = parse_price(m.group(1))
    sizes = [int(n) for n in _SIZES.findall(spans[0])]
    wording = spans[-1]
    committed = bool(_MINIMUM.search(price_text))
    out = []
    for n in sizes:
        extra = {"source": "page", "layout": "cards", "gpu_wording": wording, "plan": plan,
                 "kicker": kicker, "price_wording": price_text, "price_basis": "per_gpu_hour"}
        if committed:
            extra["provider_term"] = "one-month minimum"
        if grandfathered:
            extra["grandfathered_rate"] = grandfathered
        out.append(make_offer(
            meta, sku=f"{n}x {wording} {kicker}".strip(), gpu_model=canonical_gpu(wording),
            gpu_count=n, price_per_hour=round(per_gpu * n, 6),
            pricing_model="committed" if committed else "on_demand",
            commitment_months=1 if committed else None,
            billing_increment_s=None if committed else _MINUTE_S,
            extra=extra,
        ))
    return out


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    tree = html_tree(body, meta)
    cards = _cards(tree)
    if not cards:
        raise ParseError(PROVIDER, meta.url,
                         "unknown layout: no plan card (h2 plan name, size spans, $X/GPU/hr)")
    g = _GRANDFATHERED.search(" ".join(tree.text_content().split()))
    grandfathered = float(g.group(1)) if g else None
    offers = [o for card in cards for o in _card_offers(card, meta, grandfathered)]
    if not offers:
        raise ParseError(PROVIDER, meta.url,
                         f"{len(cards)} plan cards but none has an 'Nx' size and a $/GPU/hr price")
    return offers
