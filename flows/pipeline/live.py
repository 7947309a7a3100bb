"""A live night for one provider: its crawler in a child process, then the day parsed and stored;
tried again after a pause when the crawl fetched nothing (flows/pipeline/steps.py holds the
steps)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import progress
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.parsing import parse_archive
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.flows.pipeline.steps import archives, owner_only_writes, store_day
from gpuprices.spiders import net_failures

CRAWL_TIMEOUT_S = 30 * 60


def crawl_live(settings: Settings, provider: str, timeout_s: int = CRAWL_TIMEOUT_S) -> dict:
    """Run one provider's spider in its own process and return its summary."""
    owner_only_writes()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "summary.json"
        cmd = [sys.executable, "-m", "gpuprices.spiders.crawl", "--provider", provider,
               "--archive-root", str(settings.archive_root), "--summary", str(out),
               # A crawl into object storage spools here until its records are appended.
               "--spool", str(settings.data_dir / "spool")]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                                  env=os.environ.copy())
        except subprocess.TimeoutExpired:
            return {"provider": provider, "archived": [], "errors": [
                {"url": "", "error": f"crawl took longer than {timeout_s} s and was stopped"}]}
        if out.exists():
            return json.loads(out.read_text())
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-5:]
        return {"provider": provider, "archived": [], "errors": [
            {"url": "", "error": f"crawler process exited {proc.returncode}: "
                                 + " | ".join(tail)}]}


def live_day(settings: Settings, provider: str) -> DayResult:
    """Crawl a provider now, then parse and store today's archive for it."""
    summary = crawl_live(settings, provider)
    crawl_errors = [f"{provider}: {e['url'] or '(crawl)'}: {e['error']}"
                    for e in summary["errors"]]
    ok_dates = sorted({a["date"] for a in summary["archived"] if a["status"] == 200})
    if not ok_dates:
        return DayResult(provider=provider, snapshot_date=None, status="failed",
                         errors=crawl_errors or [f"{provider}: nothing fetched"])
    day = dt.date.fromisoformat(ok_dates[-1])
    path = next(p for d, _, p in archives(settings, [provider], [day]))
    res = store_day(settings, provider, day, parse_archive(path, provider))
    res.errors = crawl_errors + res.errors
    if res.status == "ok" and crawl_errors:
        res.status = "degraded"
    return res


def backoff_delays() -> list[float]:
    """Seconds to wait before each new attempt at a provider whose crawl fetched nothing
    (GPUPRICES_PROVIDER_BACKOFF, comma-separated; default 60 then 300: a site that is down for
    a minute or rate-limits a burst gets a second and a third chance, spaced out)."""
    text = os.environ.get("GPUPRICES_PROVIDER_BACKOFF", "60,300")
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        return [60.0, 300.0]


def live_day_with_backoff(settings: Settings, provider: str,
                          delays: list[float] | None = None, sleep=time.sleep) -> DayResult:
    """live_day, tried again after each delay while the crawl fetched nothing at all. A night
    that fetched pages but could not parse them is not retried: the bytes would be the same;
    nor one that could not resolve a name or had no route (net_failures: minutes do not heal
    an offline machine)."""
    delays = backoff_delays() if delays is None else delays
    res = live_day(settings, provider)
    for attempt, delay in enumerate(delays, start=2):
        if not (res.status == "failed" and res.snapshot_date is None):
            break
        offline = net_failures.unhealable(res.errors)
        if offline:
            res.errors.append(f"{provider}: not retried: {offline} does not heal in minutes")
            break
        sleep(delay)
        first_errors = res.errors
        res = live_day(settings, provider)
        if res.status == "failed":
            res.errors = first_errors + [f"{provider}: attempt {attempt} after {delay:g} s: {e}"
                                         for e in res.errors]
    return res


def provider_days(settings: Settings, provider: str, replay: str | None) -> list[DayResult]:
    """One provider up to the lake: live (its spider in a child process, tried again with
    backoff while it fetches nothing), or its archived days of `replay` (a date or 'all').
    The nightly flow's task and the team mode's crawl deployment both run this."""
    if replay is None:
        return [live_day_with_backoff(settings, provider)]
    return pipeline.replay(settings, provider, replay, on_day=progress.replayed)
