"""E2E's INR list prices against its USD table, through the one FX path.

The parser keeps the JSON-LD's INR hourly price on each on-demand row
(`extra.inr_price_per_hour`); this converts it to USD at the ECB rate in force on the row's
snapshot date (spiders/fx.py `convert`: INR -> EUR -> USD, the warehouse's fx_factor rule) and
says how far the USD table price stands from it. A missing INR rate is fx.FxRateMissing, a clear
error naming the currency and the day, never a 1:1 conversion.

On the 2026-08-22 capture (ECB rates of 2026-08-21: 111.9595 INR and 1.1699 USD per euro) the
two lists agree within 0.4 % for B200, H200, H100 and RTX PRO 6000 (B200 671 INR = $7.011
beside $6.99) but not for the older chips: A100 +5.9 / +6.3 %, L4 +11.3 %, L40S +12.6 %, A40 and
A30 +43.6 % dearer in USD. They are two price lists, which is why the USD table is the offer and
the INR figure a reference, never a second row.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuprices.spiders import fx
from gpuprices.warehouse.contract import Offer


@dataclass(frozen=True)
class InrCheck:
    sku: str
    inr_per_hour: float
    usd_per_hour: float  # the USD table's price (the offer)
    usd_at_ecb: float  # the INR list price converted at the ECB rate of the day
    deviation_pct: float  # (USD table - converted INR) / converted INR x 100


def inr_cross_check(offers: list[Offer], rates: fx.RateBook) -> list[InrCheck]:
    """One check per on-demand row that carries an INR list price. `rates` is
    fx.archived_rates(archive)[0]. Raises fx.FxRateMissing when INR or USD has no ECB rate on
    or before the row's snapshot date."""
    out = []
    for o in offers:
        inr = o.extra.get("inr_price_per_hour")
        if inr is None or o.pricing_model != "on_demand":
            continue
        usd = fx.convert(float(inr), "INR", o.currency, o.snapshot_date, rates)
        out.append(InrCheck(o.sku, float(inr), o.price_per_hour, usd,
                            (o.price_per_hour - usd) / usd * 100))
    return out
