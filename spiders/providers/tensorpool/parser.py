"""TensorPool: https://tensorpool.dev/pricing, TensorPool's own column of the comparison grid.

The same numbers render twice: mobile cards (`B200 SXM - <strong>$4.99</strong>` under "GPU
COSTS / HR") and a desktop grid `div.grid-cols-[200px_200px_1fr_1fr_1fr]` whose cells are flat
`div`s, five per row: `Category | GPU Type | Lambda Labs | TensorPool | Traditional Clouds (GCP,
AWS, etc.)`, the category cell filled on the first row of a group ("ON-DEMAND") and empty after.

Rows come from the grid only, from the column whose header says `TensorPool` (it also carries the
highlight class `bg-[#B8E7F5]`): Lambda's column is a competitor's price and "Traditional Clouds"
is TensorPool's estimate of AWS/GCP, never recorded (B200 SXM is $4.99 in both the Lambda and the
TensorPool column: a column is chosen by its header, not by a value). The mobile TensorPool card's
figure for the same GPU is kept in `extra.card_price` as a cross-check.

One price: `$4.99/hr` = USD per GPU-hour, on-demand (the group is "ON-DEMAND"; reservations are
"Contact us", unpriced: no row). `N/A` = not offered; the CPU row is not a GPU: no row.
"""

from __future__ import annotations

import re

from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import el_text, html_tree, parse_price, skip_unpriced
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "tensorpool"
_GRID = "//div[contains(@class, 'grid-cols-[200px_200px_1fr_1fr_1fr]')]"
_WIDTH = 5
_PER_HOUR = re.compile(r"^\$\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*hr$", re.I)
_CARD = re.compile(r"^(.+?)\s*-\s*\$\s*([0-9]+(?:\.[0-9]+)?)$")
_NOT_GPU = {"CPU"}
_CATEGORIES = {"ON-DEMAND": "on_demand"}


def _card_prices(tree) -> dict[str, float]:
    """The mobile TensorPool card: label -> price, for the cross-check."""
    out: dict[str, float] = {}
    for card in tree.xpath("//div[div/h3[normalize-space()='TensorPool']]"):
        for line in card.xpath(".//div[strong]"):
            m = _CARD.match(el_text(line))
            if m:
                out[m.group(1)] = float(m.group(2))
    return out


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    tree = html_tree(body, meta)
    grids = tree.xpath(_GRID)
    if not grids:
        raise ParseError(PROVIDER, meta.url, "unknown layout: no comparison grid "
                                             "(grid-cols-[200px_200px_1fr_1fr_1fr])")
    cells = grids[0].xpath("./div")
    header = [el_text(c) for c in cells[:_WIDTH]]
    if "TensorPool" not in header:
        raise ParseError(PROVIDER, meta.url, f"grid header has no TensorPool column: {header!r}")
    col = header.index("TensorPool")
    cards = _card_prices(tree)
    out: list[Offer] = []
    category = ""
    body_cells = cells[_WIDTH:]
    for i in range(0, len(body_cells) - _WIDTH + 1, _WIDTH):
        row = body_cells[i:i + _WIDTH]
        texts = [el_text(c) for c in row]
        category = texts[0] or category
        label, price_text = texts[1], texts[col]
        if "B8E7F5" not in (row[col].get("class") or ""):
            raise ParseError(PROVIDER, meta.url, f"{label!r}: the TensorPool cell lost its "
                                                 "highlight: grid cells out of step")
        if label.upper() in _NOT_GPU:
            skip_row(f"not a GPU ({label})")
            continue
        pricing_model = _CATEGORIES.get(category.upper())
        if pricing_model is None:
            raise ParseError(PROVIDER, meta.url, f"unknown price group {category!r}")
        m = _PER_HOUR.match(price_text)
        price = parse_price(m.group(1)) if m else None
        if price is None:
            skip_unpriced(price_text, "TensorPool price")
            continue
        extra = {"source": "page", "layout": "comparison-grid", "gpu_wording": label,
                 "price_wording": price_text, "price_basis": "per_gpu_hour",
                 "category": category}
        if label in cards:
            extra["card_price"] = cards[label]
        out.append(make_offer(meta, sku=label, gpu_model=canonical_gpu(label), gpu_count=1,
                              price_per_hour=price, pricing_model=pricing_model, extra=extra))
    if not out:
        raise ParseError(PROVIDER, meta.url, "the TensorPool column holds no '$X/hr' GPU price")
    return out
