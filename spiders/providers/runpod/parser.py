"""Runpod: the public GraphQL `gpuTypes` answer and the three layouts of the pricing page.

Layouts, chosen by what the body holds (never by its date):

- ``api``: JSON ``{"data": {"gpuTypes": [...]}}`` from ``POST https://api.runpod.io/graphql``.
- ``nextdata`` (2023-24, ``/gpu-instance/pricing``): ``script#__NEXT_DATA__`` whose
  ``props.pageProps.data[]`` are the same ``GpuType`` records as the API, with the
  ``secureCloud``/``communityCloud`` flags.
- ``attributes`` (2025 Webflow): one ``div.cc-gpu-price`` per GPU whose prices sit only in the
  attributes ``data-secure-cloud-price``/``data-community-cloud-price`` (later ``data-secure``/
  ``data-community``); the visible text is a "0" filled in by JavaScript. Name and tags
  (VRAM, RAM, vCPUs) precede it in the row.
- ``jsonld`` (2026): ``script[type="application/ld+json"]`` ``@graph`` Products
  "<GPU> GPU on Runpod" with Offers named "Community Cloud" / "Secure Cloud".

Mapping: Secure Cloud -> ``on_demand``; Community Cloud -> ``community``; ``secureSpotPrice``/
``communitySpotPrice`` and ``lowestPrice.minimumBidPrice`` -> ``spot`` (the field is written in
``extra["price_field"]``); ``one/three/sixMonthPrice`` -> ``committed`` with
``commitment_months``. A price of 0 or null means "not offered there": no row. Where a record
carries the ``secureCloud``/``communityCloud`` flags, a cloud whose flag is false gives no row
even if a price is present (2023 "A100 SXM 80GB": ``communityCloud: false`` with
``communityPrice: 1.69``); the savings-plan (month) prices are not gated by those flags, since
the flags describe the two on-demand clouds.

Page rows take the API's GPU id as their SKU (gpu_ids.py: the page prints the API's
`displayName`), so the page's and the API's price of one GPU in one cloud are one offer.

Stock (``available``, and the words in ``extra``), where the record carries Runpod's stock
probes: ``lowestPrice(input: {gpuCount: 1})`` (any cloud), the aliased ``lp1s`` (secure cloud,
1 GPU) and ``lp8`` (8 GPUs), each with ``stockStatus`` High / Medium / Low, or null when no
machine of the type can be rented at that size (see stock_rule()).
``dataCenters[].gpuAvailability`` names the data centres that have the type; the in-stock
ones go to ``extra.stock_data_centers``.

Every price is USD per GPU-hour for one GPU (gpu_count 1), or per MIG slice-hour for a
"<GPU> MIG 1g.24gb" wording (gpu_count = the slice's share of the GPU, e.g. 0.25). A price
of exactly 0.5 is kept but flagged ``extra["suspect_placeholder"]``: Runpod returns 0.5 where
a real rate is missing (2026 API: MI300X and H200 NVL community 0.5; RTX PRO 6000 Max-Q secure
0.5 below its community 1.64; 2023 L40 community 0.5).
"""

from __future__ import annotations

import json
import re
from typing import Any

from lxml import html as lxml_html

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import decode_html, load_json, parse_price, skip_unpriced
from gpuprices.spiders.providers.runpod.gpu_ids import api_gpu_id
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu, gpu_models

PROVIDER = "runpod"

# "All compute and storage charges are billed per second" (docs.runpod.io/accounts-billing/
# billing); the pricing page also shows each rate "/s".
BILLING_INCREMENT_S = 1

# Runpod answers 0.5 where it has no real rate (see module docstring): keep, but flag.
PLACEHOLDER_PRICE = 0.5

# The 2026 JSON-LD names a GPU without its memory. Memory per Runpod display name, read off the
# 2026 API capture (tests/fixtures/raw/runpod/runpod_graphql_gpuTypes_ewyluda_fixture.json,
# `displayName` -> `memoryInGb`), so that e.g. "A100 PCIe" is told from a 40 GB part.
JSONLD_MEMORY_GB = {
    "B300": 288, "H200": 141, "B200": 180, "RTX Pro 6000": 96, "H100 NVL": 94, "H100 PCIe": 80,
    "H100 SXM": 80, "A100 PCIe": 80, "A100 SXM": 80, "L40S": 48, "RTX 6000 Ada": 48, "A40": 48,
    "L40": 48, "RTX A6000": 48, "RTX 5090": 32, "L4": 24, "RTX 3090": 24, "RTX 4090": 24,
    "RTX A5000": 24,
}

