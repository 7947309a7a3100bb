"""The live path, offline, from the pipeline's side: the nightly live step
(`gpuprices.flows.pipeline.live.live_day`: crawl process -> archive -> parse -> gates -> lake, then
`load`) and the Wayback backfill, each against the replay server of the project's archive."""

from __future__ import annotations

import duckdb
import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import live
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import list_archives, read_captures
from gpuprices.spiders.crawl import SETTINGS_ENV
from gpuprices.spiders.registry import ids, wayback_urls
from gpuprices.spiders.wayback import backfill, cdx_query_url, raw_capture_url
from tests.replay.drive import REPLAY_GROUP, ROOT, comparable, day_offers, shared_archive
from tests.replay.loopback import installed, settings_json
from tests.replay.scenarios import LAMBDA, MANY
from tests.replay.server import Fault, ReplayIndex, ReplayServer, cdx_key

pytestmark = REPLAY_GROUP


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return shared_archive(tmp_path_factory)


def test_a_failing_provider_fails_alone_and_the_others_load(archive, tmp_path, monkeypatch):
    """Lambda answers 503 whatever the retries; Runpod is replayed. Lambda's day fails with an
    error naming the provider and the URL and its raw 503 is archived; Runpod's offers go
    through the gates into the lake and the warehouse, equal to the direct replay's."""
    settings = Settings(tmp_path / "data", tmp_path / "snapshots").ensure()
    with ReplayServer(ReplayIndex(archive)) as server:
        server.inject(LAMBDA, Fault("status", 503, times=MANY))
        monkeypatch.setenv(SETTINGS_ENV, settings_json(server.address, DOWNLOAD_TIMEOUT=5))
        monkeypatch.setenv("PYTHONPATH", str(ROOT))
        lam = live.live_day(settings, "lambda")
        run = live.live_day(settings, "runpod")
        served = [s.served for s in server.seen if s.served is not None and s.status == 200]
    assert (lam.status, lam.snapshot_date) == ("failed", None)
    assert lam.errors == [f"lambda: {LAMBDA}: HTTP 503"]
    kept = {p: [c.status for c in read_captures(path)]
            for _, p, path in list_archives(settings.archive_root)}
    assert kept["lambda"] == [503]
    assert run.status == "ok" and run.errors == [], run.errors
    direct, _ = day_offers("runpod", [c for c in served if c.provider == "runpod"])
    # Every row the direct replay parses is loaded or held back (the page's rows for SKUs the
    # API also prices are quarantined as superseded: identity.SOURCE_PRECEDENCE).
    assert run.rows + run.quarantined == len(direct) and run.rows > 0
    loading.load(settings, [lam, run], pipeline.new_run_id())
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        loaded = con.execute("select provider, count(*) from offers group by 1").fetchall()
    finally:
        con.close()
    assert loaded == [("runpod", run.rows)]
    # The night is the crawl's own date, not the replayed captures' dates.
    assert run.snapshot_date not in {c.snapshot_date for c in served}


def _wayback_captures(index: ReplayIndex, provider: str) -> dict[tuple[str, str], str]:
    """(original URL, timestamp) -> sha256 of the archived Wayback captures of a provider's
    pricing URLs: what the backfill should bring back."""
    keys = {cdx_key(u) for u in wayback_urls(provider)}
    return {(url, ts): cap.sha256 for (ts, url), cap in index.wayback.items()
            if cap.provider == provider and cdx_key(url) in keys}


def test_wayback_backfill_replays_cdx_and_captures_with_backoff(archive, tmp_path):
    """Every provider's backfill lists its pricing URLs through the CDX API and fetches each
    capture's id_ URL from the replay server: it archives the same bytes under the original URL
    and time. A 429 with Retry-After on a CDX query is waited for as asked; a capture that
    answers 503 every time is tried 5 times and reported, the others are archived."""
    index = ReplayIndex(archive)
    nebius_cdx = cdx_query_url(wayback_urls("nebius")[0])
    (lost,) = [k for k in _wayback_captures(index, "crusoe") if k[1].startswith("20250521")]
    sleeps: list[float] = []
    got = {}
    with ReplayServer(index) as server, installed(server.address):
        server.inject(nebius_cdx, Fault("status", 429, retry_after=7))
        server.inject(raw_capture_url(lost[1], lost[0]), Fault("status", 503, times=MANY))
        for p in ids():
            got[p] = backfill(p, tmp_path / "snapshots", pause=0, sleep=sleeps.append)
    waits = [s for s in sleeps if s]  # pause=0 between requests
    # Crusoe's 503s (registry order: crusoe before nebius): the default backoff, 4 waits for 5
    # tries; then Nebius' 429: the Retry-After asked for.
    assert waits == [10.0, 20.0, 40.0, 80.0, 7.0]
    assert got["crusoe"].failed == [(lost[0], lost[1], "HTTP 503")]
    backfilled = {(c.url, c.captured_at.strftime("%Y%m%d%H%M%S")): c.sha256
                  for _, p, path in list_archives(tmp_path / "snapshots")
                  for c in read_captures(path)}
    want = {k: v for p in ids() for k, v in _wayback_captures(index, p).items() if k != lost}
    assert len(want) >= 8 and backfilled == want


def test_the_backfilled_pages_parse_as_the_archived_ones(archive, tmp_path):
    index = ReplayIndex(archive)
    with ReplayServer(index) as server, installed(server.address):
        backfill("nebius", tmp_path / "snapshots", pause=0, sleep=lambda s: None)
    caps = [c for _, _, path in list_archives(tmp_path / "snapshots")
            for c in read_captures(path)]
    live, _ = day_offers("nebius", caps)
    direct, _ = day_offers("nebius", [index.wayback[(c.captured_at.strftime("%Y%m%d%H%M%S"),
                                                     c.url)] for c in caps])
    assert live and comparable(live) == comparable(direct)
