"""Google Cloud -> offers. Layouts, chosen by content:

- the public GPU pricing page (cloud.google.com/compute/gpus-pricing and the accelerator-optimized
  page): HTML tables with a "Machine type" header, one row per machine type, columns found by
  header text, never by position;
- a Cloud Billing Catalog API SKU page (JSON with "skus"): see billing.py;
- the Cyclenerd pricing.yml history export (CSV with machine_type, region, usd_hour ...).

Page columns -> pricing models (documented choice):
- "Price (USD)" / on-demand -> on_demand;
- "DWS Flex-start" -> on_demand with extra["gcp_model"] = "dws_flex_start": pay-as-you-go with
  no commitment and no preemption, only obtained through a queue for a limited run; never a
  firm on-demand price (warehouse/sql/staging/price_caveat.sql sets it apart);
- "DWS Calendar Mode" -> reserved with extra["gcp_model"] = "dws_calendar": capacity reserved for
  a fixed number of days, paid for the period (days, so commitment_months stays empty);
- "Spot" -> spot, extra["provider_term"] = "Spot";
- "Compute Resource CUDs - 1/3 Year" -> committed 12/36, extra["gcp_model"] = "resource_cud";
- "Compute Flexible CUD - 1/3 Year" -> committed 12/36, extra["gcp_model"] = "flexible_cud".
Cells "N/A", "-", empty, or anything that is not "$<number> / 1 hour" (the page once printed
"g2-standard-24-spot" in a spot cell) produce no row. Group rows ("A3 High") name the series.
The region picker is client-side: the served tables are us-central1, recorded as such unless the
page names another region in its text.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from parsel import Selector

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import load_json, looks_like_html, skip_unpriced
from gpuprices.spiders.providers.gcp.billing import HOURS_PER_MONTH, parse_billing
from gpuprices.spiders.providers.gcp.machines import machines
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer

DEFAULT_REGION = "us-central1"
_MACHINE = re.compile(r"^[a-z][a-z0-9]*-[a-z]+-\d+g?$")
_PRICE = re.compile(r"^\$\s*([0-9][0-9,]*(?:\s*\.\s*[0-9]+)?)\s*/\s*1\s*hour$", re.IGNORECASE)
_REGION = re.compile(r"\b((?:us|europe|asia|me|africa|northamerica|southamerica|australia)"
                     r"-[a-z]+\d{1,2})\b")

# header text (lower case) -> (column key, pricing_model, commitment_months, extra)
_COLUMNS: list[tuple[re.Pattern[str], str, str, int | None, dict[str, str]]] = [
    (re.compile(r"flexible cud\s*-\s*1 year"), "flex_cud_1y", "committed", 12,
     {"gcp_model": "flexible_cud"}),
    (re.compile(r"flexible cud\s*-\s*3 year"), "flex_cud_3y", "committed", 36,
     {"gcp_model": "flexible_cud"}),
    (re.compile(r"resource cuds?\s*-\s*1 year"), "cud_1y", "committed", 12,
     {"gcp_model": "resource_cud"}),
    (re.compile(r"resource cuds?\s*-\s*3 year"), "cud_3y", "committed", 36,
     {"gcp_model": "resource_cud"}),
    (re.compile(r"dws flex"), "dws_flex", "on_demand", None, {"gcp_model": "dws_flex_start"}),
    (re.compile(r"dws calendar"), "dws_calendar", "reserved", None,
     {"gcp_model": "dws_calendar"}),
    (re.compile(r"spot"), "spot", "spot", None, {"provider_term": "Spot"}),
    (re.compile(r"^(price|on-demand)"), "on_demand", "on_demand", None, {}),
]

# A calendar-mode reservation is booked in whole days, from 1 to 90 ("You must specify a
# reservation duration of 1 to 90 days": cloud.google.com/tpu/docs/calendar-mode-reservation;
# GPU VMs "that run for up to 90 days": cloud.google.com/compute/docs/instances/
# create-future-reservations-calendar-mode). So the page's hourly price is paid per day, at
# least one: a 3-hour job on it costs a day.
_BILLING = {"dws_calendar": {"billing_increment_s": 86_400, "min_billing_s": 86_400}}


def _text(node: Selector) -> str:
    return " ".join(t.strip() for t in node.css("::text").getall() if t.strip())


def cell_price(text: str) -> float | None:
    """'$88.490000119 / 1 hour' -> 88.490000119; '$2 .0000/ 1 hour' -> 2.0; else None."""
    m = _PRICE.match(" ".join(text.split()))
    if not m:
        return None
    value = float(re.sub(r"[\s,]", "", m.group(1)))
    return value if value > 0 else None


def _components(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if m := re.search(r"GPUs:\s*(\d+)(?:\s*/\s*(\d+))?", text):
        out["gpus"] = int(m.group(1)) / int(m.group(2) or 1)
    if m := re.search(r"vCPUs:\s*([\d,]+)", text):
        out["vcpus"] = float(m.group(1).replace(",", ""))
    if m := re.search(r"Memory:\s*([\d,]+)\s*(GiB|GB)", text):
        out["memory"] = float(m.group(1).replace(",", ""))
        out["memory_unit"] = m.group(2)
    return out


def _column_map(headers: list[str]) -> dict[int, tuple]:
    cols: dict[int, tuple] = {}
    for i, h in enumerate(headers):
        low = h.lower()
        for pat, key, model, months, extra in _COLUMNS:
            if pat.search(low):
                cols[i] = (key, model, months, extra, h)
                break
    return cols


def _machine_tables(sel: Selector, meta: CaptureMeta) -> list[tuple[list[str], list[Any]]]:
    """(headers, body rows) of each table whose first header is "Machine type"."""
    tables = []
    for table in sel.css("table"):
        rows = table.css("tr")
        if not rows:
            continue
        headers = [_text(c) for c in rows[0].xpath("./th|./td")]
        if headers and headers[0].lower().startswith("machine type"):
            tables.append((headers, rows[1:]))
    if not tables:
        raise ParseError(meta.provider, meta.url, "no table with a 'Machine type' header")
    return tables


def parse_page(text: str, meta: CaptureMeta) -> list[Offer]:
    sel = Selector(text=text)
    tables = _machine_tables(sel, meta)
    outside = " ".join(sel.xpath("//body//text()[not(ancestor::table)]").getall())
    found = _REGION.search(outside)
    region = found.group(1) if found else DEFAULT_REGION
    known = machines()
    offers: list[Offer] = []
    for headers, rows in tables:
        cols = _column_map(headers)
        if not cols:
            raise ParseError(meta.provider, meta.url,
                             f"machine-type table without price columns: {headers}")
        lower = [h.lower() for h in headers]
        gpu_col = lower.index("gpu") if "gpu" in lower else None
        comp_col = lower.index("components") if "components" in lower else None
        series = None
        for tr in rows:
            cells = [_text(c) for c in tr.xpath("./th|./td")]
            if not cells or not cells[0]:
                continue
            name = cells[0].strip()
            if not _MACHINE.match(name):
                series = name  # group row ("A3 High")
                continue
            if len(cells) != len(headers):
                raise ParseError(meta.provider, meta.url,
                                 f"row {name} has {len(cells)} cells for {len(headers)} headers")
            comp = _components(cells[comp_col]) if comp_col is not None else {}
            wording = cells[gpu_col] if gpu_col is not None else ""
            m = known.get(name)
            for i, (key, model, months, extra, header) in cols.items():
                price = cell_price(cells[i])
                if price is None:
                    skip_unpriced(cells[i])
                    continue
                offers.append(make_offer(
                    meta,
                    **_BILLING.get(key, {}),
                    sku=name,
                    gpu_model=m.gpu_model if m else None,
                    gpu_count=m.gpu_count if m else comp.get("gpus") or 1,
                    gpu_memory_gb=m.gpu_memory_gb if m else None,
                    vcpus=comp.get("vcpus", m.vcpus if m else None),
                    ram_gb=comp.get("memory", m.ram_gib if m else None),
                    interconnect=m.interconnect if m else None,
                    price_per_hour=price,
                    pricing_model=model,
                    commitment_months=months,
                    region=region,
                    extra={**extra, "source": "page", "gpu_wording": wording,
                           "column": header, "series": series,
                           "region_source": "page" if found else "default",
                           **({"gpu_count_unknown": True}
                              if m is None and "gpus" not in comp else {})},
                ))
    if not offers:
        raise ParseError(meta.provider, meta.url, "machine-type tables hold no prices")
    return offers


_HISTORY_COLUMNS = {"machine_type", "region", "usd_hour", "usd_hour_spot", "usd_month",
                    "usd_month_1y_cud", "usd_month_3y_cud"}


def _num(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return value if value and value > 0 else None


def parse_history(text: str, meta: CaptureMeta) -> list[Offer]:
    """Cyclenerd pricing.yml export: machine totals the maintainer summed from billing SKUs.
    CUD columns are per month (hour x 730). A CUD equal to the on-demand month is not a price
    (a2-ultragpu 2023-01 and 2024-05: the GPU had no commitment SKU there) and is skipped."""
    reader = csv.DictReader(io.StringIO(text))
    missing = _HISTORY_COLUMNS - set(reader.fieldnames or [])
    if missing:
        raise ParseError(meta.provider, meta.url, f"CSV without columns {sorted(missing)}")
    known = machines()
    offers = []
    for r in reader:
        name = r["machine_type"]
        m = known.get(name)
        month = _num(r["usd_month"])
        prices = [("on_demand", None, _num(r["usd_hour"]), {}),
                  ("spot", None, _num(r["usd_hour_spot"]), {"provider_term": "Spot"})]
        for months, col in ((12, "usd_month_1y_cud"), (36, "usd_month_3y_cud")):
            cud = _num(r[col])
            if cud is not None and cud != month:
                prices.append(("committed", months, cud / HOURS_PER_MONTH,
                               {"gcp_model": "resource_cud"}))
        for model, months, price, extra in prices:
            if price is None:
                continue
            offers.append(make_offer(
                meta,
                sku=name,
                gpu_model=m.gpu_model if m else None,
                gpu_count=m.gpu_count if m else float(r.get("gpu_count") or 1),
                gpu_memory_gb=m.gpu_memory_gb if m else None,
                vcpus=_num(r.get("vcpu")),
                ram_gb=_num(r.get("ram_gib")),
                interconnect=m.interconnect if m else None,
                price_per_hour=price,
                pricing_model=model,
                commitment_months=months,
                region=r["region"] or None,
                extra={**extra, "source": "history", "derived": True,
                       "gpu_wording": r.get("gpu_model"),
                       "local_ssd_gib": _num(r.get("local_ssd_gib"))},
            ))
    if not offers:
        raise ParseError(meta.provider, meta.url, "history CSV holds no prices")
    return offers


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    stripped = body.lstrip()
    if not stripped:
        raise ParseError(meta.provider, meta.url, "empty response body")
    if stripped[:1] == b"{":
        data = load_json(body, meta)
        if isinstance(data, dict) and "skus" in data:
            return parse_billing(data, meta)
        raise ParseError(meta.provider, meta.url, "JSON without a skus list")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(meta.provider, meta.url, "body is not UTF-8") from exc
    if looks_like_html(body) or "<table" in text[:200000].lower():
        return parse_page(text, meta)
    first = text.splitlines()[0] if text.strip() else ""
    if "machine_type" in first.split(","):
        return parse_history(text, meta)
    raise ParseError(meta.provider, meta.url, "neither a pricing page, a SKU page nor a CSV")
