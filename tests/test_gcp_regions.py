"""Google Cloud's prices per region: the bundled price history export (tests/fixtures/history/gcp,
snapshots of 2026-07-30) keeps one row per machine type, region and term for all 40 regions it
prices, and the views answer per GPU per day across them; the pricing page (2026-10-05) prices
us-central1 only and continues that region's offers, not the others'. Values read off the real
export's rows (2026-07-30.csv)."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.providers.gcp.history import captures_from_gcp_history
from gpuprices.spiders.providers.gcp.parser import parse
from gpuprices.warehouse import db
from tests.conftest import FIXTURES, ROOT

HISTORY_DAY = dt.date(2026, 7, 30)
PAGE_DAY = dt.date(2026, 10, 5)
# The first export (36 regions) and the billing API capture of 2023-08-10 (3 US regions).
FIRST_EXPORT, API_DAY = dt.date(2023, 1, 12), dt.date(2023, 8, 10)
DAYS = [FIRST_EXPORT, API_DAY, HISTORY_DAY, PAGE_DAY]


@pytest.fixture(scope="module")
def export_rows():
    [cap] = [c for c in captures_from_gcp_history(FIXTURES / "history" / "gcp")
             if c.snapshot_date == HISTORY_DAY]
    return parse(cap.body, cap.meta())


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    """A warehouse of GCP's bundled archives of 2023-01-12 and 2026-07-30 (history export),
    2023-08-10 (billing API, three regions) and 2026-10-05 (pricing page, us-central1), read in
    place from snapshots/."""
    s = Settings(tmp_path_factory.mktemp("gcp-regions") / "data", ROOT / "snapshots").ensure()
    results = pipeline.reparse(s, "gcp", DAYS)
    assert [r.status for r in results] == ["ok"] * 4, [r.errors for r in results]
    loading.load(s, results, "20261006T020000-gcp-regions")
    c = db.connect(s.db_path, read_only=True)
    yield c
    c.close()


def _one(rows, sku, region, model="on_demand", months=None):
    [o] = [o for o in rows if o.sku == sku and o.region == region
           and o.pricing_model == model and o.commitment_months == months]
    return o


def test_the_export_gives_one_row_per_machine_region_and_term(export_rows):
    assert len({o.region for o in export_rows}) == 40
    keys = [(o.sku, o.region, o.pricing_model, o.commitment_months) for o in export_rows]
    assert len(keys) == len(set(keys)) == 3609
    a3 = {o.region: o.price_per_hour for o in export_rows
          if o.sku == "a3-highgpu-8g" and o.pricing_model == "on_demand"}
    assert a3["us-central1"] == 88.4899999025753
    assert a3["europe-west4"] == 112.540479175233
    assert a3["me-central2"] == 141.583993642521  # the dearest region
    assert min(a3.values()) == 88.4899999025753 and max(a3.values()) == a3["me-central2"]
    spot = _one(export_rows, "a3-highgpu-8g", "southamerica-east1", "spot")
    assert spot.price_per_hour == 12.951690739726 and spot.extra["provider_term"] == "Spot"
    cud = _one(export_rows, "a3-highgpu-8g", "europe-west4", "committed", 12)
    assert cud.price_per_hour == pytest.approx(56991.96544192 / 730)
    assert _one(export_rows, "a2-highgpu-1g", "africa-south1").price_per_hour == 4.80478794
    assert _one(export_rows, "a2-highgpu-1g", "asia-northeast1", "spot").price_per_hour == (
        2.429675)
    assert all(o.extra["source"] == "history" for o in export_rows)


def test_the_warehouse_keeps_every_region_of_the_export(con):
    n, regions = con.execute(
        "SELECT count(*), count(DISTINCT region) FROM offers WHERE provider = 'gcp' "
        "AND snapshot_date = ?", [HISTORY_DAY]).fetchone()
    assert (n, regions) == (3609, 40)
    page = con.execute("SELECT DISTINCT region FROM offers WHERE snapshot_date = ?",
                       [PAGE_DAY]).fetchall()
    assert page == [("us-central1",)]


def test_cheapest_per_gpu_per_day_ranks_all_regions(con):
    rows = {(r[0], r[1]): r[2:] for r in con.execute(
        "SELECT gpu_model, pricing_model, sku, region, price_per_gpu_hour, n_offers "
        "FROM cheapest_daily WHERE day = ?", [HISTORY_DAY]).fetchall()}
    # a2-megagpu-16g spot in europe-north1: 5.12112 for 16 GPUs, cheapest of 195 region offers
    sku, region, per_gpu, n = rows[("A100-40GB", "spot")]
    assert (sku, region, n) == ("a2-megagpu-16g", "europe-north1", 195)
    assert per_gpu == pytest.approx(5.12112 / 16)
    sku, region, per_gpu, _ = rows[("H100-SXM-80GB", "spot")]
    assert (sku, region) == ("a3-highgpu-1g", "northamerica-northeast1")
    assert per_gpu == pytest.approx(1.13323046575342)
    # on-demand H100 is cheapest in the three regions at 88.49 per node: ties go alphabetically
    sku, region, per_gpu, _ = rows[("H100-SXM-80GB", "on_demand")]
    assert region in ("us-central1", "us-east1", "us-west1")
    assert per_gpu == pytest.approx(88.4899999025753 / 8, rel=1e-3)
    # one winner per GPU model and pricing model, whatever the number of regions
    (dupes,) = con.execute("SELECT count(*) - count(DISTINCT (gpu_model, pricing_model)) "
                           "FROM cheapest_daily WHERE day = ?", [HISTORY_DAY]).fetchone()
    assert dupes == 0


def test_a_snapshot_that_read_three_regions_splits_the_other_regions_runs(con):
    """europe-west4's a2-highgpu-8g kept 29.9838 from the first export to the last, but the
    billing API capture between them priced three US regions only: offer_history ends a run
    when the provider was read and the offer was absent, whatever region was read, so it is two
    runs (a region-aware rule cost 4.7x the view's time at 50 synthetic nights: left out).
    offer_turnover is the view that only counts regions both snapshots read."""
    (regions,) = con.execute("SELECT list(DISTINCT region ORDER BY region) FROM offers "
                             "WHERE snapshot_date = ?", [API_DAY]).fetchone()
    assert regions == ["us-central1", "us-east1", "us-west1"]
    runs = con.execute(
        "SELECT price_per_hour, valid_from, valid_to FROM offer_history "
        "WHERE provider = 'gcp' AND sku = 'a2-highgpu-8g' AND pricing_model = 'on_demand' "
        "AND region = 'europe-west4' ORDER BY valid_from").fetchall()
    assert runs == [(pytest.approx(29.983776), FIRST_EXPORT, FIRST_EXPORT),
                    (pytest.approx(29.983776), HISTORY_DAY, HISTORY_DAY)]


def test_the_page_continues_us_central1_only(con):
    """On 2026-10-05 the page lists us-central1: its offers' history runs on from the export,
    the other 39 regions were not read, so offer_turnover counts none of them as withdrawn."""
    runs = con.execute(
        "SELECT region, valid_from, valid_to FROM offer_history WHERE provider = 'gcp' "
        "AND sku = 'a2-highgpu-8g' AND pricing_model = 'on_demand' "
        "AND region IN ('us-central1', 'europe-west4') ORDER BY region, valid_from").fetchall()
    assert {r[0] for r in runs if r[2] == PAGE_DAY} == {"us-central1"}
    assert ("europe-west4", HISTORY_DAY, HISTORY_DAY) in runs
    gone = con.execute("SELECT DISTINCT region FROM offer_turnover(?::DATE, ?::DATE) "
                       "WHERE change = 'disappeared'", [PAGE_DAY, PAGE_DAY]).fetchall()
    assert gone in ([], [("us-central1",)])
