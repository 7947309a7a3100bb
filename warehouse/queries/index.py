"""The daily GPU rental price index (price_index_daily; docs/index.md), in any currency."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpuprices.warehouse.queries.source import Source, arrow, out, reading

# Value and band converted from USD with the warehouse's fx_factor on each day (a day without a
# rate has no value).
_SQL = """
SELECT day, gpu_model, pricing_model, segment,
       round(value_usd * f, 6) AS value, round(band_low_usd * f, 6) AS band_low,
       round(band_high_usd * f, 6) AS band_high, panel, members, reason, method_version
FROM (SELECT *, fx_factor('USD', $cur, day) AS f FROM price_index_daily)
WHERE pricing_model = $pricing AND segment = $segment
  AND ($gpu IS NULL OR gpu_model = $gpu)
  AND ($from IS NULL OR day >= $from) AND ($to IS NULL OR day <= $to)
  AND ($all_days OR value_usd IS NOT NULL)
ORDER BY gpu_model, day
LIMIT $limit
"""


def price_index(source: Source, *, gpu_model: str | None = None,
                pricing_model: str = "on_demand", segment: str = "all",
                start: dt.date | None = None, end: dt.date | None = None,
                currency: str = "USD", all_days: bool = False, limit: int | None = None,
                pandas: bool = False, timeout_s: float | None = None) -> Any:
    """Per GPU model and day: the index value (interquartile mean of the members' prices per
    GPU-hour), band (25th-75th percentile), panel size, members (a JSON text) and, for a day
    without a value, the reason; `all_days` keeps the days without a value."""
    params = {"cur": currency.upper(), "pricing": pricing_model, "segment": segment,
              "gpu": gpu_model, "from": start, "to": end, "all_days": all_days, "limit": limit}
    with reading(source, timeout_s) as con:
        return out(arrow(con, _SQL, params), pandas)
