"""The "Rent, reserve or own" section: for each sustained demand of sizing/demands.toml, the
monthly cost of on-demand, spot, each committed term and owning, with the utilisation above
which each beats on-demand.

The prices are the warehouse's (gpu_terms_as_of: the cheapest firm, fresh offer of each pricing
model and term on the day, in the report currency); the arithmetic is
gpuprices.sizing.rent_or_own's. `gpuprices compare` reads through `compare_demands` too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import duckdb

from gpuprices.reports.tables import Column, Table, view_rows
from gpuprices.sizing import discounts as negotiated
from gpuprices.sizing.rent_or_own import (
    EXAMPLE_DEMANDS,
    Demand,
    TermPrice,
    compare,
    load_demands,
    ownership_for,
)
from gpuprices.warehouse import queries

COLUMNS = [Column("demand", "demand"), Column("option", "option"),
           Column("source", "cheapest offer"), Column("monthly_cost", "per month", "money"),
           Column("fixed_monthly", "fixed per month", "money"),
           Column("break_even_hours_per_week", "cheaper than on-demand above (h/week)", "num"),
           Column("break_even_pct", "break-even utilisation (%)", "num"),
           Column("reason", "why")]


def term_prices(con: duckdb.DuckDBPyConnection, day: dt.date, currency: str,
                max_age_days: int, discounts: Sequence[negotiated.Discount] = (),
                today: dt.date | None = None
                ) -> tuple[dict[str, list[TermPrice]], float | None]:
    """gpu model -> the cheapest firm offer of each pricing model and term on `day`, and the
    USD -> currency factor of the day (None without a rate) for the ownership figures. With
    `discounts` (sizing/discounts.py) the offers are priced at the negotiated prices in force
    on `today` first, then the cheapest taken as gpu_terms_as_of takes it."""
    usd = queries.usd_factor(con, currency, day)
    if discounts:
        rows = _negotiated_terms(con, day, currency, max_age_days, discounts, today, usd)
    else:
        rows = view_rows(con, "SELECT * FROM gpu_terms_as_of(?::DATE, ?, ?)",
                         day, currency, max_age_days)
    out: dict[str, list[TermPrice]] = {}
    for r in rows:
        out.setdefault(r["gpu_model"], []).append(TermPrice(
            r["pricing_model"], r["commitment_months"], float(r["lowest"]), r["lowest_at"],
            r["sku"], r["lowest_snapshot_date"]))
    return out, usd


def _negotiated_terms(con: duckdb.DuckDBPyConnection, day: dt.date, currency: str,
                      max_age_days: int, discounts: Sequence[negotiated.Discount],
                      today: dt.date | None, usd: float | None) -> list[dict[str, Any]]:
    """gpu_terms_as_of's rows (the lowest firm, fresh price per GPU-hour per GPU model, pricing
    model and term) over the offers at their negotiated prices."""
    offers = sorted((o for o in queries.rows(queries.priced_offers(con, day, currency,
                                                                    max_age_days))
                     if o["price_per_gpu_hour"] is not None and o["gpu_model"] is not None
                     and o["firm_price"] and not o["is_stale"]),
                    key=lambda o: (o["provider"], o["sku"], o["region"] is None,
                                   o["region"] or ""))  # SQL's order: NULL region last
    priced, _ = negotiated.apply(offers, discounts, today or dt.date.today(), currency, usd)
    best: dict[tuple, dict[str, Any]] = {}
    for o in priced:
        key = (o["gpu_model"], o["pricing_model"], o["commitment_months"])
        if key not in best or o["price_per_gpu_hour"] < best[key]["lowest"]:
            best[key] = dict(gpu_model=o["gpu_model"], pricing_model=o["pricing_model"],
                             commitment_months=o["commitment_months"],
                             lowest=o["price_per_gpu_hour"], lowest_at=o["provider"],
                             sku=o["sku"] + (" (negotiated)" if o.get("negotiated") else ""),
                             lowest_snapshot_date=o["snapshot_date"])
    return list(best.values())


def compare_demands(con: duckdb.DuckDBPyConnection, day: dt.date, currency: str,
                    demands: Sequence[Demand], max_age_days: int,
                    discounts: Sequence[negotiated.Discount] = (),
                    today: dt.date | None = None) -> list[dict[str, Any]]:
    """gpuprices.sizing.rent_or_own.compare of each demand at the day's prices, in `currency`
    (at the negotiated prices of `discounts` in force on `today`)."""
    prices, usd = term_prices(con, day, currency, max_age_days, discounts, today)
    out = []
    for d in demands:
        result = compare(d, prices.get(d.gpu_model, []), ownership_for(d.gpu_model, d.own),
                         usd)
        out.append({"as_of": str(day), "currency": currency, **result})
    return out


def rent_or_own_table(results: list[dict[str, Any]], currency: str) -> Table:
    rows = []
    for res in results:
        for o in res["options"]:
            share = o["break_even_utilisation"]
            rows.append({"demand": res["demand"], **o,
                         "break_even_pct": None if share is None else share * 100,
                         "reason": "; ".join(o["notes"] + (
                             ["cheapest for this demand"] if o["option"] == res["cheapest"]
                             else []))})
        for n in res["notes"]:
            rows.append({"demand": res["demand"], "option": "—", "reason": n})
    return Table("rent_reserve_own", "Monthly cost of each sustained demand, and where it breaks "
                 "even with on-demand", COLUMNS, rows, note=(
        f"Monthly cost in {currency} of each sustained demand (sizing/demands.toml) at the "
        "cheapest firm offer of each kind; committed terms are paid for every hour of the term; "
        "owning uses sizing/ownership_defaults.csv (sources and dates in docs/buying.md). "
        "Break-even: the hours per week above which the option costs less than on-demand "
        "(— never within 168 h)."))


def section(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str, max_age_days: int,
            demands: Sequence[Demand] | None = None,
            discounts: Sequence[negotiated.Discount] = (),
            today: dt.date | None = None) -> Table:
    """The report's table for `demands` (default: the shipped sizing/demands.toml)."""
    demands = load_demands(EXAMPLE_DEMANDS) if demands is None else demands
    return rent_or_own_table(compare_demands(con, end, currency, demands, max_age_days,
                                             discounts, today), currency)
