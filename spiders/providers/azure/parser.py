"""Azure: Retail Prices API items (and two derived layouts of the same items) -> offers.

Layouts, chosen by content:

- Retail Prices API page `{"Items": [...], "NextPageLink": ...}`, or a bare list of items (the
  trimmed recording in the fixtures). Joined on `armSkuName` through `skus.csv` in this package.
- azure-pricing-radar diff JSON `{"scope", "at", "added", "removed", "changed"}`: the `added`
  items and the `after` side of `changed` are that moment's prices (a partial snapshot: only what
  changed). `removed` is ignored.
- azure-pricing-radar history CSV (our filtered export, header `snapshot_date,scope,...`).

The radar layouts carry no `armSkuName`, so they are the one exception to "join on armSkuName":
they are joined on the meter name (without its " Spot" / " Low Priority" suffix) through the
table's explicit `meter_names` column. Rows from them get extra["derived"] = True.

Rules (docs/providers.md, Azure):
- Linux is the default offer. Windows rows share the meter with Linux and differ only in
  `productName`, which ends "Windows" or the abbreviation "Srs Win": skipped.
- "Cloud Services" and "Dedicated Host" products and `DevTestConsumption` rows are not VM offers.
- Spot and the legacy Low Priority meters are `spot`, the word kept in extra["provider_term"].
- `Reservation` rows give the price of the WHOLE term although `unitOfMeasure` says "1 Hour"
  (e.g. DC48s_v3 westus 1 Year 37675.0): divided by the term's hours, commitment_months set.
- Zero prices are dropped (the API lists placeholders at 0).
- An N-series SKU missing from the table keeps gpu_model None (quarantined, never guessed) with
  gpu_count 1 and extra["gpu_count_unknown"] = True; other SKUs (D, E, M ...) are skipped.
- Rows whose unit is not "1 Hour" are skipped (none seen for VMs).
- The `savingsPlan` list of the preview API version is not read yet.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import load_json
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer

SKU_TABLE = Path(__file__).resolve().parent / "skus.csv"
# N-series sizes seen in the captures whose GPU count no Microsoft page gives, with the reason.
UNMAPPED_TABLE = Path(__file__).resolve().parent / "unmapped.csv"

# Hours in a reservation term. Azure quotes reservations as one price for the whole term
# (learn.microsoft.com "Azure Retail Prices REST API": reservationTerm + retailPrice), so an
# hourly rate is price / hours. 365-day years, as Azure's own hourly equivalents use 8760 h.
TERM_HOURS = {"1 Year": 8760, "3 Years": 26280, "5 Years": 43800}
TERM_MONTHS = {"1 Year": 12, "3 Years": 36, "5 Years": 60}

# N-series (NC, ND, NG, NV, NCC ...) are Azure's GPU families.
_GPU_ARM = re.compile(r"^Standard_N[CDGV]", re.IGNORECASE)
_GPU_METER = re.compile(r"^(Standard_)?N[CDGV]", re.IGNORECASE)
_WINDOWS = re.compile(r"(Windows|Srs Win)\s*$", re.IGNORECASE)
_SUFFIX = re.compile(r"\s+(Spot|Low Priority)\s*$", re.IGNORECASE)
_SKIPPED_PRODUCTS = ("cloud services", "dedicated host")


@dataclass(frozen=True)
class AzureSku:
    arm_sku_name: str
    gpu_wording: str
    gpu_model: str
    gpu_count: float
    gpu_memory_gb: float
    vcpus: float
    vm_gpu_memory_gb: float


@cache
def sku_table() -> tuple[dict[str, AzureSku], dict[str, AzureSku]]:
    """(by armSkuName, by meter name) from skus.csv; keys compared case-insensitively."""
    by_arm: dict[str, AzureSku] = {}
    by_meter: dict[str, AzureSku] = {}
    with SKU_TABLE.open(newline="") as fh:
        for r in csv.DictReader(fh):
            sku = AzureSku(
                arm_sku_name=r["arm_sku_name"],
                gpu_wording=r["gpu_wording"],
                gpu_model=r["gpu_model"],
                gpu_count=float(r["gpu_count"]),
                gpu_memory_gb=float(r["gpu_memory_gb"]),
                vcpus=float(r["vcpus"]),
                vm_gpu_memory_gb=float(r["vm_gpu_memory_gb"]),
            )
            by_arm[sku.arm_sku_name.lower()] = sku
            for name in filter(None, (m.strip() for m in r["meter_names"].split(";"))):
                by_meter[name.lower()] = sku
    return by_arm, by_meter


@cache
def unmapped_reasons() -> dict[str, str]:
    with UNMAPPED_TABLE.open(newline="") as fh:
        return {r["name_prefix"].lower(): r["reason"] for r in csv.DictReader(fh)}


def _term(meter: str, sku_name: str) -> str | None:
    """'Spot' or 'Low Priority' when the meter or skuName says so."""
    for text in (meter, sku_name):
        m = _SUFFIX.search(text or "")
        if m:
            return "Low Priority" if m.group(1).lower() == "low priority" else "Spot"
    return None


def _offer(
    meta: CaptureMeta,
    item: dict[str, Any],
    sku: AzureSku | None,
    sku_label: str,
    extra: dict[str, Any],
) -> Offer | None:
    """One item -> offer, or None when the rules above exclude it."""
    product = str(item.get("productName") or "")
    kind = str(item.get("type") or "Consumption")
    if kind == "DevTestConsumption" or kind not in ("Consumption", "Reservation"):
        return None
    if any(word in product.lower() for word in _SKIPPED_PRODUCTS):
        return None
    if _WINDOWS.search(product):
        return None
    if str(item.get("unitOfMeasure") or "1 Hour").strip() != "1 Hour":
        return None
    try:
        price = float(item.get("retailPrice") or 0)
    except (TypeError, ValueError):
        return None
    if price <= 0:
        return None
    meter = str(item.get("meterName") or "")
    term = _term(meter, str(item.get("skuName") or ""))
    extra = {**extra, "meter_name": meter, "product_name": product, "gpu_wording": product}
    commitment = None
    if kind == "Reservation":
        res_term = str(item.get("reservationTerm") or "")
        if res_term not in TERM_HOURS:
            return None
        extra["reservation_term"] = res_term
        extra["term_price"] = price
        price = price / TERM_HOURS[res_term]
        commitment = TERM_MONTHS[res_term]
        pricing_model = "reserved"
    elif term:
        pricing_model = "spot"
        extra["provider_term"] = term
    else:
        pricing_model = "on_demand"
    if item.get("effectiveStartDate"):
        extra["effective_start_date"] = item["effectiveStartDate"]
    if sku is None:
        extra["gpu_count_unknown"] = True
        reason = unmapped_reasons().get(sku_label.lower())
        if reason:
            extra["unmapped_reason"] = reason
    else:
        # A partial-GPU size (NVads A10 v5, NVv4, NGads V620, NCv6 ...) is a fractional
        # gpu_count: price_per_gpu_hour is then the whole-GPU equivalent, gpu_memory_gb the
        # whole GPU's memory, and this the GPU memory the VM actually gets.
        extra["vm_gpu_memory_gb"] = sku.vm_gpu_memory_gb
    return make_offer(
        meta,
        sku=sku_label,
        gpu_model=sku.gpu_model if sku else None,
        gpu_count=sku.gpu_count if sku else 1,
        gpu_memory_gb=sku.gpu_memory_gb if sku else None,
        vcpus=sku.vcpus if sku else None,
        price_per_hour=price,
        pricing_model=pricing_model,
        commitment_months=commitment,
        region=item.get("armRegionName") or None,
        currency=str(item.get("currencyCode") or "USD"),
        extra=extra,
    )


def _parse_items(items: list[Any], meta: CaptureMeta) -> list[Offer]:
    by_arm, _ = sku_table()
    offers = []
    for item in items:
        if not isinstance(item, dict) or "retailPrice" not in item:
            raise ParseError(meta.provider, meta.url, "item without retailPrice in Items")
        service = item.get("serviceName")
        if service is not None and service != "Virtual Machines":
            continue
        arm = str(item.get("armSkuName") or "")
        sku = by_arm.get(arm.lower())
        if sku is None and not _GPU_ARM.match(arm):
            continue
        offer = _offer(meta, item, sku, arm, {"source": "api"})
        if offer is not None:
            offers.append(offer)
    return offers


def _radar_lookup(meter: str, sku_name: str) -> tuple[AzureSku | None, str] | None:
    """Table entry for a radar row (no armSkuName there): by meter name without suffix, then by
    skuName without suffix. None when the row is not an N-series VM at all."""
    _, by_meter = sku_table()
    base_meter = _SUFFIX.sub("", meter).strip()
    base_sku = _SUFFIX.sub("", sku_name).strip()
    for name in (base_meter, base_sku):
        sku = by_meter.get(name.lower())
        if sku is not None:
            return sku, sku.arm_sku_name
    if _GPU_METER.match(base_meter) or _GPU_METER.match(base_sku):
        return None, base_sku or base_meter
    return None


def _parse_radar_items(
    rows: list[dict[str, Any]], meta: CaptureMeta, source: str
) -> list[Offer]:
    offers = []
    for row in rows:
        found = _radar_lookup(str(row.get("meterName") or ""), str(row.get("skuName") or ""))
        if found is None:
            continue
        sku, label = found
        extra = {"source": source, "derived": True, "sku_name": row.get("skuName")}
        offer = _offer(meta, row, sku, label, extra)
        if offer is not None:
            offers.append(offer)
    return offers


def _parse_radar_diff(data: dict[str, Any], meta: CaptureMeta) -> list[Offer]:
    rows: list[dict[str, Any]] = []
    for rec in list(data.get("added") or []) + list(data.get("changed") or []):
        after = rec.get("after", rec) if isinstance(rec, dict) else None
        if not isinstance(after, dict) or "retailPrice" not in after:
            raise ParseError(meta.provider, meta.url, "radar diff record without retailPrice")
        # key = "skuId|meterId|type|reservationTerm": type and term live only in the key.
        parts = str(rec.get("key") or "").split("|")
        row = dict(after)
        if len(parts) == 4:
            row.setdefault("type", parts[2] or "Consumption")
            row.setdefault("reservationTerm", parts[3])
        rows.append(row)
    offers = _parse_radar_items(rows, meta, "radar_diff")
    for o in offers:
        o.extra["radar_scope"] = data.get("scope")
        o.extra["radar_at"] = data.get("at")
    return offers


_RADAR_CSV_COLUMNS = {"scope", "armRegionName", "type", "skuName", "meterName", "productName",
                      "retailPrice", "unitOfMeasure"}


def _parse_radar_csv(text: str, meta: CaptureMeta) -> list[Offer]:
    reader = csv.DictReader(io.StringIO(text))
    missing = _RADAR_CSV_COLUMNS - set(reader.fieldnames or [])
    if missing:
        raise ParseError(meta.provider, meta.url, f"CSV without columns {sorted(missing)}")
    offers = _parse_radar_items(list(reader), meta, "history")
    for o in offers:
        o.extra["origin"] = "andy-diericks/azure-pricing-radar data/latest (filtered export)"
    return offers


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    head = body.lstrip()[:1]
    if not head:
        raise ParseError(meta.provider, meta.url, "empty response body")
    if head in (b"{", b"["):
        data = load_json(body, meta)
        if isinstance(data, list):
            offers = _parse_items(data, meta)
            what = "bare list of items"
        elif isinstance(data, dict) and isinstance(data.get("Items"), list):
            offers = _parse_items(data["Items"], meta)
            what = "Items page"
            if not data["Items"]:
                raise ParseError(meta.provider, meta.url, "Items list is empty")
        elif isinstance(data, dict) and {"added", "changed"} <= data.keys():
            offers = _parse_radar_diff(data, meta)
            what = "radar diff"
        else:
            raise ParseError(meta.provider, meta.url, "JSON is neither Items, a list nor a diff")
    else:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(meta.provider, meta.url, "body is not UTF-8") from exc
        offers = _parse_radar_csv(text, meta)
        what = "radar CSV"
    if not offers:
        raise ParseError(meta.provider, meta.url, f"no GPU VM prices in the {what}")
    return offers
