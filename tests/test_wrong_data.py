"""Wrong data that used to load quietly (reliability issue, items 1-5), on the real captures:
a x10 page nine days later, a capture dated in the future, an empty capture later the same day,
half the prices "N/A", a lake partition edited by hand."""

import datetime as dt
import subprocess
import sys

import pytest

from gpuprices.flows.ops.alerts import render_summary
from gpuprices.flows.ops.status import status_table
from gpuprices.flows.pipeline import gates
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import FUTURE_SKEW, Capture, FutureCaptureError, read_captures
from gpuprices.spiders.importer import import_capture, parse_timestamp
from gpuprices.spiders.parsers import parse_body_counted, wants
from gpuprices.warehouse import lake, price_bands
from tests.conftest import ROOT, manifest_rows
from tests.faults import wrong_data as wd


def gp(*args):
    return subprocess.run([sys.executable, "-m", "gpuprices", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


# Item 1: a move beyond the limit is held whatever the gap; the band stops a x10.

def test_crusoe_page_x10_nine_days_later_is_held(tmp_path):
    s = wd.fresh(tmp_path, "crusoe")
    results, later = wd.x10_nine_days_later(s)
    (bad,) = [r for r in results if r.snapshot_date == later]
    assert bad.status == "failed" and bad.rows == 0 and bad.quarantined == 6
    assert "Crusoe H100" not in bad.message  # the failure names the provider-day, not a row
    held = lake.read_quarantine(s.lake_root, later, "crusoe").to_pylist()
    h100 = [r for r in held if r["gpu_model"] == "H100-SXM-80GB"
            and r["pricing_model"] == "on_demand"]
    assert [r["price_per_hour"] for r in h100] == [39.0]
    assert h100[0]["reason"].startswith("band: 39 USD/GPU-h outside")
    assert wd.query(s, "select count(*) from offers where provider = 'crusoe' "
                       "and price_per_hour >= 39") == [(0,)]
    # Crusoe's real 3.90 is still its H100 price.
    assert wd.query(s, "select price_per_hour from latest_offers where provider = 'crusoe' "
                       "and gpu_model = 'H100-SXM-80GB' and pricing_model = 'on_demand'") == [
        (3.9,)]


def test_the_move_gate_alone_holds_the_x10_nine_days_later(tmp_path):
    """Without any band (a GPU model the history does not know), the move gate holds it."""
    s = wd.fresh(tmp_path, "crusoe")
    wd.replay(s, "crusoe")
    later = wd.CRUSOE_DAY + dt.timedelta(days=9)
    ref = pipeline.reference(s, "crusoe", later)
    ref.known, ref.band = {}, {}
    cap = [c for c in read_captures(
        s.archive_root / wd.CRUSOE_DAY.isoformat() / "crusoe.warc.gz")][-1]
    cap.body, cap.captured_at = wd.crusoe_times(10), dt.datetime.combine(later, dt.time(12),
                                                                         dt.UTC)
    offers, _ = parse_body_counted(cap.body, cap.meta())
    out = gates.run_gates(offers, ref)
    assert out.good == [] and len(out.bad) == len(offers) == 6
    assert all(r.startswith("move: ") and "beyond 3x" in r for _, r in out.bad)
    assert all(m.quarantined and round(m.ratio) == 10 for m in out.moves)


# Real prices the band table leaves out on purpose (its `source` column says so): the gate keeps
# holding them for a person to release.
HELD_ON_PURPOSE = {
    # a GPU.ai host asking 154.67/h for 4x RTX 5090 (38.67 per GPU-hour, 56x the next dearest)
    ("tests/fixtures/raw/gpuai/cgi_gpuai_pricing_page2.json",
     "rtx_5090/4x/community/container/offering 79ff8ac1608a"),
}


def test_every_real_bundled_price_is_inside_its_band_and_most_x10_copies_are_not():
    ref = gates.Reference(known=price_bands.known_ranges())
    inside = outside_x10 = 0
    held = set()
    for r in manifest_rows():
        if r["provider"] == "ecb":
            continue
        cap = Capture(provider=r["provider"], url=r["url"], method=r["method"],
                         body=(ROOT / r["file"]).read_bytes(),
                         captured_at=parse_timestamp(r["captured_at"]))
        if not wants(cap.meta()):
            continue
        offers, _ = parse_body_counted(cap.body, cap.meta())
        for o in offers:
            band = gates.band_for(ref, o) if o.gpu_model else None
            if band is None:
                continue
            if (r["file"], o.sku) in HELD_ON_PURPOSE:
                assert not band[0] <= o.price_per_gpu_hour <= band[1], (r["file"], o.sku)
                held.add((r["file"], o.sku))
                continue
            assert band[0] <= o.price_per_gpu_hour <= band[1], (r["file"], o.sku)
            inside += 1
            outside_x10 += not band[0] <= o.price_per_gpu_hour * 10 <= band[1]
    # 88.4 % of 1,270 rows of the 31 providers (2026-12-03); the 916 rows of the first 18 stay
    # at 90.2 % with or without the newer captures in the bands: the newer ones add cheap cards
    # of models whose real spread is itself near 10 (H200 2.60-13.78, L40S 0.38-5.46, RTX PRO
    # 6000 0.50-11.87), where a x10 copy can fall inside.
    assert held == HELD_ON_PURPOSE
    assert inside > 500 and outside_x10 / inside > 0.88, outside_x10 / inside


# Item 2: captures dated later than now are refused at import and at replay.

def test_a_future_capture_is_refused_at_import(tmp_path):
    row = wd.real_row("crusoe", wd.CRUSOE_PAGE)
    snap = tmp_path / "snapshots"
    with pytest.raises(FutureCaptureError, match="later than now"):
        import_capture(snap, ROOT / row["file"], "crusoe", row["url"], wd.FUTURE)
    assert not snap.exists()
    r = gp("import-capture", ROOT / row["file"], "--provider", "crusoe", "--url", row["url"],
           "--captured-at", "2027-06-01", "--archive", snap)
    assert r.returncode == 2 and "not archived: crusoe: " in r.stderr
    assert "2027-06-01T00:00:00Z, later than now" in r.stderr and not snap.exists()
    # Clock skew inside the allowance is no future.
    soon = dt.datetime.now(dt.UTC) + FUTURE_SKEW / 2
    path, added = import_capture(snap, ROOT / row["file"], "crusoe", row["url"], soon)
    assert added and path.exists()


def test_a_future_capture_already_archived_is_refused_at_replay(tmp_path):
    s = wd.fresh(tmp_path, "crusoe")
    with wd.clock_unchecked():
        wd.add_capture(s, "crusoe", wd.CRUSOE_PAGE, wd.crusoe_times(1), wd.FUTURE)
    results = wd.replay(s, "crusoe")
    (refused,) = [r for r in results if r.status == "failed"]
    assert refused.snapshot_date is None  # never the run's "today"
    assert "archive dated 2027-06-01" in refused.message and "refused" in refused.message
    assert wd.query(s, "select max(snapshot_date) from offers") == [(wd.CRUSOE_DAY,)]
    assert wd.query(s, "select as_of from latest_snapshot") == [(wd.CRUSOE_DAY,)]


def test_a_capture_later_today_is_refused_and_the_good_one_stands(tmp_path):
    s = wd.fresh(tmp_path, "crusoe")
    now = dt.datetime.now(dt.UTC)
    with wd.clock_unchecked():
        wd.add_capture(s, "crusoe", wd.CRUSOE_PAGE, wd.crusoe_times(1), now)
        wd.add_capture(s, "crusoe", wd.CRUSOE_PAGE, wd.crusoe_times(10), now + FUTURE_SKEW * 3)
    results = wd.replay(s, "crusoe")
    # Whether the later capture falls on today's file or (near midnight) on tomorrow's, it is
    # refused, and today keeps the real page's 3.90.
    assert any("later than" in e and "refused" in e for r in results for e in r.errors)
    assert wd.query(s, "select count(*) from offers where price_per_hour >= 39") == [(0,)]
    assert wd.query(s, "select price_per_hour from offers where snapshot_date = ? and "
                       "gpu_model = 'H100-SXM-80GB' and pricing_model = 'on_demand'",
                    now.date()) == [(3.9,)]


# Item 3: the latest parseable capture of a day is the one used.

def test_an_empty_capture_later_the_same_day_does_not_win(tmp_path):
    s = wd.fresh(tmp_path, "runpod")
    clean, res = wd.empty_later_capture(s)
    assert res.rows == clean.rows > 50 and res.status == "degraded"
    assert (f"runpod: {wd.RUNPOD_API}: the later capture of 2026-09-29 18:00:00Z could not be "
            "read (empty response body); used the capture of 2026-09-29 12:00:00Z"
            ) in res.errors
    assert "the later capture of 2026-09-29 18:00:00Z could not be read" in wd.summary_text(s)
    assert wd.query(s, "select count(*) from offers where snapshot_date = ?",
                    wd.RUNPOD_DAY) == [(clean.rows,)]


# Item 4: rows skipped by a parser are counted with their reason.

def test_rows_a_parser_skips_are_counted_in_the_summary_and_status(tmp_path):
    s = wd.fresh(tmp_path, "runpod")
    res, n_na = wd.half_na_night(s)
    later = res.snapshot_date
    assert n_na > 20 and res.skipped["no price ('N/A')"] == n_na
    text = render_summary("r", [res])
    assert "## Rows the parsers passed over" in text
    assert f"| runpod | {later} | {sum(res.skipped.values())} | " in text
    assert f"no price ('N/A'): {n_na}" in text
    table = status_table([res])
    skipped = table.columns[[c.header for c in table.columns].index("skipped")]
    assert list(skipped.cells) == [str(sum(res.skipped.values()))]


# Item 5: a lake partition edited by hand is refused by `gpuprices load`, by name.

def test_load_refuses_a_partition_edited_by_hand_and_names_it(tmp_path):
    s = wd.fresh(tmp_path, "runpod")
    results = wd.replay(s, "runpod")
    total = sum(r.rows for r in results)
    path = wd.edit_partition_by_hand(s, wd.RUNPOD_DAY, "runpod", 100)
    s.db_path.unlink()
    r = gp("load", "--data-dir", s.data_dir, "--archive", s.archive_root)
    assert r.returncode == 1
    assert f"REFUSED {path}: SHA-256" in " ".join(r.stderr.split())
    edited = [x.rows for x in results if x.snapshot_date == wd.RUNPOD_DAY][0]
    assert f"loaded {total - edited} rows from {len(results) - 1} partitions" in r.stdout
    assert wd.query(s, "select count(*) from offers where snapshot_date = ?",
                    wd.RUNPOD_DAY) == [(0,)]
    with pytest.raises(lake.ChecksumError, match="edited or damaged"):
        lake.read_partition(s.lake_root, wd.RUNPOD_DAY, "runpod")
    # The pipeline's own rewrite records a new checksum: the day loads again.
    wd.replay(s, "runpod", wd.RUNPOD_DAY.isoformat())
    assert wd.query(s, "select count(*) from offers where snapshot_date = ?",
                    wd.RUNPOD_DAY) == [(edited,)]
