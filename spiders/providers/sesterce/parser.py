"""Sesterce: the homepage's live-offers table, or (console.py) the console's offers book,
chosen by what the page holds.

Homepage: inside `id="pricing"`, `<table class="bloomberg__table">` with the header
`Model | From / GPU / hr | Available now | Listed GPUs | Live regions`; each row a model
(`bbg-model` B300), its vendor line (`bbg-vendor` "NVIDIA Hopper · SXM5 / PCIe") and
`<span class="bbg-price">$1.83</span>`. The footer pins the unit: "LIVE OFFERS ·
CLOUD.SESTERCE.COM · USD · ON-DEMAND". One price: USD per GPU-hour, the FLOOR across the
console's configurations and regions, so each row is marked `extra.price_kind = "from"` (not a
firm price: warehouse/sql/staging/price_caveat.sql). H100 and A100 floors blend SXM and PCIe
parts (and A100 40 and 80 GB): no single GPU model, kept unmapped with that reason.

Traps (../shared/PROVIDERS_MORE2.md, Sesterce homepage): a ticker repeats every price
(`NVDA·B300 $8.48`), a static CLI strip above shows stale prices ($1.66 / gpu / hr for H100)
and the flight tail repeats them as `$$8.48`: only the table's cells are read. `Limited` rows
(0/7 regions) still carry prices.
"""

from __future__ import annotations

import re
from typing import Any

from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import decode_html, el_text, html_tree, parse_price
from gpuprices.spiders.providers.sesterce import console
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "sesterce"
HEADER = ["Model", "From / GPU / hr", "Available now", "Listed GPUs", "Live regions"]
FOOTER = ("USD", "ON-DEMAND")


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    if b"filteredOffers" in body:
        return console.parse(body, meta)
    if b"bloomberg__table" in body:
        return _homepage(body, meta)
    raise ParseError(PROVIDER, meta.url, "neither the homepage's bloomberg__table nor the "
                     "console's filteredOffers book")


def _homepage(body: bytes, meta: CaptureMeta) -> list[Offer]:
    decode_html(body, meta)
    tree = html_tree(body, meta)
    tables = tree.xpath('//table[contains(concat(" ", @class, " "), " bloomberg__table ")]')
    if len(tables) != 1:
        raise ParseError(PROVIDER, meta.url, f"{len(tables)} bloomberg__table tables, "
                         "expected 1")
    table = tables[0]
    header = [el_text(th) for th in table.xpath("./thead/tr/th")][:len(HEADER)]
    if header != HEADER:
        raise ParseError(PROVIDER, meta.url, f"live-offers header {header}, expected {HEADER}")
    footer = " ".join(el_text(f) for f in tree.xpath(
        '//div[contains(concat(" ", @class, " "), " bloomberg__footer ")]'))
    if not all(word in footer.split(" · ") for word in FOOTER):
        raise ParseError(PROVIDER, meta.url, f"live-offers footer {footer!r} does not pin "
                         "USD and ON-DEMAND")
    offers = [o for o in (_row(tr, meta) for tr in table.xpath("./tbody/tr")) if o]
    if not offers:
        raise ParseError(PROVIDER, meta.url, "no priced row in the live-offers table")
    return offers


def _cls(el: Any, name: str) -> str:
    found = el.xpath(f'.//*[contains(concat(" ", @class, " "), " {name} ")]')
    return el_text(found[0]) if found else ""


def _row(tr: Any, meta: CaptureMeta) -> Offer | None:
    name, vendor = _cls(tr, "bbg-model"), _cls(tr, "bbg-vendor")
    price = parse_price(_cls(tr, "bbg-price"))
    if not name or price is None:
        skip_row("live-offers row without a model or a price")
        return None
    cells = [el_text(td) for td in tr.xpath("./td")]
    forms = [f.strip() for f in vendor.split("·")[-1].split("/")] if "·" in vendor else []
    extra: dict[str, Any] = {
        "source": "homepage",
        "gpu_wording": f"{name} ({vendor})" if vendor else name,
        "price_kind": "from",
        "available_now": cells[1] if len(cells) > 1 else None,
        "listed_gpus": _int(cells[2]) if len(cells) > 2 else None,
        "live_regions": re.sub(r"\s+", " ", cells[3]).strip() if len(cells) > 3 else None,
    }
    model = None
    if len(forms) > 1:
        extra["unmapped_reason"] = (f"a floor across {' and '.join(forms)} parts of {name}: "
                                    "no single GPU model")
    else:
        model = canonical_gpu(f"{name} {forms[0]}" if forms else name)
    return make_offer(
        meta,
        sku=f"{name} from",
        gpu_model=model,
        gpu_count=1,
        price_per_hour=price,
        pricing_model="on_demand",
        currency="USD",
        extra=extra,
    )


def _int(text: str) -> int | None:
    m = re.search(r"\d+", text)
    return int(m.group()) if m else None
