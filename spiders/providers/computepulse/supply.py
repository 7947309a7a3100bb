"""Compute Pulse's supply board: sellers' own capacity classifieds
(`/api/supply?intent=selling`), `{data, page, meta: {visibility, notice}, links}`.

One price: `price_per_gpu_hour` in `price_currency`, as the seller declared it. The board has no
billing type: a minimum term of 720 hours or more (`min_duration_hours`) is a monthly or longer
commitment (commitment months = hours / 730), a shorter or no minimum is on-demand
(../shared/PROVIDERS_MORE2.md, Compute Pulse supply). `gpu_count` is the seller's whole pool
(1016 H200s); the offer is the smallest booking, `min_bookable_gpus` when stated, priced at that
many GPUs, with the pool in `extra.gpus_listed`. An unpriced classified (`price_per_gpu_hour`
null, "Anonymous" 8x H100) is counted as skipped; prices in the free-text `notes`
("IB ($0.05/GPU/hr)") are never read.
"""

from __future__ import annotations

from typing import Any

from gpuprices.spiders import resold
from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import parse_price, spaced_gpu_name
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "computepulse"
SELLER = "Compute Pulse"
VISIBILITY = "published_public_fields_only"
HOURS_PER_MONTH = 730
COMMITMENT_HOURS = 720  # the board's shortest monthly term (PROVIDERS_MORE2.md: >= 720 h)
# A region cell that names no place ("—" on the board).
NO_REGION = {"", "\u2014", "-", "unspecified"}


def parse(doc: dict[str, Any], meta: CaptureMeta) -> list[Offer]:
    visibility = (doc.get("meta") or {}).get("visibility")
    if visibility != VISIBILITY:
        raise ParseError(PROVIDER, meta.url, f"supply meta.visibility {visibility!r}, "
                         f"expected {VISIBILITY!r}")
    offers = [o for o in (_classified(r, meta) for r in doc["data"] if isinstance(r, dict))
              if o]
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"no priced capacity offer among "
                         f"{len(doc['data'])} classifieds")
    return offers


def _classified(r: dict[str, Any], meta: CaptureMeta) -> Offer | None:
    if r.get("intent") != "capacity_offer":
        skip_row(f"classified intent {r.get('intent')!r}, not a capacity offer")
        return None
    price = parse_price(r.get("price_per_gpu_hour"))
    if price is None or not r.get("price_currency"):
        skip_row("classified without a stated price")
        return None
    pool = r.get("gpu_count")
    unit = r.get("min_bookable_gpus") or pool
    if not isinstance(unit, int) or unit < 1:
        skip_row("classified without a GPU count")
        return None
    hours = r.get("min_duration_hours")
    committed = bool(hours) and hours >= COMMITMENT_HOURS
    wording = spaced_gpu_name(str(r.get("gpu_model") or "").strip())
    company = str(r.get("company") or "").strip() or None
    region = str(r.get("region") or "").strip()
    model = canonical_gpu(wording)
    extra = resold.tag({
        "source": "supply",
        "gpu_wording": wording,
        "slug": r.get("slug"),
        "gpus_listed": pool,
        "min_bookable_gpus": r.get("min_bookable_gpus"),
        "min_duration_hours": hours,
        "price_observed_at": r.get("price_observed_at"),
        "availability_state": r.get("availability_state"),
        "available_from": r.get("available_from"),
        "available_until": r.get("available_until"),
    }, SELLER, company, reader=PROVIDER)
    if model is None:
        # The board writes the family only ("H100", "A100"): SXM or PCIe, 40 or 80 GB is not
        # a field (the free-text notes may say; they are not read), so no part is guessed.
        extra["unmapped_reason"] = (f"the classified says {wording!r} without its form factor "
                                    "or memory; not guessed")
    return make_offer(
        meta,
        sku=f"{company or '?'}/{wording}/{unit}x/classified {r.get('slug')}",
        gpu_model=model,
        gpu_count=unit,
        price_per_hour=round(price * unit, 6),
        pricing_model="committed" if committed else "on_demand",
        commitment_months=max(1, round(hours / HOURS_PER_MONTH)) if committed else None,
        region=None if region in NO_REGION else region,
        interconnect=r.get("interconnect"),
        currency=str(r["price_currency"]),
        min_billing_s=int(hours * 3600) if hours else None,
        available=r.get("available_now"),
        extra=extra,
    )
