"""The nightly pipeline as plain functions: crawl → parse → check → store → load.

Prefect tasks (flows/nightly.py) and the command line both call these; tests call them directly
so that most of the suite never pays for Prefect's start-up.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from flows.config import Settings
from spiders.archive import latest_per_request, list_archives, read_captures
from spiders.parsers import ParseError, parse_body, postprocess, wants
from warehouse import db, lake
from warehouse.contract import PROVIDERS, Offer, offers_to_table

CRAWL_TIMEOUT_S = 30 * 60


@dataclass
class DayResult:
    """What happened to one provider on one snapshot date."""

    provider: str
    snapshot_date: dt.date | None
    status: str = "ok"  # ok | failed | degraded
    rows: int = 0
    quarantined: int = 0
    captures: int = 0
    errors: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)

    @property
    def message(self) -> str:
        return "; ".join(self.errors)


@dataclass
class Parsed:
    offers: list[Offer]
    errors: list[ParseError]
    captures: int


def parse_archive(path: Path, provider: str) -> Parsed:
    """Offers from one archive file: the latest capture of each request, each parsed alone so
    that one broken page does not hide the others."""
    caps = latest_per_request(read_captures(path))
    offers: list[Offer] = []
    errors: list[ParseError] = []
    used = []
    for cap in caps:
        meta = cap.meta()
        try:
            if not wants(meta):
                continue
            used.append(cap)
            offers.extend(parse_body(cap.body, meta))
        except ParseError as exc:
            errors.append(exc)
        except Exception as exc:  # a parser bug is that page's failure, never the run's
            errors.append(ParseError(provider, cap.url, f"parser crashed: {exc!r}"))
    if offers:
        offers = postprocess(provider, offers, caps)
    return Parsed(offers=offers, errors=errors, captures=len(used))


def check(offers: list[Offer]) -> tuple[list[Offer], list[tuple[Offer, str]]]:
    """Split offers into loadable ones and quarantined ones with their reason."""
    good: list[Offer] = []
    bad: list[tuple[Offer, str]] = []
    seen: set[tuple] = set()
    for o in offers:
        if o.gpu_model is None:
            bad.append((o, f"unmapped GPU wording {o.extra.get('gpu_wording', o.sku)!r}"))
            continue
        key = (o.sku, o.region, o.pricing_model, o.commitment_months, o.effective_from,
               o.source_url, o.extra.get("variant"))
        if key in seen:
            bad.append((o, "duplicate of another row from the same page"))
            continue
        seen.add(key)
        good.append(o)
    return good, bad


def quarantine_table(rows: list[tuple[Offer, str]]) -> pa.Table:
    table = offers_to_table([o for o, _ in rows]) if rows else None
    if table is None:
        return None
    return table.append_column("reason", pa.array([r for _, r in rows], pa.string()))


def store_day(settings: Settings, provider: str, day: dt.date, parsed: Parsed) -> DayResult:
    """Check parsed offers and write the lake partition (and quarantine) for one day."""
    res = DayResult(provider=provider, snapshot_date=day, captures=parsed.captures)
    res.errors = [str(e) for e in parsed.errors]
    good, bad = check(parsed.offers)
    res.quarantined = len(bad)
    res.unmapped = sorted({o.extra.get("gpu_wording", o.sku) for o, r in bad
                           if r.startswith("unmapped")})
    if not good:
        res.status = "failed"
        if not res.errors:
            res.errors.append(f"{provider}: no loadable offers for {day}")
        return res
    lake.write_partition(settings.lake_root, day, provider, offers_to_table(good))
    if bad:
        lake.write_quarantine(settings.lake_root, day, provider, quarantine_table(bad))
    res.rows = len(good)
    res.status = "degraded" if res.errors else "ok"
    return res


def archives(settings: Settings, providers: Iterable[str] | None = None,
             dates: Iterable[dt.date] | None = None) -> list[tuple[dt.date, str, Path]]:
    want_p = set(providers) if providers else set(PROVIDERS)
    want_d = set(dates) if dates else None
    return [
        (d, p, path) for d, p, path in list_archives(settings.archive_root)
        if p in want_p and (want_d is None or d in want_d)
    ]


def reparse(settings: Settings, provider: str, dates: Iterable[dt.date] | None = None
            ) -> list[DayResult]:
    """Rebuild a provider's lake partitions from the raw archive with today's parsers."""
    results = []
    for day, _, path in archives(settings, [provider], dates):
        results.append(store_day(settings, provider, day, parse_archive(path, provider)))
    return results


def load(settings: Settings, results: list[DayResult], run_id: str) -> None:
    """Load the good days into DuckDB (one transaction per provider-day) and record every
    provider-day in `runs`, failures included. A failed day loads nothing: the provider's last
    good snapshot stays its latest."""
    con = db.connect(settings.db_path)
    try:
        db.init_schema(con)
        for r in results:
            if r.status != "failed" and r.snapshot_date is not None:
                table = lake.read_partition(settings.lake_root, r.snapshot_date, r.provider)
                db.load_partition(con, r.snapshot_date, r.provider, table)
            db.record_run(
                con, run_id=run_id, provider=r.provider, snapshot_date=r.snapshot_date,
                status=r.status, rows=r.rows, quarantined=r.quarantined,
                error=r.message or None,
            )
    finally:
        con.close()


def crawl_live(settings: Settings, provider: str, timeout_s: int = CRAWL_TIMEOUT_S) -> dict:
    """Run one provider's spider in its own process and return its summary."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "summary.json"
        cmd = [sys.executable, "-m", "spiders.crawl", "--provider", provider,
               "--archive-root", str(settings.archive_root), "--summary", str(out)]
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


def parse_dates(spec: str, settings: Settings, providers: Iterable[str]) -> list[dt.date] | None:
    """`all` → every archived date (None); otherwise one ISO date."""
    if spec == "all":
        return None
    try:
        return [dt.date.fromisoformat(spec)]
    except ValueError as exc:
        raise ValueError(f"--replay takes an ISO date (YYYY-MM-DD) or 'all', not {spec!r}") \
            from exc


def new_run_id() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
