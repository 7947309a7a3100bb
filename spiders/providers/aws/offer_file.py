"""AWS Price List bulk offer files (AmazonEC2, one region): JSON and CSV, parsed as a stream.

A region's file is hundreds of MB. Only GPU instance products are kept, and only their small
attribute subset; the terms are streamed and matched against them. Products come before terms in
the file, which is what makes one pass enough.

One pass over the bytes: the file is cut at the byte positions of its `"terms"`, `"OnDemand"`
and `"Reserved"` keys (found with `bytes.find`, which is cheap). The products piece is read by
ijson's `kvitems` (C backend `yajl2_c` when available, through its fast file interface): every
product is validated, GPU ones are kept. The terms pieces, most of a file's bytes, are walked by
a structural scan that finds each SKU entry (`"<SKU>" : {` after `{` or `,`) and decodes only the
entries of kept GPU SKUs with `json.loads`; building every other SKU's terms as objects was half
the time. The scan is checked: a decoded entry must hold "<sku>.<term code>" keys, and the last
entry of each section is always decoded and must be followed by the section's closing brace, so
a file cut anywhere is refused.

Default offer (others skipped, counted in `stats`): Linux, tenancy Shared, preInstalledSw NA,
capacitystatus Used, unit Hrs. Capacity Block products (marketoption CapacityBlock, operation
RunInstances:CB, priced $0.00) are not offers. An OnDemand term with term attributes (the
us-east-2 "Upfront Fee" of a 3-year convertible reservation filed under OnDemand) is not an
on-demand price.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import IO, Any

import ijson

from spiders.parsers import ParseError
from spiders.providers.aws.tables import (
    LOCATION_TO_REGION,
    canonical_memory_gb,
    family_of,
    is_gpu_type,
    lookup,
)
from warehouse.contract import CaptureMeta, Offer, make_offer

CHUNK = 1 << 20
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
_KEY_TAIL = re.compile(rb"\s{0,24}:\s{0,24}\{")
_TERMS_KEY = b'"terms"'
_TERM_KEYS = (b'"OnDemand"', b'"Reserved"')
_OVERLAP = 64


def _num(text: Any) -> float | None:
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
    gpus = _num(attrs.get("gpu"))
    return bool(gpus and gpus > 0)


class _Collector:
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
        gpu_attr = _num(attrs.get("gpu"))
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
            vcpus=_num(attrs.get("vcpu")),
            ram_gb=_num(attrs.get("memory")),
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
        """effective_from is for announced future prices (DESIGN.md). AWS stamps every term with
        the date the price took effect (usually the 1st of a past month, re-stamped as files are
        republished): that stays in extra.effective_date, or the offer identity would change
        with every publication."""
        day = _date(text)
        return day if day is not None and day > self.meta.snapshot_date else None

    @staticmethod
    def _price(dim: dict[str, Any]) -> tuple[float, str] | None:
        ppu = dim.get("pricePerUnit") or {}
        for currency, text in ppu.items():
            value = _num(text)
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


def _chunks(fileobj: IO[bytes] | bytes) -> Iterator[bytes]:
    if isinstance(fileobj, bytes | bytearray | memoryview):
        view = memoryview(fileobj)
        for i in range(0, len(view), CHUNK):
            yield bytes(view[i:i + CHUNK])
        return
    while True:
        chunk = fileobj.read(CHUNK)
        if not chunk:
            return
        yield chunk


def _find_marker(buf: bytes, keys: tuple[bytes, ...]) -> tuple[int, bytes | None]:
    """First position of a key marker (`"key" : {`) in buf: (pos, key); (pos, None) when a
    candidate sits too near the end to decide; (-1, None) when there is none."""
    start = 0
    while True:
        hits = [(p, k) for k in keys if (p := buf.find(k, start)) >= 0]
        if not hits:
            return -1, None
        pos, key = min(hits)
        end = pos + len(key)
        if _KEY_TAIL.match(buf, end):
            return pos, key
        if len(buf) - end < _OVERLAP:
            return pos, None
        start = pos + 1


class _Stream:
    """The raw bytes of an offer file, handed out in pieces that stop before a key marker."""

    def __init__(self, fileobj: IO[bytes] | bytes) -> None:
        self._chunks = _chunks(fileobj)
        self.buf = b""
        self.exhausted = False
        self.marker: bytes | None = None  # the marker the last piece stopped at

    def _pull(self) -> bool:
        chunk = next(self._chunks, None)
        if chunk is None:
            self.exhausted = True
            return False
        self.buf = self.buf + chunk if self.buf else chunk
        return True

    def head(self, size: int = 65536) -> bytes:
        while len(self.buf) < size and not self.exhausted and self._pull():
            pass
        return self.buf[:size]

    def read_until(self, keys: tuple[bytes, ...]) -> bytes:
        """Next bytes before the first marker of `keys`; b"" once at a marker (self.marker is
        set, the marker left in the buffer) or at the end of the file."""
        while True:
            if not self.buf and not self._pull():
                return b""
            pos, key = _find_marker(self.buf, keys)
            if pos == 0 and key is not None:
                self.marker = key
                return b""
            if pos > 0:
                out, self.buf = self.buf[:pos], self.buf[pos:]
                return out
            if pos == 0 or len(self.buf) <= _OVERLAP:  # undecided or too short: read more
                if not self._pull():
                    out, self.buf = self.buf, b""
                    return out
                continue
            cut = len(self.buf) - _OVERLAP
            out, self.buf = self.buf[:cut], self.buf[cut:]
            return out

    def consume_marker(self) -> bytes:
        key = self.marker
        assert key is not None
        self.buf = self.buf[len(key):]
        self.marker = None
        return key


class _Piece:
    """A file-like view of one piece of the stream, for ijson's fast file interface."""

    def __init__(self, stream: _Stream, keys: tuple[bytes, ...], opening: bytes = b"") -> None:
        self.stream = stream
        self.keys = keys
        self.opening = opening

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson probes the type of what read() returns with read(0)
            return b""
        if self.opening:
            out, self.opening = self.opening, b""
            return out
        return self.stream.read_until(self.keys)