# (API field, cloud flag gating it, pricing model, commitment months, sku part)
_RECORD_FIELDS = (
    ("securePrice", "secureCloud", "on_demand", None, "secure"),
    ("communityPrice", "communityCloud", "community", None, "community"),
    ("secureSpotPrice", "secureCloud", "spot", None, "secure"),
    ("communitySpotPrice", "communityCloud", "spot", None, "community"),
    ("oneMonthPrice", None, "committed", 1, "savings-plan"),
    ("threeMonthPrice", None, "committed", 3, "savings-plan"),
    ("sixMonthPrice", None, "committed", 6, "savings-plan"),
)

_NEXT_DATA = re.compile(
    r'<script[^>]*id="__NEXT_DATA__"[^>]*>(.*?)</script>', re.S | re.I
)


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    if not body or not body.strip():
        raise ParseError(PROVIDER, meta.url, "empty response body")
    head = body.lstrip()[:1]
    if head in (b"{", b"["):
        offers = _parse_api(load_json(body, meta), meta)
    else:
        text = decode_html(body, meta)
        offers = _parse_page(text, meta)
    if not offers:
        raise ParseError(PROVIDER, meta.url, "no prices found (every price 0, null or gated)")
    return offers


# --- GraphQL records (API and 2023 __NEXT_DATA__) ---------------------------------------------


def _parse_api(doc: Any, meta: CaptureMeta) -> list[Offer]:
    if not isinstance(doc, dict):
        raise ParseError(PROVIDER, meta.url, "JSON body is not an object")
    if doc.get("errors") and not (doc.get("data") or {}).get("gpuTypes"):
        raise ParseError(PROVIDER, meta.url, f"GraphQL errors: {doc['errors']!r:.300}")
    records = (doc.get("data") or {}).get("gpuTypes")
    if not isinstance(records, list):
        raise ParseError(PROVIDER, meta.url, "no data.gpuTypes list in the JSON")
    centres = (doc.get("data") or {}).get("dataCenters")
    return _records_to_offers(records, meta, source="api", layout="api",
                              stock_centres=_stock_centres(centres))


def _stock_centres(centres: Any) -> dict[str, list[str]]:
    """GPU id -> the data centres whose `gpuAvailability` says `available: true` for it."""
    out: dict[str, list[str]] = {}
    for dc in centres if isinstance(centres, list) else []:
        if not isinstance(dc, dict):
            continue
        for item in dc.get("gpuAvailability") or []:
            if isinstance(item, dict) and item.get("available") is True and item.get("gpuTypeId"):
                out.setdefault(str(item["gpuTypeId"]), []).append(str(dc.get("id")))
    return out


def _probe(rec: dict[str, Any], key: str) -> tuple[bool, str | None]:
    """(the record has this stock probe, its stockStatus)."""
    value = rec.get(key)
    if not isinstance(value, dict) or "stockStatus" not in value:
        return False, None
    status = value.get("stockStatus")
    return True, (str(status) if status else None)


def stock_rule(rec: dict[str, Any], cloud: str) -> tuple[bool | None, str | None]:
    """(available, the rule that decided) for one cloud ("secure", "community", "any") of one
    GpuType record; (None, None) where the record does not tell.

    - ``lowestPrice`` (any cloud, 1 GPU) null: no machine of the type can be rented at all:
      every row is sold out at the snapshot (the 2026-08-25 capture: MI300X).
    - secure: ``lp1s`` when asked; else, when the type has no community cloud, ``lowestPrice``.
    - community: ``lowestPrice`` when the type has no secure cloud; in stock when ``lp1s`` is
      null while ``lowestPrice`` is not (the stock is not in the secure cloud), or when
      ``lowestPrice.uninterruptablePrice`` (the cheapest uninterrupted machine that can be
      rented now) is the community price and below the secure one.
    - any (the minimum-bid spot row): ``lowestPrice``.
    Savings-plan rows are left unknown: no probe names their cloud."""
    has_any, any_status = _probe(rec, "lowestPrice")
    if not has_any:
        return None, None
    if any_status is None:
        return False, "lowestPrice.stockStatus null"
    has_secure, secure_status = _probe(rec, "lp1s")
    if cloud == "any":
        return True, "lowestPrice.stockStatus"
    if cloud == "secure":
        if has_secure:
            return secure_status is not None, "lp1s.stockStatus"
        if rec.get("communityCloud") is False:
            return True, "lowestPrice.stockStatus (secure cloud only)"
        return None, None
    if cloud == "community":
        if rec.get("secureCloud") is False:
            return True, "lowestPrice.stockStatus (community cloud only)"
        if has_secure and secure_status is None:
            return True, "lowestPrice in stock, lp1s (secure) null"
        cheapest = parse_price((rec.get("lowestPrice") or {}).get("uninterruptablePrice"))
        community = parse_price(rec.get("communityPrice"))
        secure = parse_price(rec.get("securePrice"))
        cheaper = secure is None or (cheapest is not None and secure > cheapest)
        if cheapest is not None and cheapest == community and cheaper:
            return True, "lowestPrice.uninterruptablePrice = communityPrice"
    return None, None


