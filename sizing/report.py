"""The weekly procurement report: where to rent this week, and what changed.

`build_report(con, week, currency, workloads)` reads the warehouse (offers, fx_rates, runs and the
views) into plain tables; `write_report(...)` writes `<out>/<week>/report.html` (one
self-contained file: inline CSS and SVG charts, no script), `report.md` and one CSV per table.

"Now" in a report is the end of its ISO week (Sunday): each provider's latest snapshot on or
before that day. Every price is converted to the report currency with the ECB rate of its own
snapshot date (the latest fx_rates row on or before it; ECB rates are units per euro, so a
USD price goes USD -> EUR -> report currency). A price that cannot be converted (no rate yet) is
left out of the price tables and counted.

The workload section calls one function, `rank_for_report`, which wraps sizing.rank.rank.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import duckdb
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from sizing.rank import rank as sizing_rank
from sizing.workload import Workload
from warehouse.contract import PROVIDERS

TEMPLATES = Path(__file__).parent / "templates"
TREND_WEEKS = 12
# In the weekly trend a provider's last snapshot stands for "its prices that week" for at most
# this long; older data stops the line rather than pretending to be current.
STALE_DAYS = 42
TOP_OFFERS = 10
TOP_CHANGES = 25
LIST_LIMIT = 40  # appeared / disappeared / announced rows listed (all are in the CSVs)
CHART_SERIES = 8  # lines per chart: more are unreadable
FAILED_STATUSES = ("failed", "degraded", "stale")


# ---------------------------------------------------------------------------------------------
# weeks


def iso_week(day: dt.date) -> str:
    y, w, _ = day.isocalendar()
    return f"{y}-W{w:02d}"


def week_bounds(week: str) -> tuple[dt.date, dt.date]:
    """'2026-W48' -> (Monday, Sunday)."""
    try:
        year, num = week.upper().split("-W")
        monday = dt.date.fromisocalendar(int(year), int(num), 1)
    except ValueError:
        raise ValueError(f"week {week!r} is not YYYY-Www (e.g. 2026-W48)") from None
    return monday, monday + dt.timedelta(days=6)


def latest_week(con: duckdb.DuckDBPyConnection) -> str:
    """The ISO week of the newest snapshot in the warehouse."""
    day = con.execute("SELECT max(snapshot_date) FROM snapshot_dates").fetchone()[0]
    if day is None:
        raise ValueError("the warehouse holds no offers: run `gpuprices nightly` first")
    return iso_week(day)


# ---------------------------------------------------------------------------------------------
# tables


@dataclass
class Column:
    key: str
    label: str
    kind: str = "text"  # text | money | pct | int | num | date | ratio


@dataclass
class Table:
    name: str  # CSV file stem
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    note: str = ""
    total: int | None = None  # rows before a display limit

    def shown(self, limit: int | None = None) -> list[dict[str, Any]]:
        return self.rows if limit is None else self.rows[:limit]


def fmt(value: Any, kind: str, currency: str = "") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if kind == "money":
        v = float(value)
        return f"{v:,.4f}" if abs(v) < 10 else f"{v:,.2f}"
    if kind == "pct":
        return f"{float(value):+.1f}%"
    if kind == "int":
        return f"{int(value):,}"
    if kind == "num":
        return f"{float(value):,.1f}"
    if kind == "ratio":
        return f"×{float(value):.2f}"
    return str(value)


# ---------------------------------------------------------------------------------------------
# SQL


def _fx_sql(src: str, date_col: str = "snapshot_date", cur_col: str = "currency") -> str:
    """`src` (a relation with a date and a currency column) plus `fx`: the factor that turns an
    amount in its currency into $cur, as of that date. NULL when a rate is missing."""
    return f"""
    SELECT s.*,
        CASE
            WHEN s.{cur_col} = $cur THEN 1.0
            ELSE (CASE WHEN $cur = 'EUR' THEN 1.0 ELSE dst.rate_per_eur END)
                 / (CASE WHEN s.{cur_col} = 'EUR' THEN 1.0 ELSE srcfx.rate_per_eur END)
        END AS fx
    FROM ({src}) AS s
    ASOF LEFT JOIN fx_rates AS srcfx
        ON srcfx.currency = s.{cur_col} AND srcfx.date <= s.{date_col}
    ASOF LEFT JOIN (SELECT date, rate_per_eur FROM fx_rates WHERE currency = $cur) AS dst
        ON dst.date <= s.{date_col}
    """  # noqa: S608 (identifiers are ours; values are parameters)


_ASOF_OFFERS = """
    SELECT o.* FROM offers AS o
    JOIN (SELECT provider, max(snapshot_date) AS snapshot_date FROM snapshot_dates
          WHERE snapshot_date <= $end GROUP BY provider) AS l
    USING (provider, snapshot_date)
