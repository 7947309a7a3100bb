"""Nebius: the public price page https://nebius.com/prices (Next.js, Gravity UI page constructor,
server-rendered), in the layouts it has had.

- 2024 ("cards and table"): three `.pc-price-card` cards ("As low as $2.00 / hour") above a
  `.pc-table` whose header row is GPU | vRAM, GB | RAM, GB | vCPUS | On demand | Reserve. Rows
  are whole instances, "8 × H100 SXM" (× is U+00D7); vRAM is the instance total (8 × H200 =
  1128) and both prices are per instance-hour.
- 2026 ("highlight tables"): `.pc-highlight-table-block__table` blocks titled by the preceding
  `span.pc-title-item__text`. "NVIDIA GPU Instances" has Item | vCPUs | RAM, GB and price
  columns per GPU-hour whose order changed (2026-07: "Preemptible, GPU-hour" before "On-demand,
  GPU-hour"; ~2026-09: "On-demand, GPU-hour" and "GPU-hour (Effective October 1, 2026)"), so
  columns are mapped by header text. "Preemptible NVIDIA GPU Instances" (~2026-09) has one
  "Spot price, GPU-hour*" column holding only "from $X" prices.

Choices (documented in the README):
- The 2024 cards produce no rows: each is the lowest Reserve price of the table below it
  (H100 $2.00 = "1 × H100 SXM" Reserve), so rows from them would be duplicates.
- "Reserve" is `reserved` with `commitment_months` None: the page offers terms "from 3 months
  to 3 years" and does not say which term a price is for.
- 2026 rows are per GPU (gpu_count 1); vCPUs and RAM are the per-GPU share the page lists.
  Where the page gives a range (L40S "8-40" vCPUs, "from $1.55") the price is that of the
  smallest shape, so `vcpus`/`ram_gb` hold the range minimum and the range goes to `extra`.
  L40S variants are told apart by that range, not by their "with Intel/AMD CPU" label: the
  2026-07 page swapped the labels.
- SKU = canonical GPU + Nebius-style preset shape ("H100-SXM-80GB_1gpu-16vcpu-200gb", after the
  API's preset names such as `8gpu-128vcpu-1600gb`), so the same shape links across layouts.
"""

from __future__ import annotations

import datetime as dt
import json
import re

from parsel import Selector

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import decode_html, parse_price, skip_unpriced
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "nebius"

# "8 × H100 SXM": × is U+00D7 on the 2024 page; accept a plain x too.
_COUNT_NAME = re.compile(r"^\s*(\d+)\s*[×xX]\s*(.+?)\s*$")
_RANGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[-–]\s*(\d+(?:\.\d+)?)\s*$")
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*$")
_EFFECTIVE = re.compile(r"effective\s+([A-Za-z]+\s+\d{1,2},\s*\d{4})", re.I)
_FROM = re.compile(r"^\s*from\b", re.I)
# "NVIDIA L40S with Intel CPU": the CPU part is not part of the GPU's name.
_WITH_CPU = re.compile(r"\s+with\s+.*$", re.I)

# The CPU platform behind each L40S shape range, from the Nebius platforms in SkyPilot's catalog
# (skypilot-org/skypilot-catalog catalogs/v7/nebius/vms.csv: gpu-l40s-a = Intel Ice Lake,
# presets 1gpu-8vcpu-32gb … 1gpu-40vcpu-160gb; gpu-l40s-d = AMD Genoa, 1gpu-16vcpu-96gb …
# 4gpu-192vcpu-1152gb) and the 2024 page card ("L40S PCIe with Intel Ice Lake", 8 vCPU, 32 GB).
_L40S_PLATFORM_BY_VCPUS = {
    "8-40": "gpu-l40s-a (Intel Ice Lake)",
    "16-192": "gpu-l40s-d (AMD Genoa)",
}


def _text(sel: Selector) -> str:
    return " ".join(t.strip() for t in sel.css("::text").getall() if t.strip())