# A MIG slice is named by its parent GPU and NVIDIA's profile, "<GPU> MIG 1g.24gb": g = compute
# slices, the number before "gb" = the slice's memory (NVIDIA MIG User Guide, supported profiles;
# RTX PRO 6000 Blackwell Server Edition: 1g.24gb = a quarter, 2g.48gb = half of its 96 GB).
_MIG = re.compile(r"^(?P<parent>.+?)\s+MIG\s+(?P<profile>\d+g\.(?P<gb>\d+)gb)\s*$", re.IGNORECASE)


def _mig_slice(gpu_id: str) -> tuple[str, float, dict[str, Any]] | None:
    """(parent model, fraction of the parent GPU, extra) for a MIG slice wording, else None.
    The slice is carried as a fractional gpu_count (memory of the slice / memory of the whole
    GPU), so price_per_gpu_hour is the whole-GPU equivalent; gpu_memory_gb stays the whole
    GPU's and extra.slice_memory_gb says what the slice gets."""
    m = _MIG.match(gpu_id)
    if not m:
        return None
    parent = canonical_gpu(m["parent"])
    if parent is None:
        return None
    whole = gpu_models()[parent].memory_gb
    slice_gb = float(m["gb"])
    if not 0 < slice_gb < whole:
        return None
    extra = {"mig_profile": m["profile"], "slice_memory_gb": slice_gb}
    return parent, slice_gb / whole, extra


def _records_to_offers(
    records: list[Any], meta: CaptureMeta, *, source: str, layout: str,
    stock_centres: dict[str, list[str]] | None = None,
) -> list[Offer]:
    offers: list[Offer] = []
    for rec in records:
        if not isinstance(rec, dict):
            continue
        gpu_id = str(rec.get("id") or "").strip()
        # The API ends its list with a placeholder record id "unknown", all zeros.
        if not gpu_id or gpu_id.lower() == "unknown":
            continue
        memory = rec.get("memoryInGb") or None
        model = canonical_gpu(gpu_id, memory)
        count = 1.0
        mig = _mig_slice(gpu_id) if model is None else None
        if mig is not None:
            model, count, mig_extra = mig
            memory = gpu_models()[model].memory_gb
        lowest = rec.get("lowestPrice") if isinstance(rec.get("lowestPrice"), dict) else {}
        base_extra: dict[str, Any] = {
            "source": source,
            "layout": layout,
            "gpu_wording": gpu_id,
            "display_name": rec.get("displayName"),
            **(mig[2] if mig else {}),
        }
        if lowest.get("stockStatus"):
            base_extra["stock_status"] = lowest["stockStatus"]
        for probe, key in (("lp1s", "stock_status_secure"), ("lp8", "stock_status_8gpu")):
            has, status = _probe(rec, probe)
            if has:
                base_extra[key] = status
        if stock_centres is not None and gpu_id in stock_centres:
            base_extra["stock_data_centers"] = stock_centres[gpu_id]
        spot_prices: dict[float, list[Offer]] = {}
        cloud_rows: dict[str, Offer] = {}
        for field, flag, model_kind, months, cloud in _RECORD_FIELDS:
            price = parse_price(rec.get(field))
            if price is None:
                if field in rec:  # a field the query did not ask for is no skipped row
                    skip_unpriced(rec.get(field))
                continue
            if flag and rec.get(flag) is False:
                continue
            plain = cloud_rows.get(cloud)
            if model_kind == "spot" and plain is not None and plain.price_per_hour == price:
                # The ~2026-08 API answers every *SpotPrice with the cloud's own on-demand
                # price: no interruptible discount is quoted, so no spot row.
                plain.extra["spot_price_same"] = True
                continue
            extra = {**base_extra, "price_field": field, "cloud": cloud}
            offer = _offer(meta, f"{gpu_id}/{cloud}", model, memory, price, model_kind, months,
                           extra, gpu_count=count)
            if months is None:
                _set_stock(offer, rec, cloud)
            offers.append(offer)
            if model_kind == "spot":
                spot_prices.setdefault(price, []).append(offer)
            elif months is None:
                cloud_rows[cloud] = offer
        bid = parse_price(lowest.get("minimumBidPrice"))
        if bid is not None:
            same = [o for o in cloud_rows.values() if o.price_per_hour == bid]
            if bid in spot_prices:
                # Same number as a listed spot price: annotate rather than duplicate.
                for o in spot_prices[bid]:
                    o.extra["also_minimum_bid_price"] = True
            elif same:
                # ~2026-08: the minimum bid equals the uninterrupted price, no discount quoted.
                for o in same:
                    o.extra["minimum_bid_same"] = True
            elif rec.get("secureCloud") is not False or rec.get("communityCloud") is not False:
                extra = {**base_extra, "price_field": "lowestPrice.minimumBidPrice",
                         "cloud": "any"}
                any_offer = _offer(meta, f"{gpu_id}/any", model, memory, bid, "spot", None,
                                   extra, gpu_count=count)
                _set_stock(any_offer, rec, "any")
                offers.append(any_offer)
    return offers


