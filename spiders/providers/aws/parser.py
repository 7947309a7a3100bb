"""AWS EC2 GPU prices. The layout is chosen by what the body holds:

- Price List bulk offer file, JSON (`"offerCode"`/`"products"`) or CSV (5 preamble rows):
  on-demand and reserved rows, parsed as a stream (offer_file.py; the CSV form offer_csv.py);
- the pricing page's feed (location -> "regions" -> "<family> <size> <location> Linux" ->
  {price, "Instance Type"}): on-demand rows, extra source "page";
- the spot price feed (spot.json, or the legacy spot.js payload with its `callback(` wrapper):
  spot rows; "N/A*" and 0 mean no price;
- a daily price series row (timestamp,instance,price_usd, imported by history.py beside this
  module): one on-demand row, extra derived=true, source "history".

The spot advisor file holds interruption bands, not prices: `wants()` is False for it and
`interruption_bands()` reads it for `attach_interruption_bands()`.
Index documents (region_index.json, the version index) hold no prices: `wants()` is False.

GPU model and count come from spiders/providers/aws/instances.csv, never from AWS's GPU wording.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, urlsplit

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import load_json, parse_price, skip_unpriced
from gpuprices.spiders.providers.aws.offer_csv import parse_offer_csv
from gpuprices.spiders.providers.aws.offer_file import (
    BILLING_INCREMENT_S,
    MIN_BILLING_S,
    iter_offer_file,
    parse_offer_json,
)
from gpuprices.spiders.providers.aws.tables import (
    LEGACY_SPOT_REGIONS,
    LOCATION_TO_REGION,
    canonical_memory_gb,
    family_of,
    is_gpu_type,
    lookup,
)
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer

__all__ = ["parse", "wants", "iter_offer_file", "interruption_bands",
           "attach_interruption_bands"]

HISTORY_HEADER = "timestamp,instance,price_usd"


def wants(meta: CaptureMeta) -> bool:
    """False for documents that hold no prices by design: the offer indexes and the spot
    advisor (its bands are read by `interruption_bands`)."""
    path = urlsplit(meta.url).path
    if path.endswith("/region_index.json"):
        return False
    if path.endswith("/offers/v1.0/aws/index.json") or path.endswith("/offers/v1.0/cn/index.json"):
        return False
    if path.endswith("/AmazonEC2/index.json"):  # the version index (every publication)
        return False
    if path.endswith("spot-advisor-data.json"):
        return False
    return True


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    head = body[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        raise ParseError(meta.provider, meta.url, "empty response body")
    if head.startswith(b'"FormatVersion"') or head.startswith(b"FormatVersion,"):
        return parse_offer_csv(body, meta)
    if head.startswith(HISTORY_HEADER.encode()):
        return parse_history_row(body, meta)
    if head.startswith(b"callback("):
        return parse_spot(body, meta)
    if head.startswith(b"{"):
        if b'"offerCode"' in head and b'"products"' in head:
            return parse_offer_json(body, meta)
        if b'"spot_advisor"' in head or b'"ranges"' in head and b'"instance_types"' in head:
            raise ParseError(meta.provider, meta.url,
                             "spot advisor data holds no prices (read it with "
                             "interruption_bands)")
        if b'"regions"' in head and b'"currentVersionUrl"' in head:
            raise ParseError(meta.provider, meta.url, "an offer index holds no prices")
        data = load_json(body, meta)
        if isinstance(data, dict) and isinstance(data.get("config"), dict) \
                and "regions" in data["config"]:
            return _spot_offers(data, meta)
        if isinstance(data, dict) and _is_page_feed(data):
            return parse_page_feed(data, meta)
        if isinstance(data, dict) and "spot_advisor" in data:
            raise ParseError(meta.provider, meta.url,
                             "spot advisor data holds no prices (read it with "
                             "interruption_bands)")
    raise ParseError(meta.provider, meta.url,
                     "unknown layout: not an offer file, page feed, spot feed or price series")


# -- shared -------------------------------------------------------------------------------


def _gpu_fields(instance_type: str) -> dict[str, Any] | None:
    """GPU columns from the table; None when the type is not a GPU type we track."""
    known = lookup(instance_type)
    if known is None:
        if is_gpu_type(instance_type):  # new size of a known family: count unknown
            return {"gpu_model": None, "gpu_count": 1.0, "gpu_memory_gb": None,
                    "extra": {"gpu_wording": instance_type, "gpu_count_unknown": True,
                              "unknown_size": instance_type}}
        return None
    extra: dict[str, Any] = {"gpu_wording": known.gpu_wording}
    if known.gpu_model is None:
        extra["quarantine_reason"] = f"{known.gpu_wording} is not in gpus.csv"
    return {"gpu_model": known.gpu_model, "gpu_count": known.gpu_count,
            "gpu_memory_gb": canonical_memory_gb(known.gpu_model), "extra": extra}


# -- page feed ------------------------------------------------------------------------------


def _is_page_feed(data: dict[str, Any]) -> bool:
    regions = data.get("regions")
    if isinstance(regions, dict):
        return True
    return any(isinstance(v, dict) and isinstance(v.get("regions"), dict)
               for v in data.values())


def _feed_entries(data: dict[str, Any]) -> Iterable[tuple[str, str, dict[str, Any]]]:
    # A single feed document is {"regions": {location: {name: entry}}}; the recorded fixture
    # keeps one such document per location: {location: {"regions": {...}}}.
    docs = [data] if isinstance(data.get("regions"), dict) else [
        v for v in data.values() if isinstance(v, dict) and isinstance(v.get("regions"), dict)]
    for doc in docs:
        for location, entries in doc["regions"].items():
            if not isinstance(entries, dict):
                continue
            for name, entry in entries.items():
                if isinstance(entry, dict):
                    yield location, name, entry


def parse_page_feed(data: dict[str, Any], meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    entries = 0
    for location, name, entry in _feed_entries(data):
        entries += 1
        itype = entry.get("Instance Type")
        if not itype:
            continue
        os_name = entry.get("Operating System") or entry.get("plc:OperatingSystem")
        if os_name not in (None, "Linux") or entry.get("Pre Installed S/W", "NA") != "NA":
            continue
        gpu = _gpu_fields(itype)
        if gpu is None:
            continue
        price = parse_price(entry.get("price"))
        if price is None:
            skip_unpriced(entry.get("price"))
            continue
        loc = entry.get("Location") or location
        extra = {**gpu.pop("extra"), "source": "page", "instance_type": itype,
                 "location": loc, "feed_key": name, "rate_code": entry.get("rateCode")}
        offers.append(make_offer(
            meta, sku=itype, pricing_model="on_demand", price_per_hour=price, currency="USD",
            region=LOCATION_TO_REGION.get(loc), vcpus=parse_price(entry.get("vCPU")),
            ram_gb=parse_price(entry.get("Memory")),
            billing_increment_s=BILLING_INCREMENT_S, min_billing_s=MIN_BILLING_S,
            extra=extra, **gpu))
    if entries == 0:
        raise ParseError(meta.provider, meta.url, "page feed without instance entries")
    if not offers:
        raise ParseError(meta.provider, meta.url, "no GPU instance priced in the page feed")
    return offers


# -- spot feed ------------------------------------------------------------------------------


def parse_spot(body: bytes, meta: CaptureMeta) -> list[Offer]:
    text = body.strip()
    if text.startswith(b"callback("):
        # Legacy JSONP: callback({...});
        text = text[len(b"callback("):].rstrip(b";").rstrip()
        if not text.endswith(b")"):
            raise ParseError(meta.provider, meta.url, "spot.js payload cut short")
        text = text[:-1]
    data = load_json(text, meta)
    if not (isinstance(data, dict) and isinstance(data.get("config"), dict)):
        raise ParseError(meta.provider, meta.url, "spot feed without config")
    return _spot_offers(data, meta)


def _spot_offers(data: dict[str, Any], meta: CaptureMeta) -> list[Offer]:
    config = data["config"]
    regions = config.get("regions") or []
    if not regions:
        raise ParseError(meta.provider, meta.url, "spot feed without regions")
    offers: list[Offer] = []
    for reg in regions:
        raw_region = reg.get("region", "")
        region = LEGACY_SPOT_REGIONS.get(raw_region, raw_region)
        for group in reg.get("instanceTypes") or []:
            for size in group.get("sizes") or []:
                itype = size.get("size", "")
                gpu = _gpu_fields(itype)
                if gpu is None:
                    if "gpu" in str(group.get("type", "")).lower():
                        # The feed files it under a GPU group but our table does not know it:
                        # kept for quarantine, never guessed.
                        gpu = {"gpu_model": None, "gpu_count": 1.0, "gpu_memory_gb": None,
                               "extra": {"gpu_wording": itype, "gpu_count_unknown": True,
                                         "unknown_family": family_of(itype)}}
                    else:
                        continue
                for column in size.get("valueColumns") or []:
                    if column.get("name") != "linux":
                        continue
                    for currency, text in (column.get("prices") or {}).items():
                        price = parse_price(text)  # "N/A*" and "0" are no price
                        if price is None:
                            skip_unpriced(text)
                            continue
                        fields = dict(gpu)
                        extra = {**fields.pop("extra"), "source": "spot_feed",
                                 "instance_type": itype, "spot_region_id": raw_region,
                                 "provider_term": "Spot", "feed_group": group.get("type")}
                        offers.append(make_offer(
                            meta, sku=itype, pricing_model="spot", price_per_hour=price,
                            currency=currency, region=region,
                            billing_increment_s=BILLING_INCREMENT_S,
                            min_billing_s=MIN_BILLING_S, extra=extra, **fields))
    if not offers:
        raise ParseError(meta.provider, meta.url, "no GPU instance priced in the spot feed")
    return offers


# -- spot advisor -------------------------------------------------------------------------------


def interruption_bands(body: bytes) -> dict[tuple[str, str], dict[str, Any]]:
    """(region, instance_type) -> {"band": "<5%", "savings_pct": 52} for Linux, from
    spot-advisor-data.json (`ranges[r].label`, `spot_advisor[region]["Linux"][type] = {s, r}`)."""
    data = json.loads(body)
    labels = {r["index"]: r["label"] for r in data["ranges"]}
    bands: dict[tuple[str, str], dict[str, Any]] = {}
    for region, by_os in data["spot_advisor"].items():
        for itype, v in (by_os.get("Linux") or {}).items():
            if v.get("r") in labels:
                bands[(region, itype)] = {"band": labels[v["r"]], "savings_pct": v.get("s")}
    return bands


def attach_interruption_bands(offers: list[Offer],
                              bands: dict[tuple[str, str], dict[str, Any]]) -> list[Offer]:
    """Write the advisor's band (and savings %) into extra of each spot offer it covers. The
    pipeline calls this with the advisor capture of the same day; returns the same list."""
    for offer in offers:
        if offer.pricing_model != "spot":
            continue
        itype = offer.extra.get("instance_type", offer.sku)
        band = bands.get((offer.region or "", itype))
        if band is not None:
            offer.extra["interruption_band"] = band["band"]
            offer.extra["spot_savings_pct"] = band["savings_pct"]
    return offers


def postprocess(offers: list[Offer], captures: list) -> list[Offer]:
    """Whole-day step (gpuprices.spiders.parsers.postprocess): spot offers take the interruption
    band from the same day's spot-advisor capture, when the day has one that reads."""
    if not any(o.pricing_model == "spot" for o in offers):
        return offers
    for cap in captures:
        if not urlsplit(cap.url).path.endswith("spot-advisor-data.json") or cap.status != 200:
            continue
        try:
            bands = interruption_bands(cap.body)
        except (ValueError, KeyError, TypeError):
            continue  # a broken advisor file costs the bands, never the day's prices
        return attach_interruption_bands(offers, bands)
    return offers


