"""Civo: https://www.civo.com/pricing (server-rendered), the NVIDIA GPU section only.

The page holds 23 `table.pricing-table`s (compute, Kubernetes, databases...); the GPU ones are
inside `<section class="pricing-product" id="nvidia-gpus">`, fenced on that section (the bare id
`nvidia-gpus` is also on an inner `div`). One table per chip, captioned `NVIDIA {label} GPU
pricing`; each row is one instance size:

- `td[data-title=Size]` with `div.product-detail` = `N x NVIDIA {model} - {memory}`: N GPUs;
- RAM, vCPU, Storage cells;
- `td.on-demand-pricing` and `td.commitment-pricing`; the latter holds one block per term,
  `div#6_months`, `#12_months`, `#24_months`, `#36_months` (only the 36-month one is visible by
  default: read them by id, never by visibility).

Every price cell prints an hourly (`data-option="hourly"`, `$D.DD<span>per hour</span>`) and a
monthly figure; only hourly prints are read (the monthly ones carry copy slips: the A100 40GB
12-month monthly repeats the 6-month one, B200's 12-month monthly is N/A beside a $35.92 hourly).

One price = USD per INSTANCE-hour for N GPUs (per GPU = price / N, done by the contract).
On-demand -> `on_demand`; an N-month commitment -> `committed`, `commitment_months` N, the term's
word in `extra.provider_term`. `N/A` is not offered: no row, never $0 (B200 has no on-demand and
no 6-month price; its cheapest print is the 36-month term, never relabelled on-demand).

The caption's memory (A100 40GB / 80GB) must agree with the row's, so one table's rows are never
read as the other chip. The page prices no region: one row per size and term.
"""

from __future__ import annotations

import re

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import el_text, html_tree, parse_price, skip_unpriced
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "civo"

_SECTION = ("//section[@id='nvidia-gpus' and "
            "contains(concat(' ', normalize-space(@class), ' '), ' pricing-product ')]")
_CAPTION = re.compile(r"^NVIDIA\s+(.+?)\s+GPU pricing$", re.I)
_DETAIL = re.compile(r"^(\d+)\s*x\s*(NVIDIA\s+.+?)\s*-\s*(\d+)\s*GB\b(.*)$", re.I)
_MEM = re.compile(r"(\d+)\s*GB", re.I)
_TERMS = (6, 12, 24, 36)  # the commitment blocks' ids, `<N>_months`, and the term selector
_MONEY = re.compile(r"^\$\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")  # a whole "$1.29" print
_NUM = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(TB|GB)?", re.I)


def _hourly(cell) -> str | None:
    """The hourly print of a price block: `data-option="hourly"` holding a `per hour` span."""
    for div in cell.xpath(".//div[@data-option='hourly']"):
        if "per hour" in el_text(div).lower():
            span = div.find("span")
            text = (div.text or "") if span is not None else el_text(div)
            return " ".join(text.split())
    return None


def _gb(text: str) -> float | None:
    m = _NUM.search(text)
    if not m:
        return None
    value = float(m.group(1))
    # "2.5TB" (B200 RAM) as printed, in decimal units: the page gives no other figure.
    return value * 1000 if (m.group(2) or "").upper() == "TB" else value


def _table_offers(table, meta: CaptureMeta) -> list[Offer]:
    caption = el_text(table.find("caption"))
    cm = _CAPTION.match(caption)
    if not cm:
        return []
    label = cm.group(1)
    cap_mem = _MEM.search(label)
    out: list[Offer] = []
    for row in table.xpath(".//tbody/tr"):
        detail = row.xpath(".//td[@data-title='Size']//div[contains(@class, 'product-detail')]")
        dm = _DETAIL.match(el_text(detail[0])) if detail else None
        if not dm:
            raise ParseError(PROVIDER, meta.url,
                             f"{caption!r}: a row without 'N x NVIDIA <model> - <mem>GB' size")
        n, model, mem = int(dm.group(1)), dm.group(2), int(dm.group(3))
        if cap_mem and int(cap_mem.group(1)) != mem:
            raise ParseError(PROVIDER, meta.url,
                             f"{caption!r} holds a {mem}GB row ({el_text(detail[0])!r})")
        chip = model.split()[-1]
        if chip.upper() not in label.upper():
            raise ParseError(PROVIDER, meta.url,
                             f"{caption!r} holds a row of another chip ({el_text(detail[0])!r})")
        # The caption adds the form factor the row omits (H100 SXM, H200 SXM).
        form = " SXM" if re.search(r"\bSXM\b", label, re.I) else ""
        wording = f"{model}{form} {mem}GB"
        size = el_text(detail[0].getparent()).replace(el_text(detail[0]), "").strip()
        cells = {c.get("data-title"): c for c in row.xpath("./td")}
        base = dict(
            sku=f"{n}x {chip}{form} {mem}GB {size}".strip(),
            gpu_model=canonical_gpu(wording), gpu_count=n, gpu_memory_gb=float(mem),
            vcpus=_gb(el_text(cells["vCPU"])) if "vCPU" in cells else None,
            ram_gb=_gb(el_text(cells["RAM"])) if "RAM" in cells else None,
        )
        extra = {"source": "page", "layout": "pricing-table", "gpu_wording": el_text(detail[0]),
                 "caption": caption, "size": size, "price_basis": "per_instance_hour"}
        storage = cells.get("Storage")
        if storage is not None:
            extra["storage"] = el_text(storage)
        prices: list[tuple[str, int | None, str | None]] = []
        on_demand = row.xpath(".//td[contains(@class, 'on-demand-pricing')]")
        if on_demand:
            prices.append(("on_demand", None, _hourly(on_demand[0])))
        commit = row.xpath(".//td[contains(@class, 'commitment-pricing')]")
        for months in _TERMS:
            block = commit[0].xpath(f".//div[@id='{months}_months']") if commit else []
            if block:
                prices.append(("committed", months, _hourly(block[0])))
        if not prices:
            raise ParseError(PROVIDER, meta.url, f"{caption!r} {el_text(detail[0])!r}: "
                                                 "no on-demand or commitment price cell")
        for model_, months, text in prices:
            price = parse_price(text) if text and _MONEY.match(text) else None
            if price is None:
                skip_unpriced(text, f"{months}-month price" if months else "on-demand price")
                continue
            term = {"provider_term": f"Commitment - {months} months"} if months else {}
            out.append(make_offer(meta, **base, price_per_hour=price, pricing_model=model_,
                                  commitment_months=months,
                                  extra={**extra, **term, "price_wording": text}))
    return out


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    tree = html_tree(body, meta)
    sections = tree.xpath(_SECTION)
    if not sections:
        raise ParseError(PROVIDER, meta.url,
                         "unknown layout: no <section class='pricing-product' id='nvidia-gpus'>")
    tables = [t for s in sections for t in s.xpath(".//table")
              if _CAPTION.match(el_text(t.find("caption")))]
    if not tables:
        raise ParseError(PROVIDER, meta.url,
                         "the NVIDIA GPU section holds no 'NVIDIA ... GPU pricing' table")
    offers = [o for t in tables for o in _table_offers(t, meta)]
    if not offers:
        raise ParseError(PROVIDER, meta.url,
                         f"{len(tables)} GPU tables but no hourly price in any of them")
    return offers
