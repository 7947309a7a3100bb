"""Reading one offer row as the warehouse hands it over (offers_priced_as_of): its price in
the ranking currency, extra, integers, commitment term, and the warehouse's verdicts on it
(firm_price / price_caveat, is_stale), with the defaults for a row without them."""

from __future__ import annotations

import json
import math
from typing import Any

from gpuprices.sizing import network
from gpuprices.sizing.reasons import choice_of
from gpuprices.warehouse.regions import country_of


def records(offers: Any) -> list[dict[str, Any]]:
    if hasattr(offers, "to_dict"):
        return offers.to_dict("records")
    return list(offers)


def extra(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        try:
            parsed = json.loads(value)
            return parsed if isinstance(parsed, dict) else {}
        except json.JSONDecodeError:
            return {}
    return {}


def int_or_none(value: Any) -> int | None:
    if value is None:
        return None
    try:
        if isinstance(value, float) and math.isnan(value):
            return None
        return int(value)
    except (TypeError, ValueError):
        return None


def price(value: Any) -> float | None:
    """The row's price in the ranking currency; None when the warehouse could not convert it."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def commitment_months(o: dict[str, Any]) -> float | None:
    """The commitment term in months of a committed or reserved price (None otherwise)."""
    if choice_of(str(o.get("pricing_model") or "")) != "committed":
        return None
    m = price(o.get("commitment_months"))
    return m if m else None


def is_stale(o: dict[str, Any]) -> bool:
    """The warehouse's verdict (offers_as_of.is_stale); a row without it counts as fresh."""
    v = o.get("is_stale")
    return bool(v) and not (isinstance(v, float) and math.isnan(v))


def price_caveat(o: dict[str, Any]) -> str | None:
    """Why a price is not a firm quote, or None. Firm or not is the warehouse's verdict
    (offers_as_of: firm_price, price_caveat); a row without it counts as firm."""
    firm = o.get("firm_price")
    if firm is None or (isinstance(firm, float) and math.isnan(firm)) or bool(firm):
        return None
    caveat = o.get("price_caveat")
    return caveat if isinstance(caveat, str) and caveat else (
        "price not firm (offers_as_of.firm_price)")


def other_currency(o: dict[str, Any], currency: str) -> str | None:
    """The row's currency when it is not the ranking currency (a row not converted)."""
    cur = o.get("currency")
    return cur if isinstance(cur, str) and cur and cur != currency else None


def available(o: dict[str, Any]) -> bool | None:
    """The source's stock at the snapshot (the contract's `available`): True in stock, False
    sold out, None not published."""
    v = o.get("available")
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    try:
        return bool(v)
    except (TypeError, ValueError):  # pandas.NA
        return None


def sold_out(o: dict[str, Any]) -> bool:
    """A known sold-out offer: listed apart, never a choice (unknown stock is not sold out)."""
    return available(o) is False


def facts(o: dict[str, Any]) -> dict[str, Any]:
    """What a row says about the offer itself whatever its verdict: date, age, firm, stale,
    stock, network (staging/offer_network's net_label), country (warehouse/regions.csv) and the
    negotiated price it carries (sizing/discounts.py)."""
    age = int_or_none(o.get("age_days"))
    return dict(snapshot_date=o.get("snapshot_date"), age_days=age,
                network=network.of_offer(o).label,
                firm=price_caveat(o) is None, stale=is_stale(o),
                available=available(o),
                commitment_months=commitment_months(o), country=country(o)[0],
                negotiated=o.get("negotiated") or None,
                list_price_per_hour=price(o.get("list_price_per_hour")))


def country(o: dict[str, Any]) -> tuple[str | None, str]:
    """(ISO country or None, why) of the offer (warehouse/regions.py)."""
    region = o.get("region")
    return country_of(str(o.get("provider") or ""),
                      region if isinstance(region, str) else None, o.get("extra"))