def _set_stock(offer: Offer, rec: dict[str, Any], cloud: str) -> None:
    available, rule = stock_rule(rec, cloud)
    if rule is not None:
        offer.available = available
        offer.extra["stock_rule"] = rule


def _offer(
    meta: CaptureMeta,
    sku: str,
    model: str | None,
    memory: float | None,
    price: float,
    pricing_model: str,
    months: int | None,
    extra: dict[str, Any],
    vcpus: float | None = None,
    ram_gb: float | None = None,
    gpu_count: float = 1.0,
) -> Offer:
    if price == PLACEHOLDER_PRICE:
        extra["suspect_placeholder"] = True
    return make_offer(
        meta,
        sku=sku,
        gpu_model=model,
        gpu_memory_gb=float(memory) if memory else None,
        # Runpod prices one GPU-hour (or one MIG slice-hour); an instance is count x this price
        gpu_count=gpu_count,
        price_per_hour=price,
        pricing_model=pricing_model,
        commitment_months=months,
        vcpus=vcpus,
        ram_gb=ram_gb,
        currency="USD",
        billing_increment_s=BILLING_INCREMENT_S,
        extra=extra,
    )


# --- Pages --------------------------------------------------------------------------------------


def _parse_page(text: str, meta: CaptureMeta) -> list[Offer]:
    m = _NEXT_DATA.search(text)
    if m:
        return _parse_nextdata(m.group(1), meta)
    try:
        tree = lxml_html.fromstring(text)
    except (ValueError, lxml_html.etree.ParserError) as exc:
        problem = f"unknown page layout: no HTML elements ({exc})"
        raise ParseError(PROVIDER, meta.url, problem) from exc
    price_divs = tree.xpath(
        "//div[contains(concat(' ', normalize-space(@class), ' '), ' cc-gpu-price ')]"
        "[@data-secure-cloud-price or @data-community-cloud-price or @data-secure"
        " or @data-community]"
    )
    if price_divs:
        offers = _parse_attributes(price_divs, meta)
        if offers:
            return offers
    scripts = tree.xpath("//script[@type='application/ld+json']/text()")
    if scripts:
        return _parse_jsonld(scripts, meta)
    raise ParseError(
        PROVIDER, meta.url,
        "unknown page layout: no __NEXT_DATA__, no div.cc-gpu-price price attributes, "
        "no application/ld+json",
    )


def _parse_nextdata(raw: str, meta: CaptureMeta) -> list[Offer]:
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ParseError(PROVIDER, meta.url, f"__NEXT_DATA__ is not valid JSON ({exc})") from exc
    records = (((doc.get("props") or {}).get("pageProps") or {}).get("data")
               if isinstance(doc, dict) else None)
    if not isinstance(records, list):
        raise ParseError(PROVIDER, meta.url, "__NEXT_DATA__ has no props.pageProps.data list")
    return _records_to_offers(records, meta, source="page", layout="nextdata")


def _tag_values(tags_div: Any) -> dict[str, float]:
    """Row tags are split in a number div and a label div: ("141", "GB VRAM")."""
    values: dict[str, float] = {}
    for tag in tags_div.xpath("./div"):
        parts = [t.strip() for t in tag.xpath("./div//text()") if t.strip()]
        if len(parts) >= 2:
            num = parse_price(parts[0])
            if num is not None:
                values[" ".join(parts[1:]).lower()] = num
    return values


