"""Probes of the live path, offline (issue "No wrong price loads quietly...", last paragraph).

Each runs providers' REAL fetch plans through the crawler against the loopback replay server of
the project's archive (tests/replay/: built from snapshots/manifest.csv), as docs/operations.md
"The live path, offline" describes:

- every provider's plan on a clean night: the offers parsed from what the crawl archived equal
  those parsed from the archived captures the server replayed (the direct replay);
- a fault night: 429 with Retry-After and a cut body that recover, a 503, a silent server, a slow
  one and a body always cut short that do not: each fails naming its URL, the rest carry on;
- the nightly live step with one provider failing: it fails alone, nothing of it is loaded, the
  other provider's rows reach the warehouse;
- the Wayback backfill's CDX listing and id_ fetches, with a 429 (Retry-After) and a 503.

Rows lost = offers of the direct replay missing from the live one; wrong = offers of the live
one the direct replay does not have (or rows of a failed provider in the warehouse).
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import duckdb

from bench.fault_probes import Probe, ProbeResult
from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import live
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import list_archives, read_captures
from gpuprices.spiders.crawl import SETTINGS_ENV
from gpuprices.spiders.registry import ids, wayback_urls
from gpuprices.spiders.wayback import backfill, cdx_query_url, raw_capture_url
from tests.replay.drive import ROOT, build_archive, day_offers, replay_night
from tests.replay.loopback import installed, settings_json
from tests.replay.scenarios import (
    FAULT_NIGHT_ERRORS,
    LAMBDA,
    MANY,
    TIMEOUT,
    fault_night,
)
from tests.replay.server import Fault, ReplayIndex, ReplayServer, cdx_key


def _diff(a: Iterable, b: Iterable) -> int:
    """How many of a's items (counted with repeats) b lacks."""
    return sum((collections.Counter(a) - collections.Counter(b)).values())


def clean_night(tmp: Path) -> ProbeResult:
    night = replay_night(build_archive(tmp / "archive"), tmp / "night", ids())
    lost = wrong = total = 0
    bad = []
    for p in ids():
        live, direct = night.offers(p)
        lost, wrong = lost + _diff(direct, live), wrong + _diff(live, direct)
        total += len(live)
        if not live or live != direct:
            bad.append(p)
    gaps = sum(1 for s in night.seen if s.status == 404 and "robots.txt" not in s.url)
    return ProbeResult(not bad, lost, wrong,
                       f"{len(ids())} plans, {len(night.seen)} requests, {total} offers; "
                       f"{gaps} planned URLs not archived (404)"
                       + (f"; differ: {', '.join(bad)}" if bad else ""))


def faulty_night(tmp: Path) -> ProbeResult:
    night = replay_night(build_archive(tmp / "archive"), tmp / "night", list(FAULT_NIGHT_ERRORS),
                         faults=fault_night(), **TIMEOUT)
    wrong_errors = [p for p, errs in FAULT_NIGHT_ERRORS.items()
                    if night.crawls[p].summary["errors"] != errs]
    live, direct = night.offers("runpod")
    ok = not wrong_errors and bool(live) and live == direct
    unexpected = f"; unexpected errors: {', '.join(wrong_errors)}" if wrong_errors else ""
    return ProbeResult(ok, _diff(direct, live), _diff(live, direct),
                       f"429+Retry-After, cut body recovered; 503, hang, slow, cut body failed "
                       f"by URL; runpod {len(live)} offers{unexpected}")


@contextlib.contextmanager
def _env(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def nightly_step(tmp: Path) -> ProbeResult:
    settings = Settings(tmp / "data", tmp / "snapshots").ensure()
    with ReplayServer(ReplayIndex(build_archive(tmp / "archive"))) as server:
        server.inject(LAMBDA, Fault("status", 503, times=MANY))
        with _env(**{SETTINGS_ENV: settings_json(server.address), "PYTHONPATH": str(ROOT)}):
            results = [live.live_day(settings, p) for p in ("lambda", "runpod")]
        served = [s.served for s in server.seen if s.served is not None and s.status == 200]
    direct, _ = day_offers("runpod", [c for c in served if c.provider == "runpod"])
    with contextlib.redirect_stdout(io.StringIO()):  # load prints the run summary's path
        loading.load(settings, results, pipeline.new_run_id())
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        loaded = dict(con.execute("select provider, count(*) from offers group by 1").fetchall())
    finally:
        con.close()
    lam, run = results
    kept = [c.status for _, p, path in list_archives(settings.archive_root) if p == "lambda"
            for c in read_captures(path)]
    ok = (lam.errors == [f"lambda: {LAMBDA}: HTTP 503"] and kept == [503]
          and run.status == "ok" and loaded.get("runpod") == run.rows > 0)
    return ProbeResult(ok, len(direct) - run.rows - run.quarantined, loaded.get("lambda", 0),
                       f"lambda {lam.status} ({'; '.join(lam.errors)}), runpod {run.status} "
                       f"{run.rows} loaded + {run.quarantined} held")


def wayback(tmp: Path) -> ProbeResult:
    index = ReplayIndex(build_archive(tmp / "archive"))
    want = {(url, ts): cap.sha256 for (ts, url), cap in index.wayback.items()
            if cap.provider in ids()
            and cdx_key(url) in {cdx_key(u) for u in wayback_urls(cap.provider)}}
    lost_key = min(want)
    sleeps: list[float] = []
    with ReplayServer(index) as server, installed(server.address):
        server.inject(cdx_query_url(wayback_urls("nebius")[0]),
                      Fault("status", 429, retry_after=7))
        server.inject(raw_capture_url(lost_key[1], lost_key[0]), Fault("status", 503, times=MANY))
        failed = [f for p in ids()
                  for f in backfill(p, tmp / "snapshots", pause=0, sleep=sleeps.append).failed]
    got = {(c.url, c.captured_at.strftime("%Y%m%d%H%M%S")): c.sha256
           for _, _, path in list_archives(tmp / "snapshots") for c in read_captures(path)}
    del want[lost_key]
    ok = got == want and failed == [(*lost_key, "HTTP 503")] and 7.0 in sleeps
    return ProbeResult(ok, _diff(want.items(), got.items()), _diff(got.items(), want.items()),
                       f"{len(got)} Wayback captures backfilled byte for byte; 429 waited "
                       f"Retry-After; 503 capture reported after 5 tries")


PROBES = [
    Probe("live", "every provider's real plan, replayed", clean_night),
    Probe("live", "429/503/timeouts/cut bodies in the crawl", faulty_night),
    Probe("live", "nightly live step, one provider down", nightly_step),
    Probe("live", "Wayback CDX + id_ with 429/503", wayback),
]
