"""The GPU-model, change and health sections, each from one or two named warehouse questions
(warehouse/sql/marts/): this module only lays their rows out as tables."""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb

from reports.tables import Column, Table, view_rows
from warehouse.contract import PROVIDERS

TREND_WEEKS = 12
# In the weekly trend a provider's last snapshot stands for "its prices that week" for at most
# this long; older data stops the line rather than pretending to be current.
STALE_DAYS = 42
# A provider whose last good snapshot is older than this at the end of the week is stale.
HEALTH_STALE_DAYS = 7
PRICING_ORDER = ("on_demand", "spot", "community", "reserved", "committed")


def gpu_now(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str) -> tuple[Table, Table]:
    """Price per GPU-hour now per model and pricing model (gpu_prices_as_of), and each
    provider's lowest on-demand price per model with the spread (gpu_provider_lowest)."""
    stats = view_rows(con, "SELECT * FROM gpu_prices_as_of(?::DATE, ?)", end, currency)
    order = [pm for pm in PRICING_ORDER if any(r["pricing_model"] == pm for r in stats)]
    by_gpu: dict[str, dict[str, Any]] = {}
    for r in stats:
        row = by_gpu.setdefault(r["gpu_model"], dict(gpu_model=r["gpu_model"], n_offers=0,
                                                     providers=set()))
        pm = r["pricing_model"]
        if pm not in order:
            continue
        row[f"{pm}_lowest"], row[f"{pm}_median"] = r["lowest"], r["median"]
        row[f"{pm}_at"] = r["lowest_at"]
        row["n_offers"] += r["n_offers"]
        row["providers"] |= set(r["providers"])
    now_rows = [by_gpu[g] for g in sorted(by_gpu)]
    for row in now_rows:
        row["providers"] = len(row["providers"])
    cols = [Column("gpu_model", "GPU")]
    for pm in order:
        label = pm.replace("_", "-")
        cols += [Column(f"{pm}_lowest", f"{label} lowest", "money"),
                 Column(f"{pm}_median", f"{label} median", "money"),
                 Column(f"{pm}_at", "at")]
    cols += [Column("n_offers", "offers", "int"), Column("providers", "providers", "int")]
    now = Table("gpu_prices_now", f"Price per GPU-hour now ({currency}): lowest and median "
                "per pricing model", cols, now_rows,
                note="Committed and reserved prices are hourly equivalents of a term.")
    per: dict[str, dict[str, float]] = {}
    for r in view_rows(con, "SELECT * FROM gpu_provider_lowest(?::DATE, ?)", end, currency):
        per.setdefault(r["gpu_model"], {})[r["provider"]] = r["lowest"]
    providers = sorted({p for d in per.values() for p in d})
    spread_rows = []
    for gpu, d in sorted(per.items()):
        lo, hi = min(d.values()), max(d.values())
        spread_rows.append(dict(gpu_model=gpu, **{p: d.get(p) for p in providers},
                                n_providers=len(d), spread=hi / lo if lo > 0 else None))
    spread = Table("gpu_spread_on_demand",
                   f"Spread across providers: lowest on-demand price per GPU-hour ({currency})",
                   [Column("gpu_model", "GPU")]
                   + [Column(p, p, "money") for p in providers]
                   + [Column("n_providers", "providers", "int"),
                      Column("spread", "highest / lowest", "ratio")], spread_rows)
    return now, spread


def trend(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str
          ) -> tuple[Table, list[dt.date]]:
    """Weekly lowest on-demand price per GPU model over TREND_WEEKS weeks ending at `end`
    (gpu_weekly_lowest), and the week ends."""
    ends = [end - dt.timedelta(weeks=i) for i in range(TREND_WEEKS - 1, -1, -1)]
    rows = view_rows(con, "SELECT * FROM gpu_weekly_lowest(?::DATE, ?, ?, ?)", end,
                     TREND_WEEKS, currency, STALE_DAYS)
    table = Table("gpu_trend_12w",
                  f"Lowest on-demand price per GPU-hour, last {TREND_WEEKS} weeks ({currency})",
                  [Column("week_end", "week ending"), Column("gpu_model", "GPU"),
                   Column("lowest", "lowest", "money"), Column("provider", "at")], rows,
                  note=f"At each week's end, each provider's latest snapshot counts if it is at "
                       f"most {STALE_DAYS} days old.")
    return table, ends


