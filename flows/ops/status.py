"""The status table a run prints: per provider what was read, how old its latest good snapshot is
on the run's day, and whether that makes it stale."""

from __future__ import annotations

import datetime as dt

from rich.table import Table
from rich.text import Text

from gpuprices.flows.pipeline.results import DayResult, NotRun


def run_day(results: list[DayResult]) -> dt.date:
    """The day a run is judged on: the replayed date, else the newest snapshot it read (a live
    run's today, a full replay's last archived day), else today."""
    return max((r.run_date or r.snapshot_date for r in results
                if r.run_date or r.snapshot_date), default=dt.datetime.now(dt.UTC).date())


def status_table(results: list[DayResult], max_age: int | None = None,
                 others: list[NotRun] = (), interrupted: list[dict] | None = None) -> Table:
    """One row per provider: snapshots read, the latest good one and its age on the run's day,
    the worst status, rows, quarantined rows, rows the parsers passed over (the run summary
    says why) and the first problem. A provider whose latest good
    snapshot is more than `max_age` days old on the run's day is marked stale (its offers are in
    no "cheapest" figure); a failed one says which snapshot it still serves. `others` are the
    configured providers the run did not read (results.not_run): a line each, "not run" with
    the snapshot they serve, so no provider is left out. Then one row per earlier run that never
    finished (`interrupted`: run_id, started_at, providers), marked interrupted: what it
    recorded is not a complete run."""
    t = Table(title="providers")
    for col in ("provider", "snapshots", "latest", "age (d)", "status", "rows", "quarantined",
                "skipped", "problem"):
        t.add_column(col)
    day = run_day(results)
    by_provider: dict[str, list[DayResult]] = {}
    for r in results:
        by_provider.setdefault(r.provider, []).append(r)
    for provider, rs in by_provider.items():
        dated = [r for r in rs if r.snapshot_date]
        # A day that loaded nothing (a failure, or an unknown layout held for review) is no
        # good snapshot, and a failed day is never served: the provider's last good one (its
        # stale_since, as the run summary says) stays the latest it offers.
        latest = max((r.snapshot_date for r in dated if r.rows and r.status != "failed"),
                     default=None)
        worst = ("failed" if any(r.status == "failed" for r in rs)
                 else "degraded" if any(r.status == "degraded" for r in rs) else "ok")
        problems = [e for r in rs for e in r.errors]
        style = {"ok": "green", "degraded": "yellow", "failed": "red"}[worst]
        served = [r.stale_since for r in rs if not r.rows and r.stale_since]
        latest = latest or max(served, default=None)
        age = (day - latest).days if latest else None
        shown = worst
        if age is not None and max_age is not None and age > max_age:
            shown = f"{worst}, stale ({age} d)"
            style = "red" if worst == "failed" else "yellow"
        elif served:
            shown = f"{worst}, serving {latest}"
        # Provider text as it is: an error quoting "[...]" must not be read as markup.
        t.add_row(provider, str(len(dated)), str(latest or "-"),
                  "-" if age is None else str(age), Text(shown, style=style),
                  str(sum(r.rows for r in rs)), str(sum(r.quarantined for r in rs)),
                  str(sum(n for r in rs for n in r.skipped.values())),
                  Text(problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1
                                      else "")) if problems else "")
    for o in others:
        t.add_row(o.provider, "0", str(o.last_good or "-"),
                  "-" if o.age_days is None else str(o.age_days),
                  Text(o.describe(), style="yellow" if o.state == "stale" else "dim"), "0", "0",
                  "")
    for run in interrupted or []:
        t.add_row(Text(", ".join(run["providers"])), "-", "-", "-",
                  Text("interrupted", style="red"), "-", "-",
                  Text(f"run {run['run_id']} started {run['started_at']:%Y-%m-%d %H:%M} and "
                       "never finished; this run loaded what the lake holds"))
    return t
