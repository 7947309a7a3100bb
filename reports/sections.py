"""The GPU-model, change and health sections, each from one or two named warehouse questions
(warehouse/sql/marts/): this module only lays their rows out as tables."""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb

from gpuprices.reports.tables import Column, Table, provider_supply, view_rows
from gpuprices.warehouse.contract import PROVIDERS
from gpuprices.warehouse.states import provider_state

TREND_WEEKS = 12
# ECB rates older than this at the end of the week are stale (the ECB publishes every working
# day). Providers follow the report's age limit (max_age_days, offers_as_of).
FX_STALE_DAYS = 7
PRICING_ORDER = ("on_demand", "spot", "community", "reserved", "committed")


def gpu_now(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str, max_age: int
            ) -> tuple[Table, Table]:
    """Price per GPU-hour now per model and pricing model (gpu_prices_as_of), and each
    provider's lowest on-demand price per model with the spread (gpu_provider_lowest): firm
    prices of offers at most `max_age` days old only, each lowest with its snapshot date."""
    stats = view_rows(con, "SELECT * FROM gpu_prices_as_of(?::DATE, ?, ?)", end, currency,
                      max_age)
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
        row[f"{pm}_on"] = r["lowest_snapshot_date"]
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
                 Column(f"{pm}_at", "at"), Column(f"{pm}_on", "as of")]
    cols += [Column("n_offers", "offers", "int"), Column("providers", "providers", "int")]
    now = Table("gpu_prices_now", f"Price per GPU-hour now ({currency}): lowest and median "
                "per pricing model", cols, now_rows,
                note=f"Firm prices only, from each provider's latest snapshot on or before {end} "
                     f"if it is at most {max_age} days old; 'as of' is the snapshot date of the "
                     "lowest. Placeholders, 'from' floors, announced and stale prices are listed "
                     "apart below. Committed and reserved prices are hourly equivalents of a "
                     "term.")
    per: dict[str, dict[str, float]] = {}
    oldest: dict[str, dt.date] = {}
    for r in view_rows(con, "SELECT * FROM gpu_provider_lowest(?::DATE, ?, ?)", end, currency,
                       max_age):
        per.setdefault(r["gpu_model"], {})[r["provider"]] = r["lowest"]
        oldest[r["gpu_model"]] = min(oldest.get(r["gpu_model"], end), r["snapshot_date"])
    providers = sorted({p for d in per.values() for p in d})
    supply = provider_supply(con)
    spread_rows = []
    for gpu, d in sorted(per.items()):
        lo, hi = min(d.values()), max(d.values())
        spread_rows.append(dict(gpu_model=gpu, **{p: d.get(p) for p in providers},
                                n_providers=len(d), spread=hi / lo if lo > 0 else None,
                                oldest=oldest[gpu]))
    spread = Table("gpu_spread_on_demand",
                   f"Spread across providers: lowest on-demand price per GPU-hour ({currency})",
                   [Column("gpu_model", "GPU")]
                   + [Column(p, f"{p} ({supply[p]})" if p in supply else p, "money")
                      for p in providers]
                   + [Column("n_providers", "providers", "int"),
                      Column("spread", "highest / lowest", "ratio"),
                      Column("oldest", "oldest snapshot")], spread_rows,
                   note="Firm prices of snapshots within the age limit, as above; 'oldest "
                        "snapshot' is the date of the oldest price in the row.")
    return now, spread


def set_apart(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str, max_age: int
              ) -> tuple[Table, Table]:
    """The offers kept out of every figure (offers_set_apart): prices that are not firm, one
    row per offer, and stale providers, one row per provider with its last snapshot's date."""
    rows = view_rows(con, "SELECT * FROM offers_set_apart(?::DATE, ?, ?)", end, currency,
                     max_age)
    not_firm = Table("prices_not_firm", "Not firm prices (not in any figure)", [
        Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
        Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
        Column("gpu_hour", f"/GPU-h {currency}", "money"), Column("snapshot_date", "as of"),
        Column("age_days", "age (days)", "int"), Column("why", "why"),
    ], [r for r in rows if r["kind"] == "not firm"],
        note="Prices the parser flagged as a likely placeholder or gave as a 'from' floor, and "
             "aggregators' listings of a cloud whose own prices are read first-party ('via "
             "Shadeform from Lambda': the same machine, counted under that cloud): shown for "
             "reference, never a lowest, spread, trend or recommendation.")
    stale = Table("offers_stale", "Stale offers (not recommended)", [
        Column("provider", "provider"), Column("snapshot_date", "last snapshot"),
        Column("age_days", "age (days)", "int"), Column("offers", "offers", "int"),
        Column("why", "why"),
    ], [r for r in rows if r["kind"] == "stale"],
        note=f"Providers whose latest snapshot on or before {end} is more than {max_age} days "
             "old: their offers are left out of every figure and recommendation.")
    return not_firm, stale


