"""Lambda: the public pricing page, in the two layouts of the captures.

(The package is named for the provider id; ``lambda`` is a Python keyword, so it is imported with
``importlib.import_module("gpuprices.spiders.providers.lambda.parser")``, as ``parser_for`` does.)

Layouts, chosen by what the page holds:

- ``tabs`` (2025-26, lambda.ai/pricing): after "Instances pricing", a tab strip ``8x / 4x / 2x /
  1x`` (``button[role=tab]``) whose panels (``div[role=tabpanel]``) are all in the HTML. Rows
  ``tr[data-plan]`` with ``td[data-label=...]`` cells; the price column ``PRICE/GPU/HR*`` is per
  GPU-hour for that shape. The GPU count is the panel's tab label. Only tables with a
  ``VRAM/GPU`` column are instance tables. The 1-Click Clusters table (first on the ~2026-08
  page) is read apart, as committed prices by cluster size and term (``clusters.py``).
- ``table`` (2024, lambdalabs.com/service/gpu-cloud): one table whose first cell holds tier and
  shape, "On-demand 8x NVIDIA H100 SXM", then VRAM, vCPUs, RAM, storage, "$2.99 / GPU / hr" or
  "CONTACT SALES".

``price_per_hour`` is per instance: per-GPU price x GPU count (the per-GPU price falls with the
count: 2024 H100 SXM 1x 3.29 ... 8x 2.99). Tier "On-demand" -> ``on_demand``; "Reserved" (and
1-Click Clusters) -> ``committed`` when priced, no row for "Contact sales". Lambda has no spot.
The same plan name can carry two memories ("NVIDIA A100 SXM" 80 GB and 40 GB): rows are keyed on
plan + VRAM. Lambda prices are the same in every region (region left empty). Its billing
increment is not stated on the page: left empty rather than guessed.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import html as lxml_html

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import decode_html, el_text, parse_price, skip_unpriced
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

from .clusters import cluster_offers

PROVIDER = "lambda"

_COUNT = re.compile(r"^\s*(\d+)\s*x\b", re.I)
_TIER_ROW = re.compile(
    r"^\s*(On[- ]demand|Reserved|1-Click Clusters?)\s+(\d+)\s*x\s+(.+?)\s*$", re.I
)
_GIB_TO_GB = 1.073741824  # 1 GiB = 2^30 bytes; ram_gb is decimal GB
_NO_PRICE = re.compile(r"contact|sales|call|—|–|n/a", re.I)


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    if not body or not body.strip():
        raise ParseError(PROVIDER, meta.url, "empty response body")
    if body.lstrip()[:1] in (b"{", b"["):
        raise ParseError(PROVIDER, meta.url, "body is JSON, not HTML")
    text = decode_html(body, meta)
    try:
        tree = lxml_html.fromstring(text)
    except (ValueError, lxml_html.etree.ParserError) as exc:
        raise ParseError(PROVIDER, meta.url, f"HTML has no elements ({exc})") from exc
    panels = tree.xpath("//div[@role='tabpanel'][.//tr[@data-plan]]")
    if panels:
        offers = _parse_tabs(tree, panels, meta) + cluster_offers(tree, meta)
        layout = "tabs"
    else:
        rows = [r for r in tree.xpath("//tr") if _TIER_ROW.match(_first_cell_text(r))]
        if not rows:
            raise ParseError(
                PROVIDER, meta.url,
                "unknown layout: no tabpanel with tr[data-plan] and no 'On-demand Nx <GPU>' rows",
            )
        offers = _parse_table(rows, meta)
        layout = "table"
    if not offers:
        raise ParseError(PROVIDER, meta.url,
                         f"no prices in the {layout} layout (every price cell empty or "
                         "'Contact sales')")
    return offers


def _first_cell_text(tr: Any) -> str:
    cells = tr.xpath("./td|./th")
    return el_text(cells[0]) if cells else ""


def _number(text: str) -> float | None:
    m = re.search(r"([0-9]+(?:\.[0-9]+)?)", text.replace(",", ""))
    return float(m.group(1)) if m else None


def _ram_gb(text: str) -> float | None:
    value = _number(text)
    if value is None:
        return None
    return round(value * _GIB_TO_GB, 1) if "gib" in text.lower() else value


def _price(text: str) -> float | None:
    if not text or _NO_PRICE.search(text) or "$" not in text:
        return None
    return parse_price(text)


def _offer(
    meta: CaptureMeta, *, plan: str, vram_text: str, count: int, per_gpu: float,
    tier: str, vcpus_text: str, ram_text: str, storage_text: str, layout: str,
    price_text: str, per_gpu_basis: bool,
) -> Offer:
    vram = _number(vram_text)
    pricing_model = "on_demand" if tier.lower().replace(" ", "-") == "on-demand" else "committed"
    price = per_gpu * count if per_gpu_basis else per_gpu
    extra = {
        "source": "page", "layout": layout, "gpu_wording": plan, "tier": tier,
        "price_wording": price_text, "storage": storage_text or None,
        "price_basis": "per_gpu_hour" if per_gpu_basis else "per_instance_hour",
        "ram_wording": ram_text or None,
    }
    if pricing_model == "committed":
        extra["provider_term"] = tier  # term length not printed beside the price
    return make_offer(
        meta,
        sku=f"{count}x {plan} {vram:g} GB" if vram else f"{count}x {plan}",
        gpu_model=canonical_gpu(plan, vram),
        gpu_memory_gb=vram,
        gpu_count=count,
        price_per_hour=round(price, 6),
        pricing_model=pricing_model,
        vcpus=_number(vcpus_text) if vcpus_text else None,
        ram_gb=_ram_gb(ram_text) if ram_text else None,
        currency="USD",
        extra={k: v for k, v in extra.items() if v is not None},
    )


def _panel_count(tree: Any, panel: Any, order: int) -> int | None:
    label_id = panel.get("aria-labelledby")
    if label_id:
        buttons = tree.xpath("//*[@id=$i]", i=label_id)
        if buttons:
            m = _COUNT.match(el_text(buttons[0]))
            if m:
                return int(m.group(1))
    tabs = tree.xpath("//*[@role='tab']")
    if order < len(tabs):
        m = _COUNT.match(el_text(tabs[order]))
        if m:
            return int(m.group(1))
    return None


def _parse_tabs(tree: Any, panels: list[Any], meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    all_panels = tree.xpath("//div[@role='tabpanel']")
    for panel in panels:
        tab_count = _panel_count(tree, panel, all_panels.index(panel))
        for table in panel.xpath(".//table"):
            headers = [el_text(h).upper() for h in table.xpath(".//thead//th|.//thead//td")]
            labels = {c.get("data-label", "").upper() for c in table.xpath(".//td[@data-label]")}
            if "VRAM/GPU" not in headers and "VRAM/GPU" not in labels:
                continue  # not an instance table (e.g. 1-Click Clusters)
            for tr in table.xpath(".//tr[@data-plan]"):
                cells = {c.get("data-label", "").upper(): el_text(c)
                         for c in tr.xpath("./td[@data-label]|./th[@data-label]")}
                plan = (tr.get("data-plan") or cells.get("PLAN", "")).strip()
                price_label = next((k for k in cells if k.startswith("PRICE")), None)
                if not plan or price_label is None:
                    continue
                count = tab_count
                m = _COUNT.match(plan)
                if m:  # "8x NVIDIA ..." in the row itself wins over the tab
                    count, plan = int(m.group(1)), plan[m.end():].strip()
                if count is None:
                    raise ParseError(PROVIDER, meta.url,
                                     f"no GPU count for {plan!r}: tab label is not 'Nx'")
                per_gpu = _price(cells[price_label])
                if per_gpu is None:
                    skip_unpriced(cells[price_label])
                    continue  # "Contact sales" or an empty cell: not a self-serve price
                offers.append(_offer(
                    meta, plan=plan, vram_text=cells.get("VRAM/GPU", ""), count=count,
                    per_gpu=per_gpu, tier="On-demand", vcpus_text=cells.get("VCPUS", ""),
                    ram_text=cells.get("RAM", ""), storage_text=cells.get("STORAGE", ""),
                    layout="tabs", price_text=cells[price_label],
                    per_gpu_basis="GPU" in price_label.replace("VRAM/GPU", ""),
                ))
    return offers


def _parse_table(rows: list[Any], meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    for tr in rows:
        cells = [el_text(c) for c in tr.xpath("./td|./th")]
        tier, count, plan = _TIER_ROW.match(cells[0]).groups()
        if len(cells) < 6:
            raise ParseError(PROVIDER, meta.url,
                             f"row {cells[0]!r} has {len(cells)} cells, expected 6")
        vram_text, vcpus_text, ram_text, storage_text, price_text = cells[1:6]
        per_gpu = _price(price_text)
        if per_gpu is None:
            skip_unpriced(price_text)
            continue  # "CONTACT SALES"
        offers.append(_offer(
            meta, plan=plan, vram_text=vram_text, count=int(count), per_gpu=per_gpu,
            tier=tier, vcpus_text=vcpus_text, ram_text=ram_text, storage_text=storage_text,
            layout="table", price_text=price_text,
            per_gpu_basis="/ gpu" in price_text.lower() or "/gpu" in price_text.lower(),
        ))
    return offers
