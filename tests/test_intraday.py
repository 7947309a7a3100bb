"""Intra-day snapshots: an hourly provider's day holds one snapshot per crawl, each named by its
capture time, and a price that moves between two crawls of one day is a change.

Replays Hyperbolic's real rental-options answer (a marketplace, crawled hourly) as two crawls of
the day it was captured: at its real capture time, and an hour later with one price changed
(the only synthetic part: the real answer was captured once)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import parsing
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import Capture, append_captures
from gpuprices.warehouse import lake
from tests.conftest import FIXTURES, manifest_rows
from tests.warehouse_rows import query as _q

ROW = next(r for r in manifest_rows("hyperbolic") if "rental_options" in r["file"])
BODY = (FIXTURES / "raw" / "hyperbolic" / "cgi_hyperbolic_rental_options.json").read_bytes()
FIRST = dt.datetime.fromisoformat(ROW["captured_at"].replace("Z", "+00:00"))  # the real time
SECOND = FIRST + dt.timedelta(hours=1)  # the next hourly crawl
DAY = FIRST.date()


def _changed_body() -> tuple[bytes, int, int]:
    """The real answer with its first enabled option's price lowered by 30 cents: the body, the
    old and the new price in cents."""
    doc = json.loads(BODY)
    option = next(o for o in doc if o.get("enabled"))
    old = option["costPerHourCents"]
    option["costPerHourCents"] = old - 30
    return json.dumps(doc).encode(), old, old - 30


def _capture(body: bytes, at: dt.datetime) -> Capture:
    return Capture(provider="hyperbolic", url=ROW["url"], method="GET", body=body, captured_at=at,
                   headers=[("Content-Type", "application/json")])


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", archive_root=tmp_path / "snap").ensure()


def _replay_and_load(settings: Settings, run_id: str) -> None:
    results = pipeline.replay(settings, "hyperbolic", DAY.isoformat())
    assert [r.status for r in results] == ["ok"], [r.errors for r in results]
    loading.load(settings, results, run_id)


def test_hourly_replays_show_a_move_within_the_day(settings):
    body, old_cents, new_cents = _changed_body()
    append_captures(settings.archive_root, [_capture(BODY, FIRST), _capture(body, SECOND)])
    _replay_and_load(settings, "first")

    # One lake file for the day holding both snapshots, each named by its capture time.
    table = lake.read_partition(settings.lake_root, DAY, "hyperbolic")
    taken = sorted(set(table.column("snapshot_at").to_pylist()))
    assert taken == [FIRST, SECOND]
    per_snapshot = table.num_rows // 2
    assert per_snapshot > 1 and table.num_rows == 2 * per_snapshot

    changes = _q(settings, """
        SELECT DISTINCT old_date, new_date, old_at, new_at, old_price_per_hour, new_price_per_hour,
               missed_snapshots
        FROM price_changes WHERE provider = 'hyperbolic'""")
    # The parser prices Hyperbolic's book by market statistics of each GPU (extra.market_stat:
    # min, p25, median, …); the lowered option moves some of them, each one change.
    assert changes and set(changes) == {
        (DAY, DAY, FIRST, SECOND, old_cents / 100, new_cents / 100, 0)}

    # The day's questions read its latest snapshot: the new price, each offer once.
    listed = _q(settings, "SELECT count(*), count(DISTINCT snapshot_at), min(snapshot_at) "
                          "FROM latest_offers WHERE provider = 'hyperbolic'")
    assert listed == [(per_snapshot, 1, SECOND)]
    offer, sku = _q(settings, "SELECT offer_id, sku FROM price_changes "
                              "WHERE provider = 'hyperbolic' AND variant LIKE '%min'")[0]
    assert _q(settings, """
        SELECT price_per_hour FROM latest_offers WHERE provider = 'hyperbolic' AND sku = ?
          AND json_extract_string(extra, '$.market_stat') = 'min'""", sku) == [
        (new_cents / 100,)]
    runs = _q(settings, """
        SELECT price_per_hour, valid_from_at, valid_to_at, n_snapshots, is_current
        FROM offer_history WHERE offer_id = ? ORDER BY valid_from_at""", offer)
    assert runs == [(old_cents / 100, FIRST, FIRST, 1, False),
                    (new_cents / 100, SECOND, SECOND, 1, True)]
    snapshots = _q(settings, "SELECT snapshot_no, snapshot_at, is_day_last FROM "
                             "provider_snapshots WHERE provider = 'hyperbolic' ORDER BY 1")
    assert snapshots == [(1, FIRST, False), (2, SECOND, True)]

    # A same-day reload of the same captures changes nothing.
    views = ("offers", "price_changes", "offer_history", "cheapest_daily")
    before = [_q(settings, f"SELECT * FROM {v} ORDER BY ALL") for v in views]  # noqa: S608
    _replay_and_load(settings, "again")
    assert [_q(settings, f"SELECT * FROM {v} ORDER BY ALL") for v in views] == before  # noqa: S608
    assert _q(settings, "SELECT count(*) FROM snapshot_dates WHERE provider = 'hyperbolic'"
              ) == [(2,)]


def test_snapshots_follow_the_cadence():
    """An hourly provider's captures split where the crawl paused; a daily provider's day is one
    snapshot whatever it holds (its later capture of a page supersedes the earlier)."""
    at = [FIRST, FIRST + dt.timedelta(minutes=3), SECOND, SECOND + dt.timedelta(seconds=40)]
    caps = [_capture(BODY, t) for t in at]
    assert [[c.captured_at for c in s] for s in parsing.snapshots_of(caps, "hyperbolic")] == [
        at[:2], at[2:]]
    runpod = [Capture(provider="runpod", url="https://api.runpod.io/graphql", body=b"{}",
                      captured_at=t) for t in at]
    assert parsing.snapshots_of(runpod, "runpod") == [runpod]


def test_a_move_against_the_day_before_is_reported_once_per_day(settings):
    """Every snapshot of an hourly day is gated against the day before, so a price that moved
    overnight moves again in each snapshot: the run summary and alerts hear of it once."""
    body, old_cents, new_cents = _changed_body()
    append_captures(settings.archive_root, [_capture(BODY, FIRST - dt.timedelta(days=1)),
                                            _capture(body, FIRST), _capture(body, SECOND)])
    pipeline.replay(settings, "hyperbolic", (DAY - dt.timedelta(days=1)).isoformat())
    (res,) = pipeline.replay(settings, "hyperbolic", DAY.isoformat())
    assert res.status == "ok" and res.moves
    assert len({m.ident for m in res.moves}) == len(res.moves)
    assert {(m.old, m.new) for m in res.moves} == {(old_cents / 100, new_cents / 100)}


def _without(**where) -> bytes:
    """The real answer less the options matching `where` (gpuType, region, gpuCount)."""
    doc = [o for o in json.loads(BODY)
           if not all(o.get(k) == v for k, v in where.items())]
    return json.dumps(doc).encode()


def test_the_week_compares_the_days_latest_snapshot_and_its_partial_mark(settings):
    """Week over week reads each day's latest snapshot, and only its partial mark counts: the day
    before is the real answer; the day's first crawl an excerpt of the H100 listings marked
    partial (every H200 left out), its second the answer without its one 8x H200 listing
    (withdrawn, not marked). The 8x H200 disappeared; the excerpt's gap is no disappearance and
    does not hide the withdrawal. The excerpt's mark survives Hyperbolic's market statistics
    (the postprocess that rebuilds its rows)."""
    before = FIRST - dt.timedelta(days=1)
    excerpt = _capture(_without(gpuType="h200"), FIRST)
    excerpt.partial = "H100 listings only (test excerpt)"
    append_captures(settings.archive_root, [
        _capture(BODY, before), excerpt,
        _capture(_without(gpuType="h200", gpuCount=8), SECOND)])
    for day in (before.date(), DAY):
        results = pipeline.replay(settings, "hyperbolic", day.isoformat())
        assert [r.status for r in results] == ["ok"], [r.errors for r in results]
        loading.load(settings, results, f"run-{day}")

    week = (DAY, DAY + dt.timedelta(days=6))
    assert _q(settings, "SELECT snapshot_date, snapshot_at, partial FROM partial_snapshots "
                        "WHERE provider = 'hyperbolic'") == [(DAY, FIRST, excerpt.partial)]
    assert _q(settings, "SELECT old_date, new_date, new_at, comparable, old_partial, new_partial "
                        "FROM week_snapshot_pairs(?, ?) WHERE provider = 'hyperbolic'", *week
              ) == [(before.date(), DAY, SECOND, True, None, None)]
    turnover = _q(settings, "SELECT DISTINCT change, sku FROM offer_turnover(?, ?) "
                            "WHERE provider = 'hyperbolic'", *week)
    assert turnover == [("disappeared", "h200 sxm5/8x")], turnover
