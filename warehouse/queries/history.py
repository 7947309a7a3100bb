"""How prices moved: each offer's runs of unchanged price (offer_history) and each change
(price_changes)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpuprices.warehouse.queries.source import Source, arrow, out, reading, unless_none

_HISTORY = f"""
SELECT * FROM offer_history
WHERE {unless_none("offer_id", "provider", "sku", "region", "gpu_model", "pricing_model")}
ORDER BY provider, sku, region NULLS FIRST, pricing_model, commitment_months NULLS FIRST,
         offer_id, valid_from
LIMIT $limit
"""  # noqa: S608 (our constants)

_CHANGES = f"""
SELECT * FROM price_changes
WHERE {unless_none("gpu_model", "provider", "pricing_model")}
  AND ($days IS NULL OR new_date > coalesce($as_of::DATE,
      (SELECT as_of FROM latest_snapshot)) - $days::INTEGER)
  AND new_date <= coalesce($as_of::DATE, (SELECT as_of FROM latest_snapshot))
ORDER BY new_date DESC, abs(pct_change) DESC, provider, sku, region NULLS FIRST,
         pricing_model, offer_id
LIMIT $limit
"""  # noqa: S608 (our constants)


def offer_history(source: Source, *, offer_id: int | None = None, provider: str | None = None,
                  sku: str | None = None, region: str | None = None,
                  gpu_model: str | None = None, pricing_model: str | None = None,
                  limit: int | None = None, pandas: bool = False,
                  timeout_s: float | None = None) -> Any:
    """offer_history: the runs of unchanged price (valid_from .. valid_to) of the offers the
    arguments name (an offer_id, or provider and sku, narrowed by region, GPU model, pricing
    model), oldest first per offer."""
    params = {"offer_id": offer_id, "provider": provider, "sku": sku, "region": region,
              "gpu_model": gpu_model, "pricing_model": pricing_model, "limit": limit}
    with reading(source, timeout_s) as con:
        return out(arrow(con, _HISTORY, params), pandas)


def price_changes(source: Source, *, days: int | None = 7, gpu_model: str | None = None,
                  provider: str | None = None, pricing_model: str | None = None,
                  as_of: dt.date | None = None, limit: int | None = None,
                  pandas: bool = False, timeout_s: float | None = None) -> Any:
    """price_changes whose new price was first seen in the `days` days up to `as_of` (default:
    the warehouse's today, latest_snapshot.as_of; days=None: all), newest first, largest move
    first within a day."""
    params = {"gpu_model": gpu_model, "provider": provider, "pricing_model": pricing_model,
              "days": days, "as_of": as_of, "limit": limit}
    with reading(source, timeout_s) as con:
        return out(arrow(con, _CHANGES, params), pandas)
