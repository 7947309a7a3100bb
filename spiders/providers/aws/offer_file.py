"""AWS Price List bulk offer files (AmazonEC2, one region), parsed as a stream.

A region's file is hundreds of MB. Only GPU instance products are kept, and only their small
attribute subset; the terms are streamed and matched against them. Products come before terms in
the file, which is what makes one pass enough.

One pass over the bytes, cut at the `"terms"`, `"OnDemand"` and `"Reserved"` keys
(offer_stream.py). Products and terms alike are scanned structurally (offer_stream.py): only
the product entries whose raw bytes may be a GPU instance (`may_be_gpu`: an `instanceType` of
instances.csv, or a `"gpu"` attribute other than "0") are decoded, and of the terms only the
entries of kept GPU SKUs. Most of a region's products are CPU-only instances, never decoded.
The CSV variant of the file is read by offer_csv.py into the same `Collector`.

Default offer (others skipped, counted in `stats`): Linux, tenancy Shared, preInstalledSw NA,
capacitystatus Used, unit Hrs. Capacity Block products (marketoption CapacityBlock, operation
RunInstances:CB, priced $0.00) are not offers. An OnDemand term with term attributes (the
us-east-2 "Upfront Fee" of a 3-year convertible reservation filed under OnDemand) is not an
on-demand price.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import IO, Any

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.aws.offer_stream import (
    TERM_KEYS,
    TERMS_KEY,
    Section,
    Stream,
    scan_entries,
    terms_section,
)
from gpuprices.spiders.providers.aws.tables import (
    LOCATION_TO_REGION,
    canonical_memory_gb,
    family_of,
    is_gpu_type,
    lookup,
)
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer

# AWS bills Linux instances per second with a 60-second minimum (aws.amazon.com/ec2/pricing/,
# "Per Second Billing").
BILLING_INCREMENT_S = 1
MIN_BILLING_S = 60
# A reservation's upfront fee spread over the term's hours: AWS counts a year as 365 days
# (8760 h) in its effective-rate figures (docs.aws.amazon.com/AWSEC2/latest/UserGuide/
# reserved-instances-types.html).
TERM_MONTHS = {"1yr": 12, "3yr": 36}
TERM_HOURS = {"1yr": 8760, "3yr": 3 * 8760}

# Attributes kept per GPU product (the rest is dropped at once to keep memory flat).
_KEEP = ("instanceType", "regionCode", "location", "vcpu", "memory", "gpu", "gpuMemory",
         "operatingSystem", "tenancy", "preInstalledSw", "capacitystatus", "licenseModel",
         "marketoption", "operation", "usagetype")

_PUBDATE = re.compile(rb'"publicationDate"\s*:\s*"([^"]+)"')
_VERSION = re.compile(rb'"version"\s*:\s*"([^"]+)"')


def number(text: Any) -> float | None:
    try:
        value = float(str(text).split()[0].replace(",", ""))
    except (ValueError, IndexError):
        return None
    return value


def _date(text: str | None) -> dt.date | None:
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def skip_reason(attrs: dict[str, Any]) -> str | None:
    """Why a GPU product is not a default offer, or None when it is one."""
    if attrs.get("marketoption") == "CapacityBlock" or str(attrs.get("operation", "")).endswith(
        ":CB"
    ):
        return "capacity_block"
    if attrs.get("operatingSystem") != "Linux":
        return "os"
    if attrs.get("tenancy") != "Shared":
        return "tenancy"
    if attrs.get("preInstalledSw", "NA") != "NA":
        return "preinstalled_sw"
    if attrs.get("capacitystatus", "Used") != "Used":
        return "capacitystatus"
    return None


def _gpu_product(attrs: dict[str, Any]) -> bool:
    itype = attrs.get("instanceType")
    if not itype:
        return False
    if is_gpu_type(itype):
        return True
    gpus = number(attrs.get("gpu"))
    return bool(gpus and gpus > 0)


_INSTANCE_TYPE = re.compile(rb'"instanceType"[ \t\r\n]*:[ \t\r\n]*"([^"\\]*)"')
_GPU_ZERO = re.compile(rb'"gpu"[ \t\r\n]*:[ \t\r\n]*"0"')


@cache
def _gpu_type(itype: bytes) -> bool:
    return is_gpu_type(itype.decode("utf-8", "replace"))


def may_be_gpu(buf: bytes, lo: int, hi: int, key: bytes) -> bool:
    """Whether the raw product entry buf[lo:hi] may be a GPU product (`_gpu_product` decides on
    the decoded entry): never False for one that is. Its `instanceType` is a GPU type, or it has
    a `"gpu"` attribute other than "0", or either is written in a way this quick look does not
    read (an escape, a non-string value)."""
    g = buf.find(b'"gpu"', lo, hi)
    if g >= 0 and not _GPU_ZERO.match(buf, g):
        return True
    i = buf.find(b'"instanceType"', lo, hi)
    if i < 0:
        return False  # no instance type: not an instance product
    m = _INSTANCE_TYPE.match(buf, i, hi)
    if m is None:
        return True
    return _gpu_type(m.group(1))


def _is_product(sku: str, value: Any) -> bool:
    return isinstance(value, dict) and value.get("sku", sku) == sku and isinstance(
        value.get("attributes", {}), dict)


class Collector:
    """Holds the GPU products seen so far and turns their terms into offers."""

    def __init__(self, meta: CaptureMeta, stats: Counter) -> None:
        self.meta = meta
        self.stats = stats
        self.products: dict[str, dict[str, Any]] = {}
        self.gpu_products_seen = 0
        self.publication_date: str | None = None
        self.version: str | None = None

    # -- products ---------------------------------------------------------------------------
    def add_product(self, sku: str, product: dict[str, Any]) -> None:
        attrs = product.get("attributes") or {}
        if not _gpu_product(attrs):
            return
        self.gpu_products_seen += 1
        reason = skip_reason(attrs)
        if reason:
            self.stats[f"skipped_{reason}"] += 1
            return
        self.products[sku] = {k: attrs[k] for k in _KEEP if k in attrs}

    # -- offers ----------------------------------------------------------------------------
    def _common(self, sku: str, attrs: dict[str, Any]) -> dict[str, Any]:
        itype = attrs["instanceType"]
        known = lookup(itype)
        gpu_attr = number(attrs.get("gpu"))
        extra: dict[str, Any] = {
            # "api" as for the other providers' machine-readable sources; which one it is:
            "source": "api",
            "document": "price_list_offer_file",
            "instance_type": itype,
            "aws_sku": sku,
            "location": attrs.get("location"),
        }
        if self.publication_date:
            extra["publication_date"] = self.publication_date
        if self.version:
            extra["offer_version"] = self.version
        if known is not None:
            model, count = known.gpu_model, known.gpu_count
            extra["gpu_wording"] = known.gpu_wording
            if known.gpu_model is None:
                extra["quarantine_reason"] = f"{known.gpu_wording} is not in gpus.csv"
            if gpu_attr is not None and gpu_attr != count:
                extra["aws_gpu_attribute"] = attrs.get("gpu")
        else:
            # A GPU instance family the table does not know: never guessed, quarantined.
            model, count = None, gpu_attr or 0.0
            extra["gpu_wording"] = f"{attrs.get('gpu')} GPU ({itype})"
            extra["unknown_family"] = family_of(itype)
        if attrs.get("gpuMemory") not in (None, "NA"):
            extra["aws_gpu_memory"] = attrs["gpuMemory"]
        region = attrs.get("regionCode") or LOCATION_TO_REGION.get(attrs.get("location", ""))
        return dict(
            gpu_model=model,
            gpu_count=count,
            gpu_memory_gb=canonical_memory_gb(model),
            region=region,
            vcpus=number(attrs.get("vcpu")),
            ram_gb=number(attrs.get("memory")),
            extra=extra,
        )

    def _make(self, aws_sku: str, attrs: dict[str, Any], **kw: Any) -> Offer | None:
        common = self._common(aws_sku, attrs)
        extra = {**common.pop("extra"), **kw.pop("extra", {})}
        if not common["gpu_count"]:
            self.stats["skipped_no_gpu_count"] += 1
            return None
        return make_offer(self.meta, sku=kw.pop("sku", attrs["instanceType"]), extra=extra,
                          **common, **kw)

    def _future(self, text: str | None) -> dt.date | None:
        """effective_from is for announced future prices (docs/design.md). AWS stamps every
        term with the date the price took effect (usually the 1st of a past month, re-stamped as
        files are republished): that stays in extra.effective_date, or the offer identity would
        change with every publication."""
        day = _date(text)
        return day if day is not None and day > self.meta.snapshot_date else None

    @staticmethod
    def _price(dim: dict[str, Any]) -> tuple[float, str] | None:
        ppu = dim.get("pricePerUnit") or {}
        for currency, text in ppu.items():
            value = number(text)
            if value is not None:
                return value, currency
        return None

    def on_demand(self, sku: str, terms: dict[str, Any]) -> Iterator[Offer]:
        attrs = self.products.get(sku)
        if attrs is None:
            return
        for term in terms.values():
            if term.get("termAttributes"):
                # e.g. the us-east-2 "Upfront Fee" (3yr convertible All Upfront) under OnDemand.
                self.stats["skipped_ondemand_term_attributes"] += 1
                continue
            for dim in (term.get("priceDimensions") or {}).values():
                if dim.get("unit") != "Hrs":
                    self.stats["skipped_unit"] += 1
                    continue
                price = self._price(dim)
                if price is None or price[0] <= 0:
                    self.stats["skipped_zero_price"] += 1
                    continue
                offer = self._make(
                    sku, attrs, pricing_model="on_demand", price_per_hour=price[0],
                    currency=price[1], effective_from=self._future(term.get("effectiveDate")),
                    billing_increment_s=BILLING_INCREMENT_S, min_billing_s=MIN_BILLING_S,
                    extra={"rate_code": dim.get("rateCode"),
                           "effective_date": term.get("effectiveDate")},
                )
                if offer is not None:
                    yield offer

    def reserved(self, sku: str, terms: dict[str, Any]) -> Iterator[Offer]:
        attrs = self.products.get(sku)
        if attrs is None:
            return
        for term in terms.values():
            ta = term.get("termAttributes") or {}
            length = ta.get("LeaseContractLength")
            if length not in TERM_HOURS:
                self.stats["skipped_reserved_term"] += 1
                continue
            hourly = upfront = 0.0
            currency = None
            for dim in (term.get("priceDimensions") or {}).values():
                price = self._price(dim)
                if price is None:
                    continue
                currency = price[1]
                if dim.get("unit") == "Hrs":
                    hourly += price[0]
                elif dim.get("unit") == "Quantity":
                    upfront += price[0]
            effective = upfront / TERM_HOURS[length] + hourly
            if currency is None or effective <= 0:
                self.stats["skipped_zero_price"] += 1
                continue
            option = ta.get("PurchaseOption", "")
            klass = ta.get("OfferingClass", "")
            offer = self._make(
                sku, attrs, pricing_model="reserved", price_per_hour=round(effective, 6),
                currency=currency, commitment_months=TERM_MONTHS[length],
                effective_from=self._future(term.get("effectiveDate")),
                sku=f"{attrs['instanceType']} {klass} {option}".strip(),
                extra={"purchase_option": option, "offering_class": klass,
                       "upfront_fee": upfront, "hourly_fee": hourly,
                       "offer_term_code": term.get("offerTermCode"),
                       "effective_date": term.get("effectiveDate")},
            )
            if offer is not None:
                yield offer


def iter_offer_file(fileobj: IO[bytes] | bytes, meta: CaptureMeta,
                    stats: Counter | None = None) -> Iterator[Offer]:
    """Offers of one JSON offer file, read as a stream from a binary file object (or bytes).

    Memory stays flat whatever the file size: only GPU products' attribute subsets are held.
    `stats` (a Counter) receives what was skipped and why. Raises ParseError for a truncated or
    malformed file, or one whose products do not come before its terms.
    """
    stats = stats if stats is not None else Counter()
    col = Collector(meta, stats)
    stream = Stream(fileobj)
    head = stream.head()
    m = _PUBDATE.search(head)
    col.publication_date = m.group(1).decode() if m else None
    m = _VERSION.search(head)
    col.version = m.group(1).decode() if m else None

    def add_product(sku: str, product: Any) -> tuple[()]:
        col.add_product(sku, product)
        return ()

    products = Section("products", (TERMS_KEY,), may_be_gpu, _is_product, add_product,
                       "a product")
    for _ in scan_entries(stream, meta, products):
        pass
    if stream.marker is None:
        raise ParseError(meta.provider, meta.url, "offer file has no terms (truncated?)")
    stream.consume_marker()
    while stream.read_until(TERM_KEYS):  # the bytes between "terms" and its first term type
        pass
    term_sections = 0
    handlers = {"OnDemand": col.on_demand, "Reserved": col.reserved}
    while stream.marker is not None:
        name = stream.consume_marker().strip(b'"').decode()
        term_sections += 1
        yield from scan_entries(stream, meta, terms_section(name, col.products, handlers[name]))
    if term_sections == 0:
        raise ParseError(meta.provider, meta.url,
                         "offer file has no OnDemand/Reserved terms (truncated?)")
    if col.gpu_products_seen == 0:
        raise ParseError(meta.provider, meta.url, "no GPU instance product in the offer file")
    stats["gpu_products"] = col.gpu_products_seen
    stats["default_gpu_products"] = len(col.products)
    stats["term_sections"] = term_sections


def nonempty(offers: list[Offer], stats: Counter, meta: CaptureMeta) -> list[Offer]:
    if not offers:
        skipped = {k: v for k, v in sorted(stats.items()) if k.startswith("skipped_")}
        raise ParseError(meta.provider, meta.url,
                         f"{stats.get('gpu_products', 0)} GPU instance product(s) but no "
                         f"default offer among them (skipped: {skipped})")
    return offers


def parse_offer_json(body: bytes, meta: CaptureMeta, stats: Counter | None = None) -> list[Offer]:
    stats = stats if stats is not None else Counter()
    return nonempty(list(iter_offer_file(body, meta, stats)), stats, meta)
