"""The SQL of `gpuprices watch` rules: which offers on sale now match, which offers changed price
in their provider's latest snapshot, and how the price index moved over some days.

Plain values in, plain rows out (dicts); the rules themselves (TOML, validation, areas such as
"eu") are the caller's (flows/ops/watching.py). Values reach SQL only as parameters.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb

from gpuprices.warehouse.regions import country_of

# Fabrics that mean nothing is published between nodes (offer_networks.csv: "unknown" where the
# provider says nothing, "none" for a single machine).
UNPUBLISHED_FABRICS = ("unknown", "none")


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def as_of(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    """The warehouse's "today": its newest snapshot day (view latest_snapshot)."""
    row = con.execute("SELECT as_of FROM latest_snapshot").fetchone()
    return row[0] if row else None


_OFFERS_NOW = """
    SELECT provider, sku, region, gpu_model, gpu_count, pricing_model, commitment_months,
           effective_from, price_per_gpu_hour, currency, snapshot_date, net_fabric, extra
    FROM offers_priced_as_of((SELECT as_of FROM latest_snapshot), $currency)
    WHERE NOT is_stale AND firm_price AND price_per_gpu_hour IS NOT NULL
      AND ($gpus IS NULL OR list_contains($gpus, gpu_model))
      AND ($pricing IS NULL OR pricing_model = $pricing)
      AND ($providers IS NULL OR list_contains($providers, provider))
      AND ($below IS NULL OR price_per_gpu_hour < $below)
      AND (NOT $fabric OR (net_fabric IS NOT NULL AND NOT list_contains($unpublished, net_fabric)))
    ORDER BY price_per_gpu_hour, provider, sku, region
"""


def offers_now(con: duckdb.DuckDBPyConnection, *, gpu_models: list[str] | None = None,
               pricing: str | None = None, providers: list[str] | None = None,
               below: float | None = None, currency: str = "USD",
               countries: frozenset[str] | None = None, published_fabric: bool = False
               ) -> list[dict[str, Any]]:
    """Offers on sale as of the warehouse's day (offers_priced_as_of: not stale, firm, prices in
    `currency` per GPU-hour) matching every filter given; `countries` keeps offers whose region
    (or marketplace listing) is in one of those ISO countries (warehouse/regions.py; an unknown
    place never matches). `published_fabric`: the provider publishes the network between nodes
    (offer_network's fabric is neither unknown nor none)."""
    rows = _rows(con.execute(_OFFERS_NOW, {
        "currency": currency, "gpus": gpu_models or None, "pricing": pricing,
        "providers": providers or None, "below": below, "fabric": published_fabric,
        "unpublished": list(UNPUBLISHED_FABRICS)}))
    if countries is not None:
        rows = [r for r in rows
                if country_of(r["provider"], r["region"], r["extra"])[0] in countries]
    return rows


_LATEST_CHANGES = """
    SELECT c.offer_id, c.provider, c.sku, c.region, c.gpu_model, c.gpu_count, c.pricing_model,
           c.currency, c.old_date, c.new_date, c.old_price_per_gpu_hour,
           c.new_price_per_gpu_hour, c.pct_change
    FROM price_changes AS c
    JOIN (SELECT provider, max(snapshot_date) AS last_date FROM snapshot_dates
          GROUP BY provider) AS s ON s.provider = c.provider AND c.new_date = s.last_date
    WHERE abs(c.pct_change) >= $min_pct
      AND ($providers IS NULL OR list_contains($providers, c.provider))
      AND ($gpus IS NULL OR list_contains($gpus, c.gpu_model))
      AND ($pricing IS NULL OR c.pricing_model = $pricing)
    ORDER BY c.provider, c.gpu_model, c.sku, c.region, c.pricing_model
"""


def latest_changes(con: duckdb.DuckDBPyConnection, *, providers: list[str] | None = None,
                   gpu_models: list[str] | None = None, pricing: str | None = None,
                   min_abs_pct: float = 0.0) -> list[dict[str, Any]]:
    """Price changes (view price_changes) first seen in their provider's latest snapshot: the
    news of the last load, not the whole history."""
    return _rows(con.execute(_LATEST_CHANGES, {
        "min_pct": min_abs_pct, "providers": providers or None, "gpus": gpu_models or None,
        "pricing": pricing}))


def index_move(con: duckdb.DuckDBPyConnection, *, gpu_model: str, pricing: str = "on_demand",
               segment: str = "all", days: int = 7) -> dict[str, Any] | None:
    """The price index (price_index_daily, its latest published value per day) on its newest
    day with a value against its value `days` or more days before: {day, value, then_day,
    then_value, pct}; None when either is missing."""
    sql = """
        WITH v AS (
            SELECT day, arg_max(value_usd, published_at)::DOUBLE AS value
            FROM price_index_daily
            WHERE gpu_model = ? AND pricing_model = ? AND segment = ? AND value_usd IS NOT NULL
            GROUP BY day
        ), now AS (SELECT * FROM v ORDER BY day DESC LIMIT 1)
        SELECT now.day, now.value, t.day AS then_day, t.value AS then_value,
               100.0 * (now.value - t.value) / t.value AS pct
        FROM now, (SELECT * FROM v WHERE day <= (SELECT day FROM now) - ?::INTEGER
                   ORDER BY day DESC LIMIT 1) AS t
    """
    rows = _rows(con.execute(sql, [gpu_model, pricing, segment, days]))
    return rows[0] if rows else None