def _clean_cell(text: str) -> str:
    # Footnote marks ("from $0.74**", "Spot price, GPU-hour*") are not part of the value.
    return re.sub(r"\s*\*+\s*$", "", text.replace("\xa0", " ")).strip()


def _number_or_range(text: str) -> tuple[float | None, str | None]:
    """(value, raw range) of a vCPU/RAM cell: '16' -> (16, None); '8-40' -> (8, '8-40')."""
    m = _NUMBER.match(text)
    if m:
        return float(m.group(1)), None
    m = _RANGE.match(text)
    if m:
        return float(m.group(1)), f"{m.group(1)}-{m.group(2)}"
    return None, None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _sku(gpu_model: str | None, wording: str, count: int, vcpus: float | None,
         ram: float | None) -> str:
    shape = f"{count}gpu"
    if vcpus is not None:
        shape += f"-{vcpus:g}vcpu"
    if ram is not None:
        shape += f"-{ram:g}gb"
    return f"{gpu_model or _slug(wording)}_{shape}"


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    head = body[:4096].decode("utf-8", "replace")
    if _ESCAPED_BLOCK in head:
        # The page's embedded page data, backslash-escaped JSON (~2026-08 capture), not markup.
        offers = _parse_highlight(_highlight_json_tables(body, meta), meta, "2026-json")
        if not offers:
            raise ParseError(PROVIDER, meta.url, "escaped page data: no priced GPU table row")
        return offers
    text = decode_html(body, meta)
    sel = Selector(text=text)
    highlight = _highlight_gpu_tables(sel)
    if highlight:
        offers = _parse_highlight(highlight, meta, "2026-tables")
    else:
        tables = _pc_gpu_tables(sel)
        if not tables:
            raise ParseError(
                PROVIDER, meta.url,
                "no GPU price table: neither a highlight table titled '… GPU Instances' (2026) "
                "nor a .pc-table with a 'GPU' column (2024)",
            )
        offers = _parse_2024(tables, meta)
    if not offers:
        raise ParseError(PROVIDER, meta.url, "GPU price table found but no row has a price")
    return offers


# --- 2026 layout ---------------------------------------------------------------------------

# (title, header cells, body rows of cells) of one "… GPU Instances" table, whatever the layout.
Table = tuple[str, list[str], list[list[str]]]
_ESCAPED_BLOCK = '\\"type\\":\\"highlight-table-block\\"'
_BLOCK = '{"type":"highlight-table-block"'


def _highlight_gpu_tables(sel: Selector) -> list[Table]:
    found = []
    for table in sel.css(".pc-highlight-table-block__table"):
        title = table.xpath(
            "normalize-space(preceding::span[contains(@class,'pc-title-item__text')][1])"
        ).get() or ""
        if "gpu instances" not in title.lower():
            continue
        head = table.css(".pc-highlight-table-block__head .pc-highlight-table-block__row")
        headers = ([_clean_cell(_text(c)) for c in head[0].css(".pc-highlight-table-block__cell")]
                   if head else [])
        body_rows = table.css(".pc-highlight-table-block__body .pc-highlight-table-block__row")
        rows = [[_clean_cell(_text(c)) for c in row.css(".pc-highlight-table-block__cell")]
                for row in body_rows]
        found.append((title, headers, rows))
    return found


def _highlight_json_tables(body: bytes, meta: CaptureMeta) -> list[Table]:
    """The same tables from the escaped page data: `{\\"type\\":\\"highlight-table-block\\",
    \\"title\\":…,\\"table\\":{\\"content\\":[[header],[row],…]}}`. Unescaped once, each
    block is read as JSON from its opening brace (the excerpt may end mid-block)."""
    text = body.decode("utf-8", "replace").replace('\\"', '"')
    decoder = json.JSONDecoder()
    found = []
    start = text.find(_BLOCK)
    while start >= 0:
        try:
            block, _ = decoder.raw_decode(text, start)
        except ValueError:
            block = None  # cut off by the excerpt's end, or not JSON after all
        content = ((block or {}).get("table") or {}).get("content")
        title = str((block or {}).get("title") or "")
        if "gpu instances" in title.lower() and isinstance(content, list) and content:
            cells = [[_clean_cell(str(c)) for c in row]
                     for row in content if isinstance(row, list)]
            found.append((title, cells[0], cells[1:]))
        start = text.find(_BLOCK, start + 1)
    if not found:
        raise ParseError(PROVIDER, meta.url, "escaped page data without a '… GPU Instances' table")
    return found