_WS = frozenset(b" \t\r\n")
_SKU_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_DECODER = json.JSONDecoder()
# A SKU entry's key and the brace that opens its value (the same test as _entry_key, in C).
_KEY_OPEN = re.compile(rb'"([A-Z0-9]{1,64})"[ \t\r\n]*:[ \t\r\n]*\{')


def _entry_key(buf: bytes, i: int) -> int:
    """Index of the opening quote of the key when the `{` at buf[i] opens a SKU entry of a
    terms section (`"<upper-case letters and digits>" : {` after `{` or `,`), else -1. Inside a
    SKU entry no other object-valued key qualifies: term and rate codes hold a dot
    ("H7NG….JRTCKXETXF"), the rest are lower-case words ("priceDimensions", "pricePerUnit",
    "termAttributes"); "USD"/"CNY" hold strings, not objects."""
    j = i - 1
    while j >= 0 and buf[j] in _WS:
        j -= 1
    if j < 0 or buf[j] != 0x3A:  # ':'
        return -1
    j -= 1
    while j >= 0 and buf[j] in _WS:
        j -= 1
    if j < 1 or buf[j] != 0x22:  # closing quote of the key
        return -1
    q = j - 1
    while q >= 0 and j - q <= 64 and buf[q] in _SKU_CHARS:
        q -= 1
    if q < 0 or q == j - 1 or buf[q] != 0x22:
        return -1
    k = q - 1
    while k >= 0 and buf[k] in _WS:
        k -= 1
    return q if k >= 0 and buf[k] in b"{," else -1


