"""The Report of one ISO week, built from the warehouse's named views only.

"Now" in a report is the end of its ISO week (Sunday): each provider's latest snapshot on or
before that day (offers_as_of). Every price is converted to the report currency with the
warehouse's fx_factor at its own snapshot date; a price that cannot be converted (no rate yet)
is left out of the price tables and counted.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from gpuprices.reports import index_section, rent_or_own, sections
from gpuprices.reports.bench_plan import plan_appendix
from gpuprices.reports.coverage import coverage
from gpuprices.reports.tables import Table
from gpuprices.reports.weeks import iso_week, week_bounds
from gpuprices.reports.workloads import choices_table, rank_for_report, workload_sections
from gpuprices.sizing import discounts as negotiated
from gpuprices.sizing.headline import one_line
from gpuprices.sizing.workload import Workload
from gpuprices.warehouse import db


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
    not_firm: Table | None = None
    stale: Table | None = None
    max_age_days: int | None = None
    notes: list[str] = field(default_factory=list)
    headline: Table | None = None  # per workload: best firm on-demand, spot, committed offer
    bench_plan: Table | None = None  # appendix: the tests to run on each headline offer first
    rent_own: Table | None = None  # rent, reserve or own the sustained demands
    # One line per workload, first in the report: the pick, its cost and duration, the fallback
    # (sizing/headline.py).
    picks: list[str] = field(default_factory=list)
    index: Table | None = None  # the price index per headline GPU model (docs/index.md)
    index_series: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # First line of the report: how many providers the figures cover (reports/coverage.py).
    coverage: str = ""

    def tables(self) -> list[Table]:
        out = [self.headline] if self.headline else []
        for w in self.workloads:
            out += [w["top"], w["per_provider"], w["apart"], w["nofit"]]
        out += [self.rent_own] if self.rent_own else []
        out += [t for t in (self.gpu_now, self.spread, self.not_firm, self.stale, self.trend,
                            self.history, self.index) if t]
        out += self.changes
        if self.health:
            out.append(self.health)
        return out + ([self.bench_plan] if self.bench_plan else [])


def latest_week(con: duckdb.DuckDBPyConnection) -> str:
    """The ISO week of the newest snapshot in the warehouse (latest_snapshot)."""
    day = con.execute("SELECT snapshot_date FROM latest_snapshot").fetchone()[0]
    if day is None:
        raise ValueError("the warehouse holds no offers: run `gpuprices nightly --replay all` "
                         "(it loads the bundled snapshots, offline)")
    return iso_week(day)


def build_report(con: duckdb.DuckDBPyConnection, week: str | None = None,
                 currency: str = "USD", workloads: Sequence[Workload] = (),
                 rank_fn: Callable[..., Any] | None = None,
                 now: dt.datetime | None = None,
                 node_shapes: Mapping[str, Sequence[int]] | None = None,
                 max_age_days: int | None = None,
                 discounts: Sequence[negotiated.Discount] = ()) -> Report:
    """The report of `week` (default: the latest with data) in `currency` (the commands pass
    flows/config.py default_currency(): $GPUPRICES_CURRENCY, else USD). `rank_fn` replaces
    rank_for_report (same arguments); `node_shapes` (provider -> GPUs per node it sells, from the
    provider registry) goes to the sizing engine; `max_age_days`: the age limit of "now"
    (default: the warehouse's, default_max_age_days()); `discounts`: the buyer's negotiated
    prices (sizing/discounts.py), in force on the day the report is generated."""
    currency = currency.upper()
    week = (week or latest_week(con)).upper()
    start, end = week_bounds(week)
    if not con.execute("SELECT count(*) FROM fx_currencies WHERE currency = ?",
                       [currency]).fetchone()[0]:
        raise ValueError(f"no ECB rates for {currency} in fx_rates: load them first "
                         "(gpuprices report loads the archived ECB files)")
    max_age_days = db.age_limit(con, max_age_days)
    rep = Report(week=week, start=start, end=end, currency=currency,
                 generated_at=now or dt.datetime.now(dt.UTC), max_age_days=max_age_days)
    rep.workloads, notes = workload_sections(con, end, currency, workloads,
                                             rank_fn or rank_for_report, node_shapes,
                                             max_age_days, discounts,
                                             rep.generated_at.date())
    rep.notes += notes
    rep.coverage = coverage(con, end, max_age_days).line()
    rep.picks = [one_line(w["name"], w["rows"], currency) for w in rep.workloads]
    rep.rent_own = rent_or_own.section(con, end, currency, max_age_days,
                                       discounts=discounts, today=rep.generated_at.date())
    rep.gpu_now, rep.spread = sections.gpu_now(con, end, currency, max_age_days)
    rep.not_firm, rep.stale = sections.set_apart(con, end, currency, max_age_days)
    rep.trend, rep.trend_ends = sections.trend(con, end, currency, max_age_days)
    rep.history = sections.history(con, end, currency)
    rep.index, rep.index_series = index_section.section(con, end)
    rep.changes = sections.changes(con, start, end, currency, max_age_days)
    rep.health = sections.health(con, start, end, max_age_days)
    if rep.workloads:
        rep.headline = choices_table(rep.workloads)
        rep.bench_plan = plan_appendix(workloads, rep.workloads, currency)
    return rep