def _price_column(header: str, preemptible_table: bool) -> tuple[str, dt.date | None] | None:
    """(pricing_model, effective_from) of a price column, by its header text; None for a column
    that holds no price (Item, vCPUs, RAM)."""
    h = header.lower()
    m = _EFFECTIVE.search(header)
    if m:
        when = dt.datetime.strptime(re.sub(r"\s+", " ", m.group(1)), "%B %d, %Y").date()
        return ("spot" if preemptible_table else "on_demand"), when
    if "preemptible" in h or "spot" in h:
        return "spot", None
    if "on-demand" in h or "on demand" in h:
        return "on_demand", None
    if "price" in h or "gpu-hour" in h or "hour" in h:
        # 2025 layout: one "Price per GPU-hour" column (no capture to test it on).
        return ("spot" if preemptible_table else "on_demand"), None
    return None


def _parse_highlight(tables: list[Table], meta: CaptureMeta, layout: str) -> list[Offer]:
    offers: list[Offer] = []
    for title, headers, rows in tables:
        preemptible_table = "preemptible" in title.lower() or "spot" in title.lower()
        if not headers:
            raise ParseError(PROVIDER, meta.url, f"table {title!r} has no header row")
        lowered = [h.lower() for h in headers]
        i_item = next((i for i, h in enumerate(lowered) if h in ("item", "gpu", "gpu model")),
                      None)
        if i_item is None:
            raise ParseError(PROVIDER, meta.url, f"table {title!r}: no Item column in {headers}")
        i_vcpu = next((i for i, h in enumerate(lowered) if "vcpu" in h), None)
        i_ram = next((i for i, h in enumerate(lowered) if h.startswith("ram")), None)
        price_cols = {}
        for i, h in enumerate(headers):
            if i in (i_item, i_vcpu, i_ram):
                continue
            kind = _price_column(h, preemptible_table)
            if kind:
                price_cols[i] = kind
        if not price_cols:
            raise ParseError(PROVIDER, meta.url, f"table {title!r}: no price column in {headers}")
        for cells in rows:
            if len(cells) <= i_item or not cells[i_item]:
                continue
            offers.extend(_highlight_row(cells, headers, i_item, i_vcpu, i_ram, price_cols,
                                         title, meta, layout))
    return offers


def _highlight_row(cells: list[str], headers: list[str], i_item: int, i_vcpu: int | None,
                   i_ram: int | None, price_cols: dict[int, tuple[str, dt.date | None]],
                   title: str, meta: CaptureMeta, layout: str) -> list[Offer]:
    wording = cells[i_item]
    gpu_name = _WITH_CPU.sub("", wording)
    gpu_model = canonical_gpu(gpu_name)
    vcpus, vcpu_range = _number_or_range(cells[i_vcpu]) if i_vcpu is not None and i_vcpu < len(
        cells) else (None, None)
    ram, ram_range = _number_or_range(cells[i_ram]) if i_ram is not None and i_ram < len(
        cells) else (None, None)
    # The page's prices are per GPU-hour and its vCPU/RAM columns the per-GPU share.
    sku = _sku(gpu_model, gpu_name, 1, vcpus, ram)
    base_extra: dict = {"source": "page", "layout": layout, "gpu_wording": wording,
                        "table": title, "unit": "GPU-hour"}
    if vcpu_range:
        base_extra["vcpus_range"] = vcpu_range
        if vcpu_range in _L40S_PLATFORM_BY_VCPUS and gpu_model == "L40S-48GB":
            base_extra["platform"] = _L40S_PLATFORM_BY_VCPUS[vcpu_range]
    if ram_range:
        base_extra["ram_gb_range"] = ram_range
    out = []
    for i, (pricing_model, effective_from) in price_cols.items():
        if i >= len(cells):
            continue
        cell = cells[i]
        price = parse_price(cell) if "$" in cell else None
        if price is None:  # "Contact us", "––", "$—": not offered at a listed price
            skip_unpriced(cell)
            continue
        extra = dict(base_extra, column=headers[i])
        if _FROM.match(cell):
            extra["price_kind"] = "from"
        out.append(make_offer(
            meta, sku=sku, gpu_model=gpu_model, gpu_count=1, price_per_hour=price,
            pricing_model=pricing_model, vcpus=vcpus, ram_gb=ram,
            gpu_memory_gb=None, effective_from=effective_from, extra=extra,
        ))
    return out