"""


def _records(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]
             ) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _used(sql: str, params: dict[str, Any]) -> dict[str, Any]:
    # DuckDB refuses named parameters that a statement does not use.
    return {k: v for k, v in params.items() if f"${k}" in sql}


def _q(con: duckdb.DuckDBPyConnection, sql: str, **params: Any) -> list[dict[str, Any]]:
    return _records(con, sql, _used(sql, params))


# ---------------------------------------------------------------------------------------------
# workloads


def rank_for_report(workloads: Sequence[Workload], offers: list[dict[str, Any]], currency: str,
                    fx: dict[str, float]) -> dict[str, list[dict[str, Any]]]:
    """{workload: rows best first} with RankRow fields. The one place the report calls the
    sizing engine: adapt here if sizing.rank's API changes."""
    rates = dict(fx, EUR=1.0)
    usd = rates[currency] / rates["USD"] if currency in rates and "USD" in rates else None
    ranked = sizing_rank(list(workloads), offers, currency=currency, usd_to_currency=usd)
    # Shallow: dataclasses.asdict deep-copies every row's inputs, the slowest part of a report.
    return {name: [{f.name: getattr(r, f.name) for f in fields(r)} for r in rows]
            for name, rows in ranked.items()}


def _group_offers(offers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One representative (the cheapest) per purchasable configuration of a provider: regions
    that sell the same SKU on the same terms rank identically except for price, so ranking the
    cheapest of each group gives the same top offers at a fraction of the work."""
    groups: dict[tuple, dict[str, Any]] = {}
    for o in offers:
        extra = o.get("extra") or ""
        band = ""
        if isinstance(extra, str) and "interruption_band" in extra:
            band = extra  # per-region spot risk: keep regions apart
        key = (o["provider"], o["sku"], o["gpu_model"], o["gpu_count"], o["pricing_model"],
               o.get("commitment_months"), o.get("billing_increment_s"),
               o.get("min_billing_s"), o.get("interconnect"), band)
        g = groups.get(key)
        if g is None:
            groups[key] = g = dict(o, n_regions=0, regions=set())
        g["n_regions"] += 1
        if o.get("region"):
            g["regions"].add(o["region"])
        if o["price_per_hour"] < g["price_per_hour"]:
            keep = (g["n_regions"], g["regions"])
            g.update(o)
            g["n_regions"], g["regions"] = keep
    return list(groups.values())


def _workload_tables(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str,
                     workloads: Sequence[Workload], rank_fn: Callable[..., Any]
                     ) -> tuple[list[dict[str, Any]], list[str]]:
    sql = _fx_sql(_ASOF_OFFERS + " WHERE o.effective_from IS NULL "
                  "OR o.effective_from <= o.snapshot_date")
    rows = _q(con, sql, end=end, cur=currency)
    notes = []
    priced = []
    unconverted = 0
    for r in rows:
        if r["fx"] is None:
            unconverted += 1
            continue
        r = dict(r)
        r["price_per_hour"] = r["price_per_hour"] * r["fx"]
        r["price_per_gpu_hour"] = r["price_per_gpu_hour"] * r["fx"]
        r["currency"] = currency
        priced.append(r)
    if unconverted:
        notes.append(f"{unconverted} offers have no exchange rate to {currency} on their "
                     "snapshot date and are not ranked.")
    fx_rows = con.execute(
        "SELECT currency, arg_max(rate_per_eur, date) FROM fx_rates WHERE date <= ? "
        "GROUP BY currency", [end]).fetchall()
    fx = {c: float(v) for c, v in fx_rows}
    reps = _group_offers(priced)
    ranked = rank_fn(workloads, reps, currency, fx) if reps and workloads else {}
    sections = []
    for w in workloads:
        wrows = ranked.get(w.name, [])
        lookup = {(r["provider"], r["sku"], r.get("region"), r["pricing_model"],
                   r["gpu_model"]): r for r in reps}
        ok, bad = [], []
        for row in wrows:
            rep = lookup.get((row["provider"], row["sku"], row.get("region"),
                              row["pricing_model"], row["gpu_model"]), {})
            row = dict(row, n_regions=rep.get("n_regions", 1),
                       layout=f"{row['nodes']}×{row['gpus_per_node']} {row['gpu_model']}",
                       offer=f"{row['provider']} {row['sku']}")
            (ok if row["verdict"] == "ok" else bad).append(row)
        best_per_provider: dict[str, dict[str, Any]] = {}
        for row in ok:
            best_per_provider.setdefault(row["provider"], row)
        why: dict[tuple, dict[str, Any]] = {}
        for row in bad:
            k = (row["verdict"], row["gpu_model"], row["gpus_per_node"])
            if k not in why:
                why[k] = dict(verdict=row["verdict"], gpu_model=row["gpu_model"],
                              gpus_per_node=row["gpus_per_node"], n_offers=0,
                              providers=set(), reason=row["reason"])
            why[k]["n_offers"] += rep_count(row)
            why[k]["providers"].add(row["provider"])
        nofit = sorted(why.values(), key=lambda r: (r["verdict"], r["gpu_model"] or "",
                                                    r["gpus_per_node"]))
        for r in nofit:
            r["providers"] = ", ".join(sorted(r["providers"]))
        sections.append(dict(
            name=w.name,
            summary=(f"{w.arch.name}, {w.method}, {w.precision}, seq {w.seq_len}, "
                     f"{w.tokens:,.0f} tokens, checkpoint every "
                     f"{w.checkpoint_every_tokens:,.0f} tokens"),
            top=Table(f"workload_{_slug(w.name)}_top", f"{w.name}: cheapest per checkpoint",
                      _RANK_COLS, ok[:TOP_OFFERS], total=len(ok)),
            per_provider=Table(f"workload_{_slug(w.name)}_per_provider",
                               f"{w.name}: best offer per provider", _RANK_COLS,
                               sorted(best_per_provider.values(),
                                      key=lambda r: r["cost_per_checkpoint"])),
            nofit=Table(f"workload_{_slug(w.name)}_no_fit",
                        f"{w.name}: what does not fit or cannot be priced, and why",
                        _NOFIT_COLS, nofit),
            all_ok=ok,
        ))
    return sections, notes


def rep_count(row: dict[str, Any]) -> int:
    return int(row.get("n_regions") or 1)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


_RANK_COLS = [
    Column("offer", "offer"), Column("cost_per_checkpoint", "per checkpoint", "money"),
    Column("cost_first_checkpoint", "first checkpoint", "money"),
    Column("cost_to_finish", "to finish", "money"),
    Column("region", "region"), Column("n_regions", "regions", "int"),
    Column("pricing_model", "pricing"), Column("layout", "GPUs"),
    Column("per_gpu_gb", "GB/GPU", "num"), Column("hours", "hours", "num"),
    Column("price_per_hour", "price/h per node", "money"), Column("reason", "why"),
]
_NOFIT_COLS = [
    Column("verdict", "verdict"), Column("gpu_model", "GPU"),
    Column("gpus_per_node", "GPUs/node", "int"), Column("n_offers", "offers", "int"),
    Column("providers", "providers"), Column("reason", "why (example)"),
]


# ---------------------------------------------------------------------------------------------
# GPU models now, trend, spread


def _gpu_now(con, end: dt.date, currency: str) -> tuple[Table, Table, list[str]]:
    sql = _fx_sql(_ASOF_OFFERS + " WHERE o.effective_from IS NULL "
                  "OR o.effective_from <= o.snapshot_date")
    rows = _q(con, f"""
        SELECT gpu_model, pricing_model, provider, price_per_gpu_hour * fx AS p
        FROM ({sql}) WHERE fx IS NOT NULL AND gpu_model IS NOT NULL
    """, end=end, cur=currency)  # noqa: S608 (values are parameters)
    by_model: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for r in rows:
        by_model.setdefault((r["gpu_model"], r["pricing_model"]), []).append(
            (r["p"], r["provider"]))
    order = [pm for pm in ("on_demand", "spot", "community", "reserved", "committed")
             if any(k[1] == pm for k in by_model)]
    models = sorted({g for g, _ in by_model})
    now_rows = []
    for gpu in models:
        row: dict[str, Any] = dict(gpu_model=gpu, n_offers=0, providers=set())
        for pm in order:
            vals = by_model.get((gpu, pm))
            if not vals:
                continue
            prices = sorted(v for v, _ in vals)
            row[f"{pm}_lowest"] = prices[0]
            row[f"{pm}_median"] = statistics.median(prices)
            row[f"{pm}_at"] = min(vals)[1]
            row["n_offers"] += len(prices)
            row["providers"] |= {p for _, p in vals}
        row["providers"] = len(row["providers"])
        now_rows.append(row)
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
    # Spread across providers: each provider's lowest on-demand price per GPU model.
    per: dict[str, dict[str, float]] = {}
    for r in rows:
        if r["pricing_model"] != "on_demand":
            continue
        d = per.setdefault(r["gpu_model"], {})
        d[r["provider"]] = min(d.get(r["provider"], math.inf), r["p"])
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
    return now, spread, []


def _agg_sql(start: dt.date | None, end: dt.date) -> str:
    where = "snapshot_date <= $end" + (" AND snapshot_date >= $start" if start else "")
    return f"""
        SELECT provider, snapshot_date, gpu_model, currency,
               min(price_per_gpu_hour) AS p
        FROM offers
        WHERE {where} AND pricing_model = 'on_demand' AND gpu_model IS NOT NULL
          AND (effective_from IS NULL OR effective_from <= snapshot_date)
        GROUP BY ALL
    """  # noqa: S608


def _trend(con, end: dt.date, currency: str) -> tuple[Table, list[dt.date]]:
    """Weekly lowest on-demand price per GPU model over TREND_WEEKS weeks ending at `end`:
    at each week's end, each provider's latest snapshot no older than STALE_DAYS."""
    ends = [end - dt.timedelta(weeks=i) for i in range(TREND_WEEKS - 1, -1, -1)]
    start = ends[0] - dt.timedelta(days=STALE_DAYS)
    agg = _fx_sql(_agg_sql(start, end))
    params = dict(start=start, end=end, cur=currency, ends=ends, stale_days=STALE_DAYS)
    rows = _q(con, f"""
        WITH a AS ({agg}),
        snaps AS (SELECT DISTINCT provider, snapshot_date FROM a),
        w AS (SELECT unnest($ends::DATE[]) AS week_end),
        pick AS (
            SELECT w.week_end, s.provider, max(s.snapshot_date) AS snapshot_date
            FROM w JOIN snaps AS s
              ON s.snapshot_date <= w.week_end
             AND s.snapshot_date > w.week_end - $stale_days::INTEGER
            GROUP BY ALL
        )
        SELECT pick.week_end, a.gpu_model, min(a.p * a.fx) AS lowest,
               arg_min(a.provider, a.p * a.fx) AS provider
        FROM pick JOIN a USING (provider, snapshot_date)
        WHERE a.fx IS NOT NULL
        GROUP BY ALL ORDER BY 1, 2
    """, **params)  # noqa: S608 (agg is our SQL; values are parameters)
    table = Table("gpu_trend_12w",
                  f"Lowest on-demand price per GPU-hour, last {TREND_WEEKS} weeks ({currency})",
                  [Column("week_end", "week ending"), Column("gpu_model", "GPU"),
                   Column("lowest", "lowest", "money"), Column("provider", "at")], rows,
                  note=f"At each week's end, each provider's latest snapshot counts if it is at "
                       f"most {STALE_DAYS} days old.")
    return table, ends


def _history(con, end: dt.date, currency: str) -> Table:
    """Monthly lowest on-demand price per GPU model over all history (the backfilled years)."""
    agg = _fx_sql(_agg_sql(None, end))
    rows = _q(con, f"""
        SELECT date_trunc('month', snapshot_date)::DATE AS month, gpu_model,
               min(p * fx) AS lowest, arg_min(provider, p * fx) AS provider,
               count(DISTINCT snapshot_date) AS snapshots
        FROM ({agg}) WHERE fx IS NOT NULL
        GROUP BY ALL ORDER BY 1, 2
    """, end=end, cur=currency)  # noqa: S608 (values are parameters)
    return Table("gpu_history_monthly",
                 f"Lowest on-demand price per GPU-hour by month, all history ({currency})",
                 [Column("month", "month"), Column("gpu_model", "GPU"),
                  Column("lowest", "lowest", "money"), Column("provider", "at"),
                  Column("snapshots", "snapshots", "int")], rows)


# ---------------------------------------------------------------------------------------------
# changes


def _changes(con, start: dt.date, end: dt.date, currency: str) -> list[Table]:
    src = """SELECT * FROM price_changes
              WHERE new_date BETWEEN $start AND $end"""
    rows = _q(con, f"""
        SELECT provider, sku, region, gpu_model, pricing_model, currency AS offer_currency,
               old_date, new_date, old_price_per_hour, new_price_per_hour, pct_change,
               old_price_per_gpu_hour * fx AS old_gpu_hour, new_price_per_gpu_hour * fx
               AS new_gpu_hour
        FROM ({_fx_sql(src, 'new_date')})
        ORDER BY abs(pct_change) DESC, provider, sku, region
    """, start=start, end=end, cur=currency)  # noqa: S608 (values are parameters)
    changes = Table("price_changes_week", "Biggest price changes this week", [
        Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
        Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
        Column("old_date", "was on"), Column("new_date", "changed by"),
        Column("old_gpu_hour", f"old /GPU-h {currency}", "money"),
        Column("new_gpu_hour", f"new /GPU-h {currency}", "money"),
        Column("pct_change", "change", "pct"),
    ], rows, total=len(rows))

    # Appeared / disappeared: each provider's last snapshot of the week against its last
    # snapshot before the week.
    pairs = _q(con, """
        SELECT provider,
               max(snapshot_date) FILTER (WHERE snapshot_date BETWEEN $start AND $end) AS new_d,
               max(snapshot_date) FILTER (WHERE snapshot_date < $start) AS old_d
        FROM (SELECT provider, snapshot_date FROM snapshot_dates WHERE snapshot_date <= $end)
        GROUP BY provider
    """, start=start, end=end)
    appeared, gone = [], []
    for p in pairs:
        if p["new_d"] is None or p["old_d"] is None:
            continue
        obs = _q(con, """
            SELECT offer_id, snapshot_date, sku, region, gpu_model, pricing_model,
                   price_per_hour, currency
            FROM offer_observations
            WHERE provider = $provider AND snapshot_date IN ($new_d, $old_d)
        """, provider=p["provider"], new_d=p["new_d"], old_d=p["old_d"])
        new = {o["offer_id"]: o for o in obs if o["snapshot_date"] == p["new_d"]}
        old = {o["offer_id"]: o for o in obs if o["snapshot_date"] == p["old_d"]}
        for oid in sorted(set(new) - set(old), key=lambda k: (new[k]["sku"], new[k]["region"]
                                                             or "")):
            appeared.append(dict(provider=p["provider"], since=p["new_d"], **_brief(new[oid])))
        for oid in sorted(set(old) - set(new), key=lambda k: (old[k]["sku"], old[k]["region"]
                                                             or "")):
            gone.append(dict(provider=p["provider"], last_seen=p["old_d"], **_brief(old[oid])))
    cols = [Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
            Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
            Column("price_per_hour", "price/h", "money"), Column("currency", "currency")]
    appeared_t = Table("offers_appeared", "Offers that appeared this week",
                       cols[:1] + [Column("since", "first seen")] + cols[1:], appeared,
                       total=len(appeared))
    gone_t = Table("offers_disappeared", "Offers that disappeared this week",
                   cols[:1] + [Column("last_seen", "last seen")] + cols[1:], gone,
                   total=len(gone))

    ann_src = _ASOF_OFFERS + " WHERE o.effective_from > $end"
    ann = _q(con, f"""
        SELECT provider, sku, region, gpu_model, pricing_model, snapshot_date AS announced_on,
               effective_from, price_per_hour, currency, price_per_gpu_hour * fx AS gpu_hour
        FROM ({_fx_sql(ann_src)}) ORDER BY effective_from, provider, sku
    """, end=end, cur=currency)  # noqa: S608 (values are parameters)
    ann_t = Table("announced_prices", "Announced future prices", [
        Column("provider", "provider"), Column("sku", "sku"), Column("region", "region"),
        Column("gpu_model", "GPU"), Column("pricing_model", "pricing"),
        Column("announced_on", "announced on"), Column("effective_from", "from"),
        Column("price_per_hour", "price/h", "money"), Column("currency", "currency"),
        Column("gpu_hour", f"/GPU-h {currency}", "money"),
    ], ann, total=len(ann))
    return [changes, appeared_t, gone_t, ann_t]


def _brief(o: dict[str, Any]) -> dict[str, Any]:
    return {k: o[k] for k in ("sku", "region", "gpu_model", "pricing_model", "price_per_hour",
                              "currency")}


# ---------------------------------------------------------------------------------------------
# health


def _health(con, start: dt.date, end: dt.date) -> Table:
    last = {r["provider"]: r for r in _q(con, """
        SELECT provider, max(snapshot_date) AS last_snapshot
        FROM snapshot_dates WHERE snapshot_date <= $end GROUP BY provider
    """, end=end)}
    rows_at = {(r["provider"], r["snapshot_date"]): r["n"] for r in _q(con, """
        SELECT provider, snapshot_date, count(*) AS n FROM offer_points
        WHERE (provider, snapshot_date) IN (SELECT (provider, max(snapshot_date))
                                            FROM snapshot_dates
                                            WHERE snapshot_date <= $end GROUP BY provider)
        GROUP BY ALL
    """, end=end)}
    runs = {r["provider"]: r for r in _q(con, """
        WITH r AS (
            SELECT *, coalesce(started_at::DATE,
                               try_strptime(left(run_id, 15), '%Y%m%dT%H%M%S')::DATE) AS run_day
            FROM runs
        )
        SELECT provider,
               count(*) AS runs,
               count(*) FILTER (WHERE list_contains($failed::VARCHAR[], status)) AS failures,
               arg_max(coalesce(error, message), run_day)
                   FILTER (WHERE list_contains($failed::VARCHAR[], status)) AS last_error
        FROM r
        WHERE coalesce(snapshot_date, run_day) BETWEEN $start AND $end
        GROUP BY provider
    """, start=start, end=end, failed=list(FAILED_STATUSES))}
    out = []
    for p in PROVIDERS:
        snap = last.get(p, {}).get("last_snapshot")
        run = runs.get(p, {})
        age = (end - snap).days if snap else None
        state = ("no data" if snap is None else
                 "failing" if run.get("failures") else
                 "stale" if age is not None and age > 7 else "ok")
        out.append(dict(provider=p, state=state, last_snapshot=snap,
                        rows=rows_at.get((p, snap)), age_days=age, runs=run.get("runs", 0),
                        failures=run.get("failures", 0), last_error=run.get("last_error")))
    fx = con.execute("SELECT max(date), count(DISTINCT currency) FROM fx_rates "
                     "WHERE date <= ?", [end]).fetchone()
    out.append(dict(provider="ecb (FX)", state="ok" if fx[0] and (end - fx[0]).days <= 7
                    else "stale" if fx[0] else "no data", last_snapshot=fx[0], rows=fx[1],
                    age_days=(end - fx[0]).days if fx[0] else None, runs=None, failures=None,
                    last_error=None))
    return Table("data_health", "Data health per provider", [
        Column("provider", "provider"), Column("state", "state"),
        Column("last_snapshot", "last good snapshot"), Column("rows", "rows", "int"),
        Column("age_days", "age (days)", "int"), Column("runs", "runs this week", "int"),
        Column("failures", "failures this week", "int"), Column("last_error", "last error"),
    ], out, note="Rows of the last good snapshot; for ECB, currencies quoted. Age is counted "
                 "from the end of the report week.")


# ---------------------------------------------------------------------------------------------
# the report


@dataclass
class Report:
    week: str
    start: dt.date
    end: dt.date
    currency: str
    generated_at: dt.datetime
    workloads: list[dict[str, Any]] = field(default_factory=list)
    gpu_now: Table | None = None
    spread: Table | None = None
    trend: Table | None = None
    trend_ends: list[dt.date] = field(default_factory=list)
    history: Table | None = None
    changes: list[Table] = field(default_factory=list)
    health: Table | None = None
    notes: list[str] = field(default_factory=list)
    headline: list[str] = field(default_factory=list)

    def tables(self) -> list[Table]:
        out = []
        for w in self.workloads:
            out += [w["top"], w["per_provider"], w["nofit"]]
        out += [t for t in (self.gpu_now, self.spread, self.trend, self.history) if t]
        out += self.changes
        if self.health:
            out.append(self.health)
        return out


def build_report(con: duckdb.DuckDBPyConnection, week: str | None = None,
                 currency: str = "EUR", workloads: Sequence[Workload] = (),
                 rank_fn: Callable[..., Any] | None = None,
                 now: dt.datetime | None = None) -> Report:
    currency = currency.upper()
    week = (week or latest_week(con)).upper()
    start, end = week_bounds(week)
    if currency != "EUR":
        known = con.execute("SELECT count(*) FROM fx_rates WHERE currency = ?",
                            [currency]).fetchone()[0]
        if not known:
            raise ValueError(f"no ECB rates for {currency} in fx_rates: load them first "
                             "(gpuprices report loads the archived ECB files)")
    rep = Report(week=week, start=start, end=end, currency=currency,
                 generated_at=now or dt.datetime.now(dt.UTC))
    rep.workloads, notes = _workload_tables(con, end, currency, workloads,
                                            rank_fn or rank_for_report)
    rep.notes += notes
    rep.gpu_now, rep.spread, _ = _gpu_now(con, end, currency)
    rep.trend, rep.trend_ends = _trend(con, end, currency)
    rep.history = _history(con, end, currency)
    rep.changes = _changes(con, start, end, currency)
    rep.health = _health(con, start, end)
    for w in rep.workloads:
        if w["top"].rows:
            b = w["top"].rows[0]
            rep.headline.append(
                f"{w['name']}: {b['offer']} ({b['region'] or 'any region'}, "
                f"{b['pricing_model']}, {b['layout']}) at "
                f"{fmt(b['cost_per_checkpoint'], 'money')} {currency} per checkpoint")
        else:
            rep.headline.append(f"{w['name']}: no priced offer fits")
    return rep


# ---------------------------------------------------------------------------------------------
# charts (hand-made SVG: no script, no external file)

_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
            "#17becf")


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw), default=mag * 10)
    first = math.floor(lo / step) * step
    ticks = []
    t = first
    while t <= hi + step * 1e-9:
        if t >= lo - step * 1e-9:
            ticks.append(round(t, 10))
        t += step
    return ticks


def line_chart(series: dict[str, list[tuple[dt.date, float]]], title: str, y_label: str,
               x_range: tuple[dt.date, dt.date] | None = None, width: int = 900,
               height: int = 320, log_y: bool = False) -> Markup:
    """An inline SVG line chart (one polyline per series, a legend, date and price axes)."""
    series = {k: sorted(v) for k, v in series.items() if v}
    ml, mr, mt, mb = 70, 190, 30, 40
    pw, ph = width - ml - mr, height - mt - mb
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
             f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
             f'<title>{escape(title)}</title>',
             f'<text x="{ml}" y="18" class="ct">{escape(title)}</text>']
    if not series:
        parts.append(f'<text x="{ml + 10}" y="{mt + ph / 2}" class="empty">no data in this '
                     f'period</text></svg>')
        return Markup("".join(parts))
    xs = [d for v in series.values() for d, _ in v]
    ys = [y for v in series.values() for _, y in v if y > 0 or not log_y]
    x0, x1 = x_range or (min(xs), max(xs))
    if x1 <= x0:
        x1 = x0 + dt.timedelta(days=1)
    f = (math.log10 if log_y else (lambda v: v))
    y0, y1 = f(min(ys)), f(max(ys))
    if not log_y:
        y0 = 0.0
    if y1 <= y0:
        y1 = y0 + 1
    pad = (y1 - y0) * 0.05
    y1 += pad
    if log_y:
        y0 -= pad

    def px(d: dt.date) -> float:
        return ml + pw * (d - x0).days / (x1 - x0).days

    def py(v: float) -> float:
        return mt + ph * (1 - (f(v) - y0) / (y1 - y0))

    parts.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" class="pa"/>')
    if log_y:
        ticks = [10 ** e * m for e in range(math.floor(y0), math.ceil(y1) + 1)
                 for m in (1, 2, 5) if y0 <= math.log10(10 ** e * m) <= y1]
    else:
        ticks = _nice_ticks(y0, y1)
    for t in ticks:
        y = py(t)
        parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{y:.1f}" y2="{y:.1f}" class="g"/>'
                     f'<text x="{ml - 6}" y="{y + 4:.1f}" class="yl">{fmt(t, "money")}</text>')
    span = (x1 - x0).days
    if span <= 120:
        step = 7 if span <= 100 else 14
        d = x0
        xt = []
        while d <= x1:
            xt.append(d)
            d += dt.timedelta(days=step)
        label = "%d %b"
    else:
        xt = []
        d = dt.date(x0.year, x0.month, 1)
        months = max(1, math.ceil(span / 30 / 10))
        while d <= x1:
            if d >= x0:
                xt.append(d)
            m = d.month - 1 + months
            d = dt.date(d.year + m // 12, m % 12 + 1, 1)
        label = "%b %Y"
    for d in xt:
        x = px(d)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{mt}" y2="{mt + ph}" class="g"/>'
                     f'<text x="{x:.1f}" y="{mt + ph + 16}" class="xl">'
                     f'{d.strftime(label)}</text>')
    parts.append(f'<text x="14" y="{mt + ph / 2}" class="yt" transform="rotate(-90 14 '
                 f'{mt + ph / 2})">{escape(y_label)}</text>')
    for i, (name, pts) in enumerate(series.items()):
        color = _PALETTE[i % len(_PALETTE)]
        coords = " ".join(f"{px(d):.1f},{py(v):.1f}" for d, v in pts if v > 0 or not log_y)
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{color}" '
                     f'stroke-width="2"/>')
        for d, v in pts:
            parts.append(f'<circle cx="{px(d):.1f}" cy="{py(v):.1f}" r="2.5" fill="{color}">'
                         f'<title>{escape(name)} {d}: {fmt(v, "money")}</title></circle>')
        ly = mt + 14 + i * 18
        parts.append(f'<rect x="{ml + pw + 12}" y="{ly - 9}" width="12" height="4" '
                     f'fill="{color}"/><text x="{ml + pw + 30}" y="{ly - 3}" class="lg">'
                     f'{escape(name)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _pick_series(rows: list[dict[str, Any]], x_key: str) -> dict[str, list[tuple[dt.date,
                                                                                  float]]]:
    """The CHART_SERIES GPU models seen most often (ties: cheaper first)."""
    count: dict[str, int] = {}
    for r in rows:
        count[r["gpu_model"]] = count.get(r["gpu_model"], 0) + 1
    keep = sorted(count, key=lambda g: (-count[g], g))[:CHART_SERIES]
    out: dict[str, list[tuple[dt.date, float]]] = {g: [] for g in sorted(keep)}
    for r in rows:
        if r["gpu_model"] in out and r["lowest"] is not None:
            out[r["gpu_model"]].append((r[x_key], float(r["lowest"])))
    return out


def charts(rep: Report) -> dict[str, Markup]:
    out = {}
    if rep.trend is not None:
        x_range = (rep.trend_ends[0] - dt.timedelta(days=6), rep.trend_ends[-1])
        out["trend"] = line_chart(
            _pick_series(rep.trend.rows, "week_end"),
            f"Lowest on-demand price per GPU-hour, {TREND_WEEKS} weeks to {rep.end}",
            f"{rep.currency} per GPU-hour", x_range=x_range, log_y=True)
    if rep.history is not None:
        out["history"] = line_chart(
            _pick_series(rep.history.rows, "month"),
            "Lowest on-demand price per GPU-hour by month, all history",
            f"{rep.currency} per GPU-hour", log_y=True)
    return out


# ---------------------------------------------------------------------------------------------
# writing


def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                      autoescape=select_autoescape(["html", "j2"], default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = fmt
    return env


def render_html(rep: Report) -> str:
    return _env().get_template("report.html.j2").render(
        rep=rep, charts=charts(rep), list_limit=LIST_LIMIT, top_changes=TOP_CHANGES)


def _md_cell(value: Any, kind: str) -> str:
    text = fmt(value, kind)
    # Provider text must not break the table or inject markup in a Markdown renderer.
    return (text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")
            .replace(">", "&gt;").replace("\n", " "))


def _md_table(t: Table, limit: int | None = None) -> str:
    lines = [f"### {t.title}", ""]
    if t.note:
        lines += [t.note, ""]
    if not t.rows:
        return "\n".join(lines + ["(none)", ""])
    lines.append("| " + " | ".join(c.label for c in t.columns) + " |")
    lines.append("|" + "|".join("---:" if c.kind in ("money", "pct", "int", "num", "ratio")
                                else "---" for c in t.columns) + "|")
    for r in t.shown(limit):
        lines.append("| " + " | ".join(_md_cell(r.get(c.key), c.kind) for c in t.columns)
                     + " |")
    if limit is not None and len(t.rows) > limit:
        lines.append(f"\n… {len(t.rows) - limit} more in `{t.name}.csv`")
    return "\n".join(lines + [""])


def render_markdown(rep: Report) -> str:
    out = [f"# GPU prices — week {rep.week} ({rep.start} – {rep.end})", "",
           f"Prices in {rep.currency} per hour at the ECB rate of each snapshot date. "
           f"Generated {rep.generated_at:%Y-%m-%d %H:%M} UTC.", ""]
    if rep.headline:
        out += ["## Where to rent this week", ""] + [f"- {_md_cell(h, 'text')}"
                                                     for h in rep.headline] + [""]
    out += [f"- {n}" for n in rep.notes] + ([""] if rep.notes else [])
    if rep.workloads:
        out += ["## Workloads", ""]
        for w in rep.workloads:
            out += [f"**{_md_cell(w['name'], 'text')}** — {_md_cell(w['summary'], 'text')}", ""]
            out += [_md_table(w["top"]), _md_table(w["per_provider"]), _md_table(w["nofit"])]
    out += ["## GPU models", "", _md_table(rep.gpu_now), _md_table(rep.spread),
            _md_table(rep.trend), "## Changes this week", "",
            _md_table(rep.changes[0], TOP_CHANGES)]
    out += [_md_table(t, LIST_LIMIT) for t in rep.changes[1:]]
    out += ["## Data health", "", _md_table(rep.health)]
    return "\n".join(out)


def _csv_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return ""
    if isinstance(v, set):
        return ";".join(sorted(v))
    return "" if v is None else v


def write_csv(t: Table, path: Path) -> None:
    keys = [c.key for c in t.columns]
    extra = [k for k in (t.rows[0] if t.rows else {}) if k not in keys
             and not isinstance(t.rows[0][k], dict | list)]
    tmp = path.with_suffix(".csv.part")
    with tmp.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(keys + extra)
        for r in t.rows:
            w.writerow([_csv_value(r.get(k)) for k in keys + extra])
    tmp.replace(path)


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_report(con: duckdb.DuckDBPyConnection, out_root: Path | str, week: str | None = None,
                 currency: str = "EUR", workloads: Sequence[Workload] = (),
                 rank_fn: Callable[..., Any] | None = None) -> Path:
    """Build the report and write `<out_root>/<week>/report.html`, `report.md` and the CSVs.
    Returns the HTML path. The HTML is written last, so its presence means a complete set."""
    rep = build_report(con, week, currency, workloads, rank_fn)
    folder = Path(out_root) / rep.week
    folder.mkdir(parents=True, exist_ok=True)
    for t in rep.tables():
        write_csv(t, folder / f"{t.name}.csv")
    _atomic_text(folder / "report.md", render_markdown(rep))
    html = folder / "report.html"
    _atomic_text(html, render_html(rep))
    return html