def _parse_attributes(price_divs: list[Any], meta: CaptureMeta) -> list[Offer]:
    offers: list[Offer] = []
    seen: set[tuple[str, float | None]] = set()
    for div in price_divs:
        names = div.xpath(
            "preceding::div[@data-line-clamp][@data-gradient='text-secondary'][1]"
        )
        if not names:
            continue
        name = names[0].text_content().strip()
        if not name:
            continue
        tags = div.xpath(
            "preceding::div[contains(concat(' ', normalize-space(@class), ' '),"
            " ' gpu-pricing-row__tags ')][1]"
        )
        tag_values = _tag_values(tags[0]) if tags else {}
        memory = tag_values.get("gb vram")
        if (name, memory) in seen:
            continue  # the same GPU listed again in another section of the page
        seen.add((name, memory))
        model = canonical_gpu(name, memory)
        for attrs, kind, cloud in (
            (("data-secure-cloud-price", "data-secure"), "on_demand", "secure"),
            (("data-community-cloud-price", "data-community"), "community", "community"),
        ):
            attr = next((a for a in attrs if div.get(a) is not None), None)
            if attr is None:
                continue
            price = parse_price(div.get(attr))
            if price is None:
                skip_unpriced(div.get(attr))
                continue
            extra = {"source": "page", "layout": "attributes", "gpu_wording": name,
                     "price_field": attr, "cloud": cloud}
            offers.append(_offer(meta, _page_sku(name, cloud, extra), model, memory, price, kind,
                                 None,
                                 extra, vcpus=tag_values.get("vcpus"),
                                 ram_gb=tag_values.get("gb ram")))
    return offers


_JSONLD_NAME = re.compile(r"^(.*?)\s+GPU on Runpod$", re.I)
_JSONLD_OFFERS = {"secure cloud": ("on_demand", "secure"),
                  "community cloud": ("community", "community")}


def _graph_items(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, list):
        return [i for d in doc for i in _graph_items(d)]
    if not isinstance(doc, dict):
        return []
    if "@graph" in doc:
        return _graph_items(doc["@graph"])
    return [doc]


def _parse_jsonld(scripts: list[str], meta: CaptureMeta) -> list[Offer]:
    products = []
    for raw in scripts:
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ParseError(PROVIDER, meta.url, f"ld+json is not valid JSON ({exc})") from exc
        for item in _graph_items(doc):
            if item.get("@type") == "Product" and _JSONLD_NAME.match(str(item.get("name", ""))):
                products.append(item)
    if not products:
        raise ParseError(PROVIDER, meta.url, "ld+json has no '<GPU> GPU on Runpod' Product")
    offers: list[Offer] = []
    for product in products:
        name = _JSONLD_NAME.match(product["name"]).group(1).strip()
        memory = JSONLD_MEMORY_GB.get(name)
        model = canonical_gpu(name, memory)
        agg = product.get("offers") or {}
        items = agg.get("offers") if isinstance(agg, dict) else agg
        for item in items or []:
            kind_cloud = _JSONLD_OFFERS.get(str(item.get("name", "")).strip().lower())
            if kind_cloud is None:
                continue
            if (item.get("priceCurrency") or agg.get("priceCurrency") or "USD") != "USD":
                raise ParseError(PROVIDER, meta.url,
                                 f"{name}: currency {item.get('priceCurrency')!r}, expected USD")
            price = parse_price(item.get("price"))
            if price is None:
                skip_unpriced(item.get("price"))
                continue
            kind, cloud = kind_cloud
            extra = {"source": "page", "layout": "jsonld", "gpu_wording": name,
                     "price_field": f"offers[{item.get('name')}].price", "cloud": cloud}
            if memory:
                # Not on this page: taken from JSONLD_MEMORY_GB (the API's displayName).
                extra["memory_from"] = "api displayName table"
            offers.append(_offer(meta, _page_sku(name, cloud, extra), model, memory, price, kind,
                                 None, extra))
    return offers


def _page_sku(name: str, cloud: str, extra: dict[str, Any]) -> str:
    """"<API GPU id>/<cloud>", as the API's rows are named; the page's own name where it maps
    to no id (noted in extra, never guessed)."""
    gpu_id = api_gpu_id(name)
    if gpu_id is None:
        extra["gpu_id_unmapped"] = True
        return f"{name}/{cloud}"
    extra["gpu_id"] = gpu_id
    return f"{gpu_id}/{cloud}"