# --- 2024 layout ---------------------------------------------------------------------------

def _pc_gpu_tables(sel: Selector) -> list[tuple[list[str], list[list[str]]]]:
    found = []
    for table in sel.css(".pc-table"):
        rows = [[_clean_cell(_text(c)) for c in r.css(".pc-table__cell")]
                for r in table.css(".pc-table__row")]
        if rows and rows[0] and rows[0][0].lower() == "gpu":
            found.append((rows[0], rows[1:]))
    return found


def _parse_2024(tables: list[tuple[list[str], list[list[str]]]],
                meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    for headers, rows in tables:
        lowered = [h.lower() for h in headers]
        i_vram = next((i for i, h in enumerate(lowered) if h.startswith("vram")), None)
        i_ram = next((i for i, h in enumerate(lowered) if h.startswith("ram")), None)
        i_vcpu = next((i for i, h in enumerate(lowered) if "vcpu" in h), None)
        price_cols: dict[int, str] = {}
        for i, h in enumerate(lowered):
            if "on demand" in h or "on-demand" in h:
                price_cols[i] = "on_demand"
            elif "reserve" in h:
                price_cols[i] = "reserved"
        if "on_demand" not in price_cols.values():
            raise ParseError(PROVIDER, meta.url, f"GPU table without an 'On demand' column: "
                                                 f"{headers}")
        for cells in rows:
            if not cells:
                continue
            m = _COUNT_NAME.match(cells[0])
            if not m:
                raise ParseError(PROVIDER, meta.url,
                                 f"GPU cell {cells[0]!r} is not '<count> × <GPU>'")
            count, name = int(m.group(1)), m.group(2)

            def num(i: int | None, cells: list[str] = cells) -> float | None:
                return _number_or_range(cells[i])[0] if i is not None and i < len(cells) else None

            vram_total, ram, vcpus = num(i_vram), num(i_ram), num(i_vcpu)
            # vRAM is the instance total (8 × H200 = 1128 GB): per GPU = total / count.
            mem = vram_total / count if vram_total else None
            gpu_model = canonical_gpu(name, memory_gb=mem)
            sku = _sku(gpu_model, name, count, vcpus, ram)
            for i, pricing_model in price_cols.items():
                if i >= len(cells):
                    continue
                cell = cells[i]
                price = parse_price(cell) if "$" in cell else None
                if price is None:
                    skip_unpriced(cell)
                    continue
                extra: dict = {"source": "page", "layout": "2024-table",
                               "gpu_wording": cells[0], "unit": "instance-hour",
                               "column": headers[i]}
                if vram_total:
                    extra["vram_total_gb"] = vram_total
                if pricing_model == "reserved":
                    extra["commitment"] = ("unknown: the page offers commitment periods from "
                                           "3 months to 3 years and does not say which term "
                                           "this price is for")
                offers.append(make_offer(
                    meta, sku=sku, gpu_model=gpu_model, gpu_count=count, price_per_hour=price,
                    pricing_model=pricing_model, vcpus=vcpus, ram_gb=ram, gpu_memory_gb=mem,
                    commitment_months=None, extra=extra,
                ))
    return offers
