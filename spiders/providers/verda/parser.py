"""Verda (formerly DataCrunch): https://verda.com/pricing, read from its JSON-LD.

The page carries one `<script type="application/ld+json">` block whose `@graph` holds an `Offer`
node per price (beside Organization, ItemList and CollectionPage nodes). An offer's `name` is
"<N>x <MODEL> <MEM>GB <tier phrase>" and its `price` is USD per hour for the whole N-GPU unit
(`1x` rows are per GPU; "104x B300 SXM6 268GB instant cluster" 780 = 104 x 7.50). The currency
is read per offer (`priceCurrency`): the page has a EUR toggle.

Tier phrases (the description confirms them):
- "on-demand" -> `on_demand`; "spot" -> `spot`;
- "instant cluster" -> `on_demand`, the phrase in `extra.provider_term` (a cluster billed by
  the hour, a different thing to buy from a 1x VM of the same GPU);
- "serverless continuous" / "serverless spot" -> `on_demand` / `spot`, phrase in
  `extra.provider_term` (containers, N GPUs each).

Skipped: CPU instances (blank model: names are just " on-demand"), storage (`unitText`
"GiB-month") and any offer not priced per hour. "CC" in a name is the confidential-computing
variant: kept in the SKU, left out of the GPU wording, `extra.confidential_computing`. The page
lists some offers twice under one name at one price (two `1x H100 SXM5 80GB on-demand` hardware
variants): one row, `extra.listed` counts them. One name at two prices would be two things to
buy: each keeps its `@id` fragment as `extra.offer_key` (an identity key, warehouse/identity.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import decode_html
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "verda"

_LD_JSON = re.compile(r"<script[^>]*type=[\"']application/ld\+json[\"'][^>]*>(.*?)</script>",
                      re.S | re.I)
# Longest phrases first: "serverless spot" must not read as "spot".
_TIERS = (
    ("serverless continuous", "on_demand", "serverless continuous"),
    ("serverless spot", "spot", "serverless spot"),
    ("instant cluster", "on_demand", "instant cluster"),
    ("on-demand", "on_demand", None),
    ("spot", "spot", None),
)
_UNIT = re.compile(r"^(\d+)x\s+(.+?)\s+(\d+(?:\.\d+)?)GB$", re.I)
_CC = re.compile(r"\bCC\b")


def _offers_in(text: str, meta: CaptureMeta) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    for block in _LD_JSON.findall(text):
        try:
            data = json.loads(block)
        except json.JSONDecodeError as exc:
            raise ParseError(PROVIDER, meta.url,
                             f"ld+json block is not valid JSON ({exc})") from exc
        graph = data.get("@graph", [data]) if isinstance(data, dict) else data
        nodes += [n for n in graph if isinstance(n, dict) and n.get("@type") == "Offer"]
    return nodes


def _tier(name: str) -> tuple[str, str, str | None, str] | None:
    """(unit text, pricing_model, provider_term, phrase) of an offer name, None if no tier."""
    for phrase, model, term in _TIERS:
        if name.lower().endswith(" " + phrase) or name.lower() == phrase:
            return name[: len(name) - len(phrase)].strip(), model, term, phrase
    return None


def _unit_price(node: dict[str, Any]) -> tuple[float, str, str] | None:
    spec = node.get("priceSpecification") or {}
    unit = str(spec.get("unitText") or "hour").lower()
    price = node.get("price", spec.get("price"))
    currency = node.get("priceCurrency") or spec.get("priceCurrency")
    if unit != "hour" or not isinstance(price, int | float) or price <= 0 or not currency:
        return None
    return float(price), str(currency), unit


def _offer(node: dict[str, Any], meta: CaptureMeta) -> Offer | None:
    name = str(node.get("name") or "")
    tier = _tier(name.strip())
    priced = _unit_price(node)
    if tier is None or priced is None:
        return None  # storage, or a node that is not an hourly price
    unit_text, pricing_model, term, phrase = tier
    m = _UNIT.match(unit_text)
    if not m:
        return None  # CPU instance: no "<N>x <MODEL> <MEM>GB" before the tier
    count, model_text, mem = int(m.group(1)), m.group(2), float(m.group(3))
    confidential = bool(_CC.search(model_text))
    wording = " ".join(_CC.sub(" ", model_text).split())
    extra: dict[str, Any] = {
        "source": "page", "layout": "jsonld", "gpu_wording": f"{wording} {mem:g}GB",
        "tier": phrase, "description": node.get("description"),
        "price_basis": "per_unit_hour", "offer_id": node.get("@id"),
    }
    if term:
        extra["provider_term"] = term
    if confidential:
        extra["confidential_computing"] = True
    price, currency, _ = priced
    return make_offer(
        meta, sku=unit_text, gpu_model=canonical_gpu(wording, mem), gpu_memory_gb=mem,
        gpu_count=count, price_per_hour=price, pricing_model=pricing_model, currency=currency,
        extra={k: v for k, v in extra.items() if v is not None},
    )


def _one_per_name(offers: list[Offer]) -> list[Offer]:
    """Collapse identical repeats of one offer; keep one name's different prices apart."""
    by_key: dict[tuple, list[Offer]] = {}
    for o in offers:
        by_key.setdefault((o.sku, o.pricing_model, o.extra.get("provider_term"), o.currency),
                          []).append(o)
    out = []
    for group in by_key.values():
        prices = {o.price_per_hour for o in group}
        if len(prices) == 1:
            first = group[0]
            first.extra["listed"] = len(group)
            out.append(first)
            continue
        for o in group:
            o.extra["offer_key"] = str(o.extra.get("offer_id", "")).rsplit("#", 1)[-1]
            out.append(o)
    return out


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    text = decode_html(body, meta)
    nodes = _offers_in(text, meta)
    if not nodes:
        raise ParseError(PROVIDER, meta.url,
                         "unknown layout: no application/ld+json block with Offer nodes")
    offers = [o for o in (_offer(n, meta) for n in nodes) if o is not None]
    if not offers:
        raise ParseError(PROVIDER, meta.url,
                         f"{len(nodes)} Offer nodes but none is an hourly GPU price "
                         "('<N>x <GPU> <MEM>GB <tier>')")
    return _one_per_name(offers)