def history(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str) -> Table:
    """Monthly lowest on-demand price per GPU model over all history (gpu_monthly_lowest)."""
    rows = view_rows(con, "SELECT * FROM gpu_monthly_lowest(?::DATE, ?)", end, currency)
    return Table("gpu_history_monthly",
                 f"Lowest on-demand price per GPU-hour by month, all history ({currency})",
                 [Column("month", "month"), Column("gpu_model", "GPU"),
                  Column("lowest", "lowest", "money"), Column("provider", "at"),
                  Column("snapshots", "snapshots", "int")], rows)


def changes(con: duckdb.DuckDBPyConnection, start: dt.date, end: dt.date, currency: str
            ) -> list[Table]:
    """The week's price changes, appeared and disappeared offers, announced prices."""
    rows = view_rows(con, "SELECT * FROM price_changes_between(?::DATE, ?::DATE, ?)",
                     start, end, currency)
    changed = Table("price_changes_week", "Biggest price changes this week", [
        Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
        Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
        Column("old_date", "was on"), Column("new_date", "changed by"),
        Column("old_gpu_hour", f"old /GPU-h {currency}", "money"),
        Column("new_gpu_hour", f"new /GPU-h {currency}", "money"),
        Column("pct_change", "change", "pct"),
    ], rows, total=len(rows))
    appeared, gone = [], []
    for r in view_rows(con, "SELECT * EXCLUDE (offer_id) FROM offer_turnover(?::DATE, ?::DATE)",
                       start, end):
        change, day = r.pop("change"), r.pop("listed_on")
        if change == "appeared":
            appeared.append(dict(r, since=day))
        else:
            gone.append(dict(r, last_seen=day))
    cols = [Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
            Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
            Column("price_per_hour", "price/h", "money"), Column("currency", "currency")]
    appeared_t = Table("offers_appeared", "Offers that appeared this week",
                       cols[:1] + [Column("since", "first seen")] + cols[1:], appeared,
                       total=len(appeared))
    gone_t = Table("offers_disappeared", "Offers that disappeared this week",
                   cols[:1] + [Column("last_seen", "last seen")] + cols[1:], gone,
                   total=len(gone))
    ann = view_rows(con, "SELECT * FROM announced_prices(?::DATE, ?)", end, currency)
    ann_t = Table("announced_prices", "Announced future prices", [
        Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
        Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
        Column("announced_on", "announced on"), Column("effective_from", "from"),
        Column("price_per_hour", "price/h", "money"), Column("currency", "currency"),
        Column("gpu_hour", f"/GPU-h {currency}", "money"),
    ], ann, total=len(ann))
    return [changed, appeared_t, gone_t, ann_t]


def health(con: duckdb.DuckDBPyConnection, start: dt.date, end: dt.date) -> Table:
    """Per provider its last good snapshot and the week's runs (provider_health), and the ECB
    rates' age (fx_rates_freshness)."""
    seen = {r["provider"]: r for r in view_rows(
        con, "SELECT * FROM provider_health(?::DATE, ?::DATE)", start, end)}
    out = []
    for p in PROVIDERS:
        h = seen.get(p, {})
        snap = h.get("last_snapshot")
        age = (end - snap).days if snap else None
        state = ("no data" if snap is None else
                 "failing" if h.get("failures") else
                 "stale" if age is not None and age > HEALTH_STALE_DAYS else "ok")
        out.append(dict(provider=p, state=state, last_snapshot=snap, rows=h.get("rows"),
                        age_days=age, runs=h.get("runs", 0), failures=h.get("failures", 0),
                        last_error=h.get("last_error")))
    last, n = con.execute("SELECT last_date, n_currencies FROM fx_rates_freshness(?::DATE)",
                          [end]).fetchone()
    fx_age = (end - last).days if last else None
    out.append(dict(provider="ecb (FX)",
                    state="ok" if last and fx_age <= HEALTH_STALE_DAYS
                    else "stale" if last else "no data",
                    last_snapshot=last, rows=n, age_days=fx_age, runs=None, failures=None,
                    last_error=None))
    return Table("data_health", "Data health per provider", [
        Column("provider", "provider"), Column("state", "state"),
        Column("last_snapshot", "last good snapshot"), Column("rows", "rows", "int"),
        Column("age_days", "age (days)", "int"), Column("runs", "runs this week", "int"),
        Column("failures", "failures this week", "int"), Column("last_error", "last error"),
    ], out, note="Rows of the last good snapshot; for ECB, currencies quoted. Age is counted "
                 "from the end of the report week.")
