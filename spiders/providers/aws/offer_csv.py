"""AWS Price List bulk offer files in their CSV form (one region), read row by row into the
same `Collector` as the JSON form (offer_file.py), so both give the same offers."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.aws.offer_file import Collector, nonempty, number
from gpuprices.spiders.providers.aws.tables import is_gpu_type
from gpuprices.warehouse.contract import CaptureMeta, Offer

_CSV_ATTRS = {
    "Instance Type": "instanceType", "Region Code": "regionCode", "Location": "location",
    "vCPU": "vcpu", "Memory": "memory", "GPU": "gpu", "GPU Memory": "gpuMemory",
    "Operating System": "operatingSystem", "Tenancy": "tenancy",
    "Pre Installed S/W": "preInstalledSw", "CapacityStatus": "capacitystatus",
    "License Model": "licenseModel", "MarketOption": "marketoption", "operation": "operation",
    "usageType": "usagetype",
}


def _read_head(reader: Iterator[list[str]], col: Collector, meta: CaptureMeta) -> list[str]:
    """Reads the preamble (publication date and version into `col`) and returns the header row,
    refusing a file without them or without the columns the offers need."""
    preamble = {}
    for _ in range(5):
        row = next(reader, None)
        if not row or len(row) < 2:
            raise ParseError(meta.provider, meta.url, "CSV offer file without its preamble")
        preamble[row[0]] = row[1]
    col.publication_date = preamble.get("Publication Date")
    col.version = preamble.get("Version")
    header = next(reader, None)
    if not header or "SKU" not in header or "TermType" not in header:
        raise ParseError(meta.provider, meta.url, "CSV offer file without its header row")
    need = ("SKU", "OfferTermCode", "RateCode", "TermType", "Unit", "PricePerUnit", "Currency",
            "Instance Type", "EffectiveDate")
    missing = [n for n in need if n not in header]
    if missing:
        raise ParseError(meta.provider, meta.url, f"CSV offer file lacks columns {missing}")
    return header


def iter_offer_csv(lines: Iterable[str], meta: CaptureMeta,
                   stats: Counter | None = None) -> Iterator[Offer]:
    """Offers of a CSV offer file: 5 preamble rows ("FormatVersion", "Disclaimer",
    "Publication Date", "Version", "OfferCode"), then a header row, then one row per price
    dimension. Reserved terms span two rows (Hrs and Quantity) which are joined by
    (SKU, OfferTermCode); only GPU rows are held."""
    stats = stats if stats is not None else Counter()
    col = Collector(meta, stats)
    reader = csv.reader(lines)
    header = _read_head(reader, col, meta)
    idx = {name: i for i, name in enumerate(header)}
    i_type = idx["Instance Type"]
    i_gpu = idx.get("GPU")
    reserved: dict[tuple[str, str], dict[str, Any]] = {}
    seen_skus: set[str] = set()
    for row in reader:
        if len(row) != len(header):
            raise ParseError(meta.provider, meta.url, "CSV offer file row cut short (truncated?)")
        itype = row[i_type]
        if not itype:
            continue
        sku = row[idx["SKU"]]
        if sku not in seen_skus:
            # cheap test first: most rows of a region file are not GPU instances
            if not is_gpu_type(itype) and not (number(row[i_gpu]) if i_gpu is not None else 0):
                continue
            attrs = {a: row[idx[c]] for c, a in _CSV_ATTRS.items() if c in idx and row[idx[c]]}
            seen_skus.add(sku)
            col.add_product(sku, {"attributes": attrs})
        if sku not in col.products:
            continue
        term_code = row[idx["OfferTermCode"]]
        dim = {"unit": row[idx["Unit"]], "rateCode": row[idx["RateCode"]],
               "pricePerUnit": {row[idx["Currency"]]: row[idx["PricePerUnit"]]}}
        term_attrs = {k: row[idx[k]] for k in ("LeaseContractLength", "PurchaseOption",
                                               "OfferingClass") if k in idx and row[idx[k]]}
        term = {"offerTermCode": term_code, "effectiveDate": row[idx["EffectiveDate"]],
                "termAttributes": term_attrs, "priceDimensions": {dim["rateCode"]: dim}}
        if row[idx["TermType"]] == "OnDemand":
            yield from col.on_demand(sku, {term_code: term})
        elif row[idx["TermType"]] == "Reserved":
            held = reserved.setdefault((sku, term_code), term)
            if held is not term:
                held["priceDimensions"][dim["rateCode"]] = dim
    for (sku, term_code), term in reserved.items():
        yield from col.reserved(sku, {term_code: term})
    if col.gpu_products_seen == 0:
        raise ParseError(meta.provider, meta.url, "no GPU instance product in the offer file")
    stats["gpu_products"] = col.gpu_products_seen
    stats["default_gpu_products"] = len(col.products)


def parse_offer_csv(body: bytes, meta: CaptureMeta, stats: Counter | None = None) -> list[Offer]:
    stats = stats if stats is not None else Counter()
    text = io.TextIOWrapper(io.BytesIO(body), encoding="utf-8-sig", newline="")
    return nonempty(list(iter_offer_csv(text, meta, stats)), stats, meta)