def _joined_providers(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with their `providers` list as one comma-separated text (tables and CSV)."""
    return [dict(r, providers=", ".join(r["providers"])) for r in rows]


def trend(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str, max_age: int
          ) -> tuple[Table, list[dt.date]]:
    """Weekly lowest firm on-demand price per GPU model over TREND_WEEKS weeks ending at `end`
    (gpu_weekly_lowest, with the providers behind each point), and the week ends."""
    ends = [end - dt.timedelta(weeks=i) for i in range(TREND_WEEKS - 1, -1, -1)]
    rows = view_rows(con, "SELECT * FROM gpu_weekly_lowest(?::DATE, ?, ?, ?)", end,
                     TREND_WEEKS, currency, max_age)
    table = Table("gpu_trend_12w",
                  f"Lowest on-demand price per GPU-hour, last {TREND_WEEKS} weeks ({currency})",
                  [Column("week_end", "week ending"), Column("gpu_model", "GPU"),
                   Column("lowest", "lowest", "money"), Column("provider", "at"),
                   Column("providers", "from providers")], _joined_providers(rows),
                  note=f"At each week's end, each provider's latest snapshot counts only if it is "
                       f"at most {max_age} days old, and only firm prices count. A line is "
                       "broken where the providers behind it change or a week has no point, so "
                       "a snapshot ageing out is never drawn as a price move.")
    return table, ends


def history(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str) -> Table:
    """Monthly lowest firm on-demand price per GPU model over all history (gpu_monthly_lowest),
    with the providers read each month."""
    rows = view_rows(con, "SELECT * FROM gpu_monthly_lowest(?::DATE, ?)", end, currency)
    return Table("gpu_history_monthly",
                 f"Lowest on-demand price per GPU-hour by month, all history ({currency})",
                 [Column("month", "month"), Column("gpu_model", "GPU"),
                  Column("lowest", "lowest", "money"), Column("provider", "at"),
                  Column("snapshots", "snapshots", "int"),
                  Column("providers", "from providers")], _joined_providers(rows))


def _too_far_apart(con: duckdb.DuckDBPyConnection, start: dt.date, end: dt.date,
                   max_age: int) -> tuple[str, str]:
    """What the week's change tables leave out: price differences against a snapshot more than
    `max_age` days older, and the providers whose offers were not compared (snapshots too far
    apart, or a partial capture on one side): two sentences, each '' when there is nothing."""
    diffs = view_rows(con, "SELECT provider, min(old_date) AS since, count(*) AS n "
                           "FROM price_changes WHERE new_date BETWEEN ?::DATE AND ?::DATE "
                           "AND gap_days > ? GROUP BY provider ORDER BY provider",
                      start, end, max_age)
    pairs = view_rows(con, "SELECT * FROM week_snapshot_pairs(?::DATE, ?::DATE, "
                           "max_age_days := ?) WHERE NOT comparable ORDER BY provider",
                      start, end, max_age)
    price = (f"Not counted (against a snapshot more than {max_age} days older, the age limit: "
             "not a change of this week; the view price_changes lists them): " + "; ".join(
                 f"{r['provider']} {r['n']} price differences, against prices as old as "
                 f"{r['since']}" for r in diffs) + ".") if diffs else ""
    turnover = ("Not compared: " + "; ".join(
        f"{r['provider']} ({r['new_date']} against {r['old_date']}, {r['gap_days']} days apart)"
        for r in pairs) + f": snapshots more than {max_age} days apart (the age limit) make no "
        "offer appear or disappear.") if pairs else ""
    partial = view_rows(con, "SELECT * FROM week_snapshot_pairs(?::DATE, ?::DATE, "
                             "max_age_days := ?) WHERE comparable AND (old_partial IS NOT NULL "
                             "OR new_partial IS NOT NULL) ORDER BY provider", start, end, max_age)
    if partial:
        turnover = " ".join(t for t in (turnover, "Partial captures (offers absent from them "
            "were not read: none appears or disappears against them): " + "; ".join(
                f"{r['provider']} {day} ({why})" for r in partial
                for day, why in ((r["old_date"], r["old_partial"]),
                                 (r["new_date"], r["new_partial"])) if why) + ".") if t)
    return price, turnover


def changes(con: duckdb.DuckDBPyConnection, start: dt.date, end: dt.date, currency: str,
            max_age: int) -> list[Table]:
    """The week's price changes, appeared and disappeared offers, pricing added to or withdrawn
    from machines listed on both days (between snapshots at most `max_age` days apart: older
    ones are named in the tables' notes, never counted), announced prices."""
    rows = view_rows(con, "SELECT * FROM price_changes_between(?::DATE, ?::DATE, ?, "
                          "max_age_days := ?)", start, end, currency, max_age)
    price_note, turnover_note = _too_far_apart(con, start, end, max_age)
    changed = Table("price_changes_week", "Biggest price changes this week", [
        Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
        Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
        Column("old_date", "was on"), Column("new_date", "changed by"),
        Column("old_gpu_hour", f"old /GPU-h {currency}", "money"),
        Column("new_gpu_hour", f"new /GPU-h {currency}", "money"),
        Column("pct_change", "change", "pct"),
    ], rows, total=len(rows), note=price_note)
    appeared, gone, pricing = [], [], []
    for r in view_rows(con, "SELECT * EXCLUDE (offer_id) FROM offer_turnover(?::DATE, ?::DATE, "
                            "max_age_days := ?)", start, end, max_age):
        change, day = r.pop("change"), r.pop("listed_on")
        r["age_days"] = (end - day).days
        if change == "appeared":
            appeared.append(dict(r, since=day))
        elif change == "disappeared":
            gone.append(dict(r, last_seen=day))
        else:  # a price column added to or dropped from a machine listed on both days
            pricing.append(dict(r, change=change.replace("_", " "), listed_on=day))
    cols = [Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
            Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
            Column("price_per_hour", "price/h", "money"), Column("currency", "currency")]
    age = [Column("age_days", "age (days)", "int")]
    appeared_t = Table("offers_appeared", "Offers that appeared this week",
                       cols[:1] + [Column("since", "first seen")] + age + cols[1:], appeared,
                       total=len(appeared), note=turnover_note)
    gone_t = Table("offers_disappeared", "Offers that disappeared this week",
                   cols[:1] + [Column("last_seen", "last seen")] + age + cols[1:], gone,
                   total=len(gone), note=turnover_note)
    pricing_t = Table("pricing_added_or_withdrawn",
                      "New or withdrawn pricing of offers listed before and after", [
                          Column("change", "change"), *cols[:1],
                          Column("listed_on", "listed on"), *age, *cols[1:]],
                      pricing, total=len(pricing),
                      note="The same machine (SKU, region, GPU and count) was listed on both "
                           "days; only a way to pay for it (pricing model, term, variant, "
                           "currency or announced price) came or went: not a new or withdrawn "
                           "offer." + (f" {turnover_note}" if turnover_note else ""))
    ann = view_rows(con, "SELECT * FROM announced_prices(?::DATE, ?)", end, currency)
    ann_t = Table("announced_prices", "Announced future prices", [
        Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
        Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
        Column("announced_on", "announced on"), Column("age_days", "age (days)", "int"),
        Column("effective_from", "from"),
        Column("price_per_hour", "price/h", "money"), Column("currency", "currency"),
        Column("gpu_hour", f"/GPU-h {currency}", "money"),
    ], ann, total=len(ann), note="Not in force yet: never part of a lowest, spread, trend or "
                                 "cheapest figure.")
    return [changed, appeared_t, gone_t, pricing_t, ann_t]


def health(con: duckdb.DuckDBPyConnection, start: dt.date, end: dt.date, max_age: int
           ) -> Table:
    """Per provider its last good snapshot, its age and whether it is stale (older than
    `max_age` days at the week's end), and the week's runs (provider_health), "interrupted" when
    a run that set out to read it never finished; the ECB rates' age (fx_rates_freshness)."""
    seen = {r["provider"]: r for r in view_rows(
        con, "SELECT * FROM provider_health(?::DATE, ?::DATE, ?)", start, end, max_age)}
    supply = provider_supply(con)
    out = []
    for p in PROVIDERS:
        h = seen.get(p, {})
        snap = h.get("last_snapshot")
        # A week without runs is judged by the snapshot it serves: fresh is ok, old is stale.
        runs = h.get("statuses") or (("ok",) if snap else ())
        state = provider_state(runs, h.get("age_days"), max_age,
                               interrupted=bool(h.get("interrupted")))
        # A run that never finished is news even beside a failure: its rows look complete.
        cut = (f"run {h['last_interrupted']} was interrupted (started, never finished)"
               if h.get("interrupted") else None)
        out.append(dict(provider=p, supply=supply.get(p), state=state, last_snapshot=snap,
                        rows=h.get("rows"), age_days=h.get("age_days"), runs=h.get("runs", 0),
                        failures=h.get("failures", 0),
                        last_error="; ".join(e for e in (h.get("last_error"), cut) if e)
                        or None))
    last, n = con.execute("SELECT last_date, n_currencies FROM fx_rates_freshness(?::DATE)",
                          [end]).fetchone()
    fx_age = (end - last).days if last else None
    out.append(dict(provider="ecb (FX)",
                    state="ok" if last and fx_age <= FX_STALE_DAYS
                    else "stale" if last else "no data",
                    last_snapshot=last, rows=n, age_days=fx_age, runs=None, failures=None,
                    last_error=None))
    return Table("data_health", "Data health per provider", [
        Column("provider", "provider"), Column("supply", "seller"), Column("state", "state"),
        Column("last_snapshot", "last good snapshot"), Column("rows", "rows", "int"),
        Column("age_days", "age (days)", "int"), Column("runs", "runs this week", "int"),
        Column("failures", "failures this week", "int"), Column("last_error", "last error"),
    ], out, note="State: ok, degraded, failed (a run failed this week), stale or not run (no "
                 "run this week and no snapshot). Rows of the last good snapshot; for ECB, "
                 "currencies quoted. "
                 "Age is counted from the end of the report week; a provider is stale when its "
                 f"last good snapshot is more than {max_age} days old (its offers are then in no "
                 "figure), "
                 f"the ECB rates when they are more than {FX_STALE_DAYS} days old.")
