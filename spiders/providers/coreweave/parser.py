"""CoreWeave: the public pricing page in its two layouts, and one derived JSON.

Layouts, chosen by what the body holds:

- ``instances`` (2025+, coreweave.com/pricing): "On-demand GPU instances", one table per region
  (an ``h5 strong.eyebrow`` "REGION: NORTH AMERICA" / "REGION: EUROPE" before each
  ``div.table-v2.gpu-pricing``). Rows ``div.table-row-v2`` name the GPU in
  ``h3.table-model-name[data-product]``; the grid cells line up with the header cells (GPU
  Count, VRAM, vCPUs, System RAM, Local Storage, On-Demand Price, Spot Price and, in North
  America only, "Inference Single GPU Price"). Prices are per INSTANCE-hour: the contract's
  per-GPU price is price / GPU count (8x HGX H100 $49.24 -> $6.155). A count with a footnote
  mark ("4^1", GB200/GB300 NVL72) is read as its leading number; the raw text goes to
  ``extra["gpu_count_wording"]``. Spot -> ``spot``; "N/A", "Contact sales" or an empty cell
  give no row. The inference column is a different product (serverless inference billed per
  single GPU) and is skipped. A row repeated in a second listing (general and Kubernetes lists)
  is counted once per (data-product, region). CPU, storage and networking tables are skipped:
  only tables whose first header is "GPU Model" are read.
- ``component`` (2023-24, /gpu-cloud-pricing): "GPU Component Cost Per Hour". Rows
  ``div.table-body-row`` with ``a[data-product]``; cells VRAM, max vCPUs per GPU, max RAM per
  GPU, price in ``<strong>``. This price is the GPU alone (vCPU and RAM were billed on top), so
  every row carries ``extra["price_scope"] = "gpu_component_only"`` and must not be compared
  silently with all-in instance prices; the vCPU/RAM maxima go to ``extra``.
- ``becloudready_json`` (derived): ``becloudready/gpu-price``'s own BeautifulSoup parse of the
  pricing page (a JSON list with ``product``, ``gpu_count``, ``price_per_hour_usd``). Not a raw
  capture: rows are flagged ``extra["derived"] = True``; a row without a GPU count (their GB200)
  is skipped rather than guessed; region is unknown.

CoreWeave does not print a billing increment beside these prices: left empty.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lxml import html as lxml_html

from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import (
    decode_html,
    el_text,
    load_json,
    parse_price,
    skip_unpriced,
)
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "coreweave"

_LEADING_INT = re.compile(r"^\s*(\d+)")
_NO_PRICE = re.compile(r"contact|n/a|—|–|call|sales", re.I)
# "(High Memory)" / "(Standard Memory)" after "RTX PRO 6000 Blackwell Server Edition" names the
# host RAM of the instance (System RAM 1,024 vs 512 GB in the same rows), not the GPU.
_SUFFIX = re.compile(r"\s*\((?:high|standard) memory\)\s*$", re.I)


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    if not body or not body.strip():
        raise ParseError(PROVIDER, meta.url, "empty response body")
    if body.lstrip()[:1] in (b"{", b"["):
        offers = _parse_derived_json(load_json(body, meta), meta)
        layout = "becloudready_json"
    else:
        text = decode_html(body, meta)
        try:
            tree = lxml_html.fromstring(text)
        except (ValueError, lxml_html.etree.ParserError) as exc:
            raise ParseError(PROVIDER, meta.url, f"HTML has no elements ({exc})") from exc
        tables = [t for t in tree.xpath(
            "//div[contains(concat(' ', normalize-space(@class), ' '), ' table-v2 ')]"
            "[contains(concat(' ', normalize-space(@class), ' '), ' gpu-pricing ')]"
        ) if _headers(t)[:1] == ["GPU MODEL"]]
        component_rows = tree.xpath(
            "//div[contains(concat(' ', normalize-space(@class), ' '), ' table-body-row ')]"
            "[.//a[@data-product]]"
        )
        if tables:
            offers, layout = _parse_instances(tables, meta), "instances"
        elif component_rows:
            offers, layout = _parse_component(component_rows, meta), "component"
        else:
            raise ParseError(
                PROVIDER, meta.url,
                "unknown layout: no 'GPU Model' div.table-v2.gpu-pricing table and no "
                "div.table-body-row with a[data-product]",
            )
    if not offers:
        raise ParseError(PROVIDER, meta.url,
                         f"no prices in the {layout} layout (every price empty, N/A or "
                         "'Contact sales')")
    return offers


def _num(text: str) -> float | None:
    m = re.search(r"[0-9][0-9,]*(?:\.[0-9]+)?", text or "")
    return float(m.group(0).replace(",", "")) if m else None


def _price(text: str) -> float | None:
    if not text or _NO_PRICE.search(text) or "$" not in text:
        return None
    return parse_price(text)


def _headers(table: Any) -> list[str]:
    return [el_text(h).upper() for h in table.xpath(
        ".//div[contains(concat(' ', normalize-space(@class), ' '), ' table-v2-header ')]"
        "//div[contains(concat(' ', normalize-space(@class), ' '), ' table-header-text ')]"
    )]


def _region(table: Any) -> str | None:
    eyebrow = table.xpath("preceding::strong[contains(concat(' ', normalize-space(@class),"
                          " ' '), ' eyebrow ')][1]")
    if not eyebrow:
        return None
    m = re.match(r"\s*REGION:\s*(.+)", el_text(eyebrow[0]), re.I)
    return re.sub(r"\s+", "-", m.group(1).strip().lower()) if m else None


def _column(headers: list[str], *words: str) -> int | None:
    for i, h in enumerate(headers):
        if all(w in h for w in words):
            return i
    return None


def _parse_instances(tables: list[Any], meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    seen: set[tuple[str, str | None]] = set()
    for table in tables:
        headers = _headers(table)
        region = _region(table)
        col = _instance_columns(headers, region, meta)
        for row in table.xpath(
            ".//div[contains(concat(' ', normalize-space(@class), ' '), ' table-row-v2 ')]"
        ):
            name_el = row.xpath(".//h3[@data-product]")
            if not name_el:
                continue
            slug = name_el[0].get("data-product")
            if (slug, region) in seen:
                continue  # the same instance listed again (general and Kubernetes lists)
            seen.add((slug, region))
            offers += _instance_offers(row, name_el[0], headers, col, region, meta)
    return offers


def _instance_columns(headers: list[str], region: str | None, meta: CaptureMeta
                      ) -> dict[str, int | None]:
    col = {
        "count": _column(headers, "GPU COUNT"),
        "vram": _column(headers, "VRAM"),
        "vcpus": _column(headers, "VCPU"),
        "ram": _column(headers, "SYSTEM RAM"),
        "storage": _column(headers, "LOCAL STORAGE"),
        "on_demand": _column(headers, "ON-DEMAND", "PRICE"),
        "spot": _column(headers, "SPOT", "PRICE"),
    }
    if col["count"] is None or col["on_demand"] is None:
        raise ParseError(PROVIDER, meta.url,
                         f"GPU table in region {region!r} lacks GPU Count or On-Demand "
                         f"Price columns (headers {headers})")
    return col


def _instance_offers(row: Any, name_el: Any, headers: list[str], col: dict[str, int | None],
                     region: str | None, meta: CaptureMeta) -> list[Offer]:
    """The on-demand and spot offers of one instance row."""
    slug = name_el.get("data-product")
    grid = row.xpath(".//div[contains(concat(' ', normalize-space(@class), ' '),"
                     " ' table-grid ')][1]")
    cells = [el_text(c) for c in grid[0].xpath(
        "./div[contains(concat(' ', normalize-space(@class), ' '), ' table-v2-cell ')]"
    )] if grid else []
    if len(cells) < len(headers):
        raise ParseError(PROVIDER, meta.url,
                         f"row {slug!r} has {len(cells)} cells for {len(headers)} "
                         "headers")
    wording = el_text(name_el)
    count_text = cells[col["count"]]
    m = _LEADING_INT.match(count_text)
    if not m or int(m.group(1)) <= 0:
        raise ParseError(PROVIDER, meta.url, f"row {slug!r}: GPU count {count_text!r}")
    count = int(m.group(1))
    vram = _num(cells[col["vram"]]) if col["vram"] is not None else None
    base = {
        "source": "page", "layout": "instances", "gpu_wording": wording,
        "data_product": slug, "price_scope": "instance",
    }
    if count_text.strip() != str(count):
        base["gpu_count_wording"] = count_text  # "4^1": footnote mark on the count
    if col["storage"] is not None and cells[col["storage"]]:
        base["local_storage_tb"] = _num(cells[col["storage"]])
    offers: list[Offer] = []
    for kind in ("on_demand", "spot"):
        if col[kind] is None:
            continue
        price = _price(cells[col[kind]])
        if price is None:
            skip_unpriced(cells[col[kind]])
            continue
        extra = dict(base, price_wording=cells[col[kind]])
        if kind == "spot":
            extra["provider_term"] = "Spot"
        offers.append(make_offer(
            meta,
            sku=f"{slug}/{count}x",
            gpu_model=canonical_gpu(_SUFFIX.sub("", wording), vram),
            gpu_memory_gb=vram,
            gpu_count=count,
            price_per_hour=price,
            pricing_model=kind,
            region=region,
            vcpus=_num(cells[col["vcpus"]]) if col["vcpus"] is not None else None,
            ram_gb=_num(cells[col["ram"]]) if col["ram"] is not None else None,
            currency="USD",
            extra=extra,
        ))
    return offers


def _parse_component(rows: list[Any], meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    for row in rows:
        link = row.xpath(".//a[@data-product]")[0]
        slug, wording = link.get("data-product"), el_text(link)
        cols = row.xpath("./div[contains(concat(' ', normalize-space(@class), ' '),"
                         " ' w-col-2 ')]")
        if len(cols) < 4:
            skip_row("row cut short")
            continue  # a row cut short (the excerpt ends inside "Tesla V100 NVLINK")
        price_text = next((el_text(s) for s in cols[3].xpath(".//strong") if "$" in el_text(s)),
                          el_text(cols[3]))
        price = _price(price_text)
        if price is None:
            skip_unpriced(price_text)
            continue
        vram = _num(el_text(cols[0]))
        offers.append(make_offer(
            meta,
            sku=slug,
            gpu_model=canonical_gpu(wording, vram),
            gpu_memory_gb=vram,
            gpu_count=1,  # the 2023 table priced one GPU ("GPU Component Cost Per Hour")
            price_per_hour=price,
            pricing_model="on_demand",
            currency="USD",
            extra={
                "source": "page", "layout": "component", "gpu_wording": wording,
                "data_product": slug, "price_scope": "gpu_component_only",
                "price_wording": price_text,
                "max_vcpus_per_gpu": _num(el_text(cols[1])),
                "max_ram_gb_per_gpu": _num(el_text(cols[2])),
            },
        ))
    return offers


def _parse_derived_json(doc: Any, meta: CaptureMeta) -> list[Offer]:
    if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
        raise ParseError(PROVIDER, meta.url, "JSON is not a list of price records")
    records = [r for r in doc if "price_per_hour_usd" in r and "product" in r]
    if not records:
        raise ParseError(PROVIDER, meta.url,
                         "unknown layout: JSON without product / price_per_hour_usd records")
    offers: list[Offer] = []
    for r in records:
        if r.get("provider") not in (None, PROVIDER):
            raise ParseError(PROVIDER, meta.url, f"record of provider {r.get('provider')!r}")
        price = parse_price(r.get("price_per_hour_usd"))
        count = r.get("gpu_count")
        if price is None or not isinstance(count, int | float) or count <= 0:
            skip_unpriced(r.get("price_per_hour_usd") if price is None else count,
                          "price" if price is None else "GPU count")
            continue  # no price, or no GPU count to divide it by (GB200): not guessed
        vram = r.get("vram_gb")
        offers.append(make_offer(
            meta,
            sku=f"{r['product']}/{count:g}x",
            gpu_model=canonical_gpu(str(r["product"]), vram),
            gpu_memory_gb=vram,
            gpu_count=count,
            price_per_hour=price,
            pricing_model="on_demand",
            vcpus=r.get("vcpus"),
            ram_gb=r.get("system_ram_gb"),
            currency="USD",
            extra={
                "source": "derived", "layout": "becloudready_json", "derived": True,
                "gpu_wording": r["product"], "price_scope": "instance",
                "price_wording": r.get("raw_price"),
                "local_storage_tb": r.get("local_storage_tb"),
                "record": json.dumps(r, sort_keys=True),
            },
        ))
    return offers
