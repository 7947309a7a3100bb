"""What one can rent now: every offer (latest_offers), the cheapest per GPU model and pricing
model (cheapest_now), and the offers priced in one currency for a ranking
(offers_priced_as_of)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa

from gpuprices.warehouse.queries.source import Source, arrow, out, reading, unless_none
from gpuprices.warehouse.regions import country_of

# Whole statements, parameters only (composed once, from our own column names: no caller's text
# ever reaches SQL): a None parameter does not filter.
_FILTERS = unless_none("gpu_model", "provider", "pricing_model")
_CHEAPEST = f"""
SELECT * FROM cheapest_now
WHERE {_FILTERS}
ORDER BY price_per_gpu_hour_usd NULLS LAST, gpu_model, pricing_model
LIMIT $limit
"""  # noqa: S608 (our constants)

# The country is read in Python (regions.csv): with a country filter the limit applies after it.
# fx_factor once per currency and snapshot date, not per row: a third of the time of /offers/now
# (bench/api_load.py).
_OFFERS = f"""
WITH o AS (
    SELECT * FROM latest_offers
    WHERE {_FILTERS} AND {unless_none("region")}
),
usd AS (
    SELECT currency, snapshot_date, fx_factor(currency, 'USD', snapshot_date) AS factor
    FROM (SELECT DISTINCT currency, snapshot_date FROM o)
)
SELECT o.*, o.price_per_gpu_hour * usd.factor AS price_per_gpu_hour_usd
FROM o LEFT JOIN usd USING (currency, snapshot_date)
ORDER BY gpu_model, pricing_model, price_per_gpu_hour_usd NULLS LAST, provider, sku,
         region NULLS FIRST, commitment_months NULLS FIRST, raw_sha256
LIMIT $limit
"""  # noqa: S608 (our constants)


def _filters(gpu_model: str | None, provider: str | None, pricing_model: str | None
             ) -> dict[str, Any]:
    return {"gpu_model": gpu_model, "provider": provider, "pricing_model": pricing_model}


def cheapest_now(source: Source, *, gpu_model: str | None = None,
                 pricing_model: str | None = None, provider: str | None = None,
                 limit: int | None = None, pandas: bool = False,
                 timeout_s: float | None = None) -> Any:
    """cheapest_now: per GPU model and pricing model the cheapest firm, fresh offer (USD and
    EUR per GPU-hour, its snapshot date and age), cheapest first."""
    with reading(source, timeout_s) as con:
        t = arrow(con, _CHEAPEST, {**_filters(gpu_model, provider, pricing_model), "limit": limit})
    return out(t, pandas)


def offers_now(source: Source, *, gpu_model: str | None = None, provider: str | None = None,
               pricing_model: str | None = None, region: str | None = None,
               country: str | None = None, limit: int | None = None, pandas: bool = False,
               timeout_s: float | None = None) -> Any:
    """latest_offers (each provider's latest snapshot; stale, announced and not-firm prices
    included and flagged), with the price per GPU-hour in USD at the offer's snapshot date and
    the ISO country of its region (warehouse/regions.py; None when unknown), cheapest first
    within each GPU model and pricing model. `country` keeps offers whose country is known to be
    that one."""
    params = {**_filters(gpu_model, provider, pricing_model), "region": region,
              "limit": None if country else limit}
    with reading(source, timeout_s) as con:
        t = arrow(con, _OFFERS, params)
    countries = [country_of(p, r, e)[0] for p, r, e in
                 zip(t["provider"].to_pylist(), t["region"].to_pylist(),
                     t["extra"].to_pylist(), strict=True)]
    t = t.append_column("country", pa.array(countries, pa.string()))
    if country:
        t = t.filter(pa.array([c == country.upper() for c in countries]))
        if limit is not None:
            t = t.slice(0, limit)
    return out(t, pandas)


def warehouse_today(source: Source) -> dt.date:
    """The warehouse's "now": latest_snapshot.as_of. ValueError when it holds no offers."""
    with reading(source) as con:
        row = con.execute("SELECT as_of FROM latest_snapshot").fetchall()[0]
    if not row or row[0] is None:
        raise ValueError("the warehouse holds no offers")
    return row[0]


def priced_offers(source: Source, day: dt.date, currency: str = "USD",
                  max_age_days: int = 14, *, pandas: bool = False,
                  timeout_s: float | None = None) -> Any:
    """offers_priced_as_of: what one could rent on `day` (each provider's latest snapshot on or
    before it, is_stale past `max_age_days`), priced in `currency`; in a fixed order, so that
    equal costs always rank the same way round. What `rank`, the report and POST /rank rank."""
    with reading(source, timeout_s) as con:
        t = arrow(con, "SELECT * FROM offers_priced_as_of($day::DATE, $currency, $max_age)"
                       " ORDER BY ALL",
                  {"day": day, "currency": currency, "max_age": max_age_days})
    return out(t, pandas)


def usd_factor(source: Source, currency: str, day: dt.date) -> float | None:
    """USD -> `currency` on `day` (fx_factor; None without a rate)."""
    with reading(source) as con:
        return con.execute("SELECT fx_factor('USD', ?, ?::DATE)", [currency, day]).fetchall()[0][0]