def _scan_terms(stream: _Stream, meta: CaptureMeta, name: str, keep: dict[str, Any],
                handle) -> Iterator[Offer]:
    """The SKU entries of one terms section, read from the stream up to the next marker.

    Only entries of kept (default GPU) SKUs are decoded; the others are stepped over by a
    structural scan, which is what makes the terms (most of a file's bytes) cheap. Entries are
    found by checking every `{` (`_entry_key`); once the first entry shows the file is
    pretty-printed (AWS's files are), the next ones are found by its key line's indentation
    (`\\n<indent>"`), each candidate still checked by `_entry_key`, and each entry stepped over
    must hold exactly one closing line at that indentation (`\\n<indent>}`) as its last line, else
    that stretch is searched `{` by `{` (as the section's last stretch always is). The last entry
    of the section is always decoded and must be followed by the section's closing brace, so a
    file cut anywhere in its terms is refused."""
    buf = b""
    pos = 0  # where the search resumes in buf
    cur_open = -1  # the "{" of the current (not yet complete) entry in buf
    cur_key = b""
    anchor = closer = b""

    def generic(lo: int, hi: int) -> Iterator[tuple[int, int]]:
        """(open brace, key quote) of the entries starting in buf[lo:hi], `{` by `{`."""
        while True:
            i = buf.find(b"{", lo, hi)
            if i < 0:
                return
            lo = i + 1
            q = _entry_key(buf, i)
            if q >= 0:
                yield i, q

    def key_at(q: int) -> bytes:
        return buf[q + 1:buf.index(b'"', q + 1)]

    while True:
        data = stream.read_until(_TERM_KEYS)
        if not data:
            break
        buf += data
        while True:
            if anchor:
                j = buf.find(anchor, pos)
                if j < 0:
                    pos = max(pos, len(buf) - len(anchor))
                    break
                q = j + len(anchor) - 1
                m = _KEY_OPEN.match(buf, q)
                if m is None:
                    if len(buf) - q < 256:  # maybe cut short by the read: wait for more
                        pos = j
                        break
                    pos = j + 1
                    continue
                k = j - 1
                while k >= 0 and buf[k] in _WS:
                    k -= 1
                if k < 0 or buf[k] not in b"{,":
                    pos = j + 1
                    continue
                i = m.end() - 1
                pos = i + 1
                c = buf.rfind(closer, cur_open, q)
                if (c < 0 or buf.find(closer, cur_open, c) >= 0
                        or buf[c + len(closer):q].strip(b" \t\r\n,")):
                    # not laid out as assumed: look for entries in this stretch the slow way
                    for i2, q2 in generic(cur_open + 1, q):
                        yield from _finish_entry(buf[cur_open:q2], cur_key, keep, handle, meta,
                                                 name)
                        cur_open, cur_key = i2, key_at(q2)
                yield from _finish_entry(buf[cur_open:q], cur_key, keep, handle, meta, name)
                cur_open, cur_key = i, m.group(1)
                continue
            i = buf.find(b"{", pos)
            if i < 0:
                pos = len(buf)
                break
            pos = i + 1
            q = _entry_key(buf, i)
            if q < 0:
                continue
            if cur_open >= 0:
                yield from _finish_entry(buf[cur_open:q], cur_key, keep, handle, meta, name)
            cur_open, cur_key = i, key_at(q)
            line = buf.rfind(b"\n", 0, q)
            indent = buf[line + 1:q]
            if line >= 0 and not indent.strip(b" \t"):
                anchor, closer = b"\n" + indent + b'"', b"\n" + indent + b"}"
        # keep only the open entry (or, before the first entry, a tail for the look-back)
        drop = cur_open if cur_open >= 0 else max(len(buf) - _OVERLAP, 0)
        buf, pos = buf[drop:], pos - drop
        if cur_open >= 0:
            cur_open = 0
    if cur_open < 0:
        return  # an empty section
    # the last stretch is searched `{` by `{` whatever the layout (it is one entry, or a few)
    for i2, q2 in generic(cur_open + 1, len(buf)):
        yield from _finish_entry(buf[cur_open:q2], cur_key, keep, handle, meta, name)
        cur_open, cur_key = i2, key_at(q2)
    buf = buf[cur_open:]
    try:
        text = buf.decode("utf-8")
        value, end = _DECODER.raw_decode(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ParseError(meta.provider, meta.url,
                         f"offer file truncated or malformed in terms.{name} ({exc})") from exc
    rest = text[end:]
    closing = rest.count("}") - rest.count("{")
    final = stream.marker is None
    if not rest.lstrip().startswith("}") or (final and closing < 3):
        raise ParseError(meta.provider, meta.url,
                         f"offer file truncated in terms.{name} (section not closed)")
    key = cur_key.decode()
    if key in keep:
        _check_entry(key, value, meta, name)
        yield from handle(key, value)


def _check_entry(sku: str, value: Any, meta: CaptureMeta, name: str) -> None:
    """A decoded SKU entry holds terms keyed "<sku>.<term code>": anything else means the scan
    lost its place (a layout change), which must be loud."""
    if not isinstance(value, dict) or not all(k.startswith(sku + ".") for k in value):
        raise ParseError(meta.provider, meta.url,
                         f"offer file terms.{name}: entry {sku} is not a set of terms")


def _finish_entry(entry: bytes, key: bytes, keep: dict[str, Any], handle, meta: CaptureMeta,
                  name: str) -> Iterator[Offer]:
    sku = key.decode()
    if sku not in keep:
        return
    entry = entry.rstrip()
    if entry.endswith(b","):
        entry = entry[:-1]
    try:
        value = json.loads(entry)
    except ValueError as exc:
        raise ParseError(meta.provider, meta.url,
                         f"offer file malformed in terms.{name} at SKU {sku} ({exc})") from exc
    _check_entry(sku, value, meta, name)
    yield from handle(sku, value)


def iter_offer_file(fileobj: IO[bytes] | bytes, meta: CaptureMeta,
                    stats: Counter | None = None) -> Iterator[Offer]:
    """Offers of one JSON offer file, read as a stream from a binary file object (or bytes).

    Memory stays flat whatever the file size: only GPU products' attribute subsets are held.
    `stats` (a Counter) receives what was skipped and why. Raises ParseError for a truncated or
    malformed file, or one whose products do not come before its terms.
    """
    stats = stats if stats is not None else Counter()
    col = _Collector(meta, stats)
    stream = _Stream(fileobj)
    head = stream.head()
    m = _PUBDATE.search(head)
    col.publication_date = m.group(1).decode() if m else None
    m = _VERSION.search(head)
    col.version = m.group(1).decode() if m else None

    def products(piece: _Piece) -> None:
        prefix = "products"
        try:
            for key, value in ijson.kvitems(piece, prefix, buf_size=CHUNK):
                col.add_product(key, value)
        except ijson.IncompleteJSONError as exc:
            # A piece that stops at a marker ends in a premature EOF by design.
            if stream.marker is None or "premature EOF" not in str(exc):
                raise ParseError(meta.provider, meta.url,
                                 f"offer file truncated or malformed in {prefix} ({exc})"
                                 ) from exc
        except ijson.JSONError as exc:
            raise ParseError(meta.provider, meta.url,
                             f"offer file malformed in {prefix} ({exc})") from exc

    products(_Piece(stream, (_TERMS_KEY,)))
    if stream.marker is None:
        raise ParseError(meta.provider, meta.url, "offer file has no terms (truncated?)")
    stream.consume_marker()
    while stream.read_until(_TERM_KEYS):  # the bytes between "terms" and its first term type
        pass
    term_sections = 0
    handlers = {"OnDemand": col.on_demand, "Reserved": col.reserved}
    while stream.marker is not None:
        name = stream.consume_marker().strip(b'"').decode()
        term_sections += 1
        yield from _scan_terms(stream, meta, name, col.products, handlers[name])
    if term_sections == 0:
        raise ParseError(meta.provider, meta.url,
                         "offer file has no OnDemand/Reserved terms (truncated?)")
    if col.gpu_products_seen == 0:
        raise ParseError(meta.provider, meta.url, "no GPU instance product in the offer file")
    stats["gpu_products"] = col.gpu_products_seen
    stats["default_gpu_products"] = len(col.products)
    stats["term_sections"] = term_sections


# -- CSV variant ------------------------------------------------------------------------------

_CSV_ATTRS = {
    "Instance Type": "instanceType", "Region Code": "regionCode", "Location": "location",
    "vCPU": "vcpu", "Memory": "memory", "GPU": "gpu", "GPU Memory": "gpuMemory",
    "Operating System": "operatingSystem", "Tenancy": "tenancy",
    "Pre Installed S/W": "preInstalledSw", "CapacityStatus": "capacitystatus",
    "License Model": "licenseModel", "MarketOption": "marketoption", "operation": "operation",
    "usageType": "usagetype",
}


def iter_offer_csv(lines: Iterable[str], meta: CaptureMeta,
                   stats: Counter | None = None) -> Iterator[Offer]:
    """Offers of a CSV offer file: 5 preamble rows ("FormatVersion", "Disclaimer",
    "Publication Date", "Version", "OfferCode"), then a header row, then one row per price
    dimension. Reserved terms span two rows (Hrs and Quantity) which are joined by
    (SKU, OfferTermCode); only GPU rows are held."""
    stats = stats if stats is not None else Counter()
    col = _Collector(meta, stats)
    reader = csv.reader(lines)
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
    idx = {name: i for i, name in enumerate(header)}
    need = ("SKU", "OfferTermCode", "RateCode", "TermType", "Unit", "PricePerUnit", "Currency",
            "Instance Type", "EffectiveDate")
    missing = [n for n in need if n not in idx]
    if missing:
        raise ParseError(meta.provider, meta.url, f"CSV offer file lacks columns {missing}")
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
            if not is_gpu_type(itype) and not (_num(row[i_gpu]) if i_gpu is not None else 0):
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


def _nonempty(offers: list[Offer], stats: Counter, meta: CaptureMeta) -> list[Offer]:
    if not offers:
        skipped = {k: v for k, v in sorted(stats.items()) if k.startswith("skipped_")}
        raise ParseError(meta.provider, meta.url,
                         f"{stats.get('gpu_products', 0)} GPU instance product(s) but no "
                         f"default offer among them (skipped: {skipped})")
    return offers


def parse_offer_json(body: bytes, meta: CaptureMeta, stats: Counter | None = None) -> list[Offer]:
    stats = stats if stats is not None else Counter()
    return _nonempty(list(iter_offer_file(body, meta, stats)), stats, meta)


def parse_offer_csv(body: bytes, meta: CaptureMeta, stats: Counter | None = None) -> list[Offer]:
    stats = stats if stats is not None else Counter()
    text = io.TextIOWrapper(io.BytesIO(body), encoding="utf-8-sig", newline="")
    return _nonempty(list(iter_offer_csv(text, meta, stats)), stats, meta)