# -- daily series row (history backfill) -------------------------------------------------------


def parse_history_row(body: bytes, meta: CaptureMeta) -> list[Offer]:
    """One row of a daily on-demand price series (header timestamp,instance,price_usd). The
    region is named in the capture URL's fragment: `#<instance>/<region>/<date>` (set by
    spiders/providers/aws/history.py)."""
    text = body.decode("utf-8", errors="replace")
    if not text.endswith("\n"):
        # history.py (beside this module) ends every row with a newline: without it the body was
        # cut and its last price may be short ("98.32" -> "98.").
        raise ParseError(meta.provider, meta.url, "price series row truncated (no final newline)")
    rows = list(csv.DictReader(io.StringIO(text)))
    fragment = unquote(urlsplit(meta.url).fragment)
    parts = fragment.split("/")
    if len(parts) != 3:
        raise ParseError(meta.provider, meta.url,
                         "price series row without '#instance/region/date' in its URL")
    region = parts[1]
    offers: list[Offer] = []
    for row in rows:
        itype = (row.get("instance") or "").strip()
        price = parse_price(row.get("price_usd"))
        gpu = _gpu_fields(itype) if itype else None
        if price is None or gpu is None:
            if gpu is not None:
                skip_unpriced(row.get("price_usd"))
            continue
        extra = {**gpu.pop("extra"), "source": "history", "derived": True,
                 "instance_type": itype, "series_timestamp": row.get("timestamp")}
        offers.append(make_offer(
            meta, sku=itype, pricing_model="on_demand", price_per_hour=price, currency="USD",
            region=region, billing_increment_s=BILLING_INCREMENT_S,
            min_billing_s=MIN_BILLING_S, extra=extra, **gpu))
    if not offers:
        raise ParseError(meta.provider, meta.url, "price series row without a GPU price")
    return offers


def offer_file_stats(body: bytes, meta: CaptureMeta) -> tuple[list[Offer], Counter]:
    """Offers and the skip counts of an offer file (for reports and tests)."""
    stats: Counter = Counter()
    if body.lstrip().startswith(b'"FormatVersion"'):
        return parse_offer_csv(body, meta, stats), stats
    return parse_offer_json(body, meta, stats), stats

