"""One offer whatever it was read from (warehouse/identity.py, VERSION 3), on the real bundled
snapshots: GCP's history export (2026-07-30) then its pricing page (2026-10-05), Runpod's 2023
pricing page then its 2026 GraphQL API. price_changes, offer_history and offer_turnover follow
the offer across the change of source."""

import datetime as dt

import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.reports.tables import view_rows
from gpuprices.warehouse import db
from tests.conftest import ROOT

W41 = (dt.date(2026, 10, 5), dt.date(2026, 10, 11))
# GCP's page (2026-10-05) against its history export (2026-07-30): 67 days apart, more than the
# default age limit (14), so the week's questions compare them only when asked with a limit
# this wide.
GAP = (dt.date(2026, 10, 5) - dt.date(2026, 7, 30)).days


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    base = tmp_path_factory.mktemp("sources")
    s = Settings(base / "data", ROOT / "snapshots").ensure()  # the archive is only read
    results = pipeline.reparse(s, "gcp") + pipeline.reparse(s, "runpod")
    assert all(r.status == "ok" for r in results)
    # Each of these provider-days was read from one source: nothing was superseded.
    assert not any("superseded" in r.quarantine_reasons for r in results)
    loading.load(s, results, "20261012T020000-testrun")
    c = db.connect(s.db_path, read_only=True)
    yield c
    c.close()


A2_SPOT = ("provider = 'gcp' AND sku = 'a2-highgpu-1g' AND region = 'us-central1' "
           "AND pricing_model = 'spot'")


def test_w41_price_changes_hold_the_gcp_a2_spot_move(con):
    # Before, the history export's rows and the page's were two offers each: no change at all.
    assert view_rows(con, "SELECT * FROM price_changes_between(?, ?, 'USD')", *W41) == []
    rows = view_rows(con, "SELECT * FROM price_changes_between(?, ?, 'USD', max_age_days := ?)",
                     *W41, GAP)
    a2 = [r for r in rows if (r["provider"], r["sku"], r["region"], r["pricing_model"])
          == ("gcp", "a2-highgpu-1g", "us-central1", "spot")]
    assert [(r["old_date"], r["old_price_per_hour"], r["new_price_per_hour"]) for r in a2] == [
        (dt.date(2026, 7, 30), 1.92802, 2.20401)]
    assert round(a2[0]["pct_change"], 1) == 14.3
    # Every GCP change of the week is a us-central1 price the page read: 33 on the bundled data.
    # 36 more differ below one part in a million (the export's recomputed prices in their 9th
    # digit, warehouse/store.py PRICE_TOLERANCE) and are no change.
    assert {(r["provider"], r["region"]) for r in rows} == {("gcp", "us-central1")}
    assert len(rows) == 33
    assert min(abs(r["pct_change"]) for r in rows) > 1


def test_an_offer_keeps_its_id_when_the_source_changes(con):
    hist = view_rows(con, f"SELECT * FROM offer_history WHERE {A2_SPOT} ORDER BY valid_from")  # noqa: S608
    assert len({r["offer_id"] for r in hist}) == 1
    assert [(r["price_per_hour"], r["valid_to"], r["is_current"]) for r in hist][-2:] == [
        (1.92802, dt.date(2026, 7, 30), False), (2.20401, dt.date(2026, 10, 5), True)]
    # Runpod: its four sources (2023 page, 2025 Webflow page "H100 SXM", 2026 JSON-LD page
    # "H100 SXM", 2026 API) name the H100 SXM secure price by the API's GPU id: one history,
    # no snapshot missed (before the page names were mapped, 2025-09 and 2026-08-10 were).
    h100 = view_rows(con, "SELECT * FROM price_changes WHERE provider = 'runpod' "
                      "AND sku = 'NVIDIA H100 80GB HBM3/secure'")
    assert [(r["old_date"], r["old_price_per_hour"], r["new_date"], r["new_price_per_hour"],
             r["missed_snapshots"]) for r in h100] == [
        (dt.date(2023, 9, 29), 4.49, dt.date(2025, 9, 9), 2.69, 0),
        (dt.date(2025, 9, 9), 2.69, dt.date(2026, 8, 10), 2.99, 0),
        (dt.date(2026, 8, 10), 2.99, dt.date(2026, 8, 25), 3.29, 0),
        (dt.date(2026, 8, 25), 3.29, dt.date(2026, 9, 29), 3.49, 0)]


def test_w41_nothing_disappears_from_a_hand_trimmed_page(con):
    """The 2026-10-05 page is a hand-trimmed excerpt (two tables, us-central1), marked partial:
    the export's offers it does not list were not read, so none disappeared, even with an age
    limit wide enough to compare the two snapshots. What the page lists and the export did not
    is new all the same."""
    (why,) = con.execute("SELECT partial FROM partial_snapshots WHERE provider = 'gcp' "
                         "AND snapshot_date = DATE '2026-10-05'").fetchone()
    assert why.startswith("hand-trimmed excerpt")
    absent = con.execute(
        "SELECT count(DISTINCT offer_id) FROM offer_observations WHERE provider = 'gcp' "
        "AND snapshot_date = DATE '2026-07-30' AND region = 'us-central1' AND offer_id NOT IN "
        "(SELECT offer_id FROM offer_observations WHERE provider = 'gcp' "
        "AND snapshot_date = DATE '2026-10-05')").fetchone()[0]
    assert absent > 0  # the 13 counted as disappeared before the mark
    rows = view_rows(con, "SELECT * FROM offer_turnover(?, ?, max_age_days := ?)", *W41, GAP)
    assert {r["change"] for r in rows} == {"appeared", "new_pricing"}
    assert {r["region"] for r in rows} == {"us-central1"}
