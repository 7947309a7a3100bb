"""Compute Pulse: the listings answer `{data, page, meta, links}` (a price index of other
clouds' offers) and, by URL, the supply board (supply.py).

One price: `price_per_gpu_hour` is USD per GPU-hour as the index computed it
(`meta.price_unit` must say "USD per GPU hour"), for a listing of `gpu_count` GPUs. When the
seller prices in another currency (`currency` EUR, INR, CHF) its own figure is `price_native`
and the USD value carries the index's exchange rate: the row keeps the seller's currency and
figure, so it converts at the ECB rate like every other price, and the index's USD figure
stays in `extra.index_usd_per_gpu_hour`.

Each row is another cloud's offer: `provider` is the seller, kept as `extra.underlying`, with
"via Compute Pulse from <seller>"; a seller we read first-party is not counted twice
(spiders/resold.py). The same machine may be listed more than once from different sources
(Verda's B300 three times): every such row is kept, with its `source_url`.

Traps (../shared/PROVIDERS_MORE2.md, Compute Pulse): `meta.catalog_status` other than
`live_or_cached` (`seed_fallback`) is canned data, refused; `links.gpu` must end with the
queried slug; `reserved` rows carry a minimum term (`min_duration_hours` 8640 = a year), kept
as commitment months; `custom` billing has no terms to price and is passed over.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from gpuprices.spiders import resold
from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import load_json, parse_price, spaced_gpu_name
from gpuprices.spiders.providers.computepulse import supply
from gpuprices.spiders.providers.computepulse.source import slug_of
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "computepulse"
SELLER = "Compute Pulse"
PRICE_UNIT = "USD per GPU hour"
HOURS_PER_MONTH = 730  # 8760 / 12, the month the index's own terms use (720-h months round up)
# billing_type -> our pricing model (the API's enum: on_demand, spot, reserved, monthly, custom)
BILLING = {"on_demand": "on_demand", "spot": "spot", "reserved": "reserved",
           "monthly": "committed"}


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    doc = load_json(body, meta)
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise ParseError(PROVIDER, meta.url, "no 'data' list in the JSON")
    if urlsplit(meta.url).path.endswith("/supply"):
        return supply.parse(doc, meta)
    return _listings(doc, meta)


def _listings(doc: dict[str, Any], meta: CaptureMeta) -> list[Offer]:
    info = doc.get("meta") or {}
    if info.get("catalog_status") != "live_or_cached":
        raise ParseError(PROVIDER, meta.url, f"catalog_status {info.get('catalog_status')!r}: "
                         "canned data, not live listings")
    if info.get("price_unit") != PRICE_UNIT:
        raise ParseError(PROVIDER, meta.url, f"price_unit {info.get('price_unit')!r}, "
                         f"expected {PRICE_UNIT!r}")
    slug = slug_of(meta.url)
    rows = doc["data"]
    if not rows:
        total = (doc.get("page") or {}).get("total")
        raise ParseError(PROVIDER, meta.url, f"empty book for gpu={slug!r} (page.total "
                         f"{total}): no listing of this GPU")
    offers = []
    for r in rows:
        if not isinstance(r, dict):
            continue
        gpu_link = str((r.get("links") or {}).get("gpu") or "")
        if slug and not gpu_link.endswith(f"/gpu/{slug}"):
            raise ParseError(PROVIDER, meta.url, f"listing {r.get('id')} links to {gpu_link!r}, "
                             f"not the queried gpu {slug!r}")
        offer = _listing(r, meta)
        if offer:
            offers.append(offer)
    return offers


def _listing(r: dict[str, Any], meta: CaptureMeta) -> Offer | None:
    model = BILLING.get(str(r.get("billing_type")))
    if model is None:
        skip_row(f"billing_type {r.get('billing_type')!r}: no terms to price")
        return None
    usd = parse_price(r.get("price_per_gpu_hour"))
    count = r.get("gpu_count")
    if usd is None or not isinstance(count, int) or count < 1:
        skip_row("listing without a price per GPU-hour or a GPU count")
        return None
    currency, per_gpu = "USD", usd
    native = parse_price(r.get("price_native"))
    if r.get("currency") and native is not None:
        currency, per_gpu = str(r["currency"]), native
    hours = r.get("min_duration_hours")
    months = None
    if model == "committed":
        months = max(1, round(hours / HOURS_PER_MONTH)) if hours else 1
    elif model == "reserved" and hours:
        months = max(1, round(hours / HOURS_PER_MONTH))
    name = str(r.get("gpu_model") or "").strip()
    variant = str(r.get("gpu_variant") or "").strip()
    wording = " ".join(p for p in (spaced_gpu_name(name), variant) if p)
    memory = r.get("vram_gb") if isinstance(r.get("vram_gb"), int | float) else None
    seller = str(r.get("provider") or "").strip() or None
    region = str(r.get("region") or "").strip()
    extra = resold.tag({
        "source": "listings",
        "gpu_wording": wording,
        "listing_id": r.get("id"),
        "billing_type": r.get("billing_type"),
        "index_usd_per_gpu_hour": usd,
        "source_kind": r.get("source_kind"),
        "source_url": r.get("source_url"),
        "fetched_at": r.get("fetched_at"),
        "human_verified": r.get("human_verified"),
        "min_duration_hours": hours,
    }, SELLER, seller, reader=PROVIDER)
    return make_offer(
        meta,
        sku=f"{seller or '?'}/{wording}/{count}x/listing {r.get('id')}",
        gpu_model=canonical_gpu(wording, memory),
        gpu_memory_gb=memory,
        gpu_count=count,
        price_per_hour=round(per_gpu * count, 6),
        pricing_model=model,
        commitment_months=months,
        region=None if region in ("", "unspecified") else region,
        vcpus=r.get("vcpus"),
        ram_gb=r.get("ram_gb"),
        interconnect=r.get("interconnect"),
        currency=currency,
        min_billing_s=int(hours * 3600) if hours else None,
        available=r.get("available"),
        extra=extra,
    )
