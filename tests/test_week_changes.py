"""What changed in a week, on the real bundled snapshots: a new price column of a machine
already listed is not a new offer, and a capture marked partial makes no offer disappear."""

import datetime as dt

import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.reports.tables import view_rows
from gpuprices.warehouse import db
from tests.conftest import ROOT

W40 = (dt.date(2026, 9, 28), dt.date(2026, 10, 4))
# Nebius' 2026-09-30 page against its 2026-08-22 page: 39 days apart, over the default age
# limit, so read here with a limit that wide.
NEBIUS_GAP = (dt.date(2026, 9, 30) - dt.date(2026, 8, 22)).days


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    base = tmp_path_factory.mktemp("weekchanges")
    s = Settings(base / "data", ROOT / "snapshots").ensure()  # the archive is only read
    results = []
    for p in ("nebius", "gpuai", "computepulse", "runpod"):
        results += pipeline.reparse(s, p)
    assert all(r.status != "failed" for r in results), [r.errors for r in results]
    loading.load(s, results, "20261005T020000-weekchanges")
    c = db.connect(s.db_path, read_only=True)
    yield c
    c.close()


def _sku_key(r):
    return r["sku"], r["region"], r["gpu_model"]


def test_a_new_price_column_of_a_listed_machine_is_not_a_new_offer(con):
    rows = view_rows(con, "SELECT * FROM offer_turnover(?, ?, max_age_days := ?) "
                          "WHERE provider = 'nebius'", *W40, NEBIUS_GAP)
    old = {(r["sku"], r["region"], r["gpu_model"]) for r in view_rows(
        con, "SELECT * FROM offer_observations WHERE provider = 'nebius' "
             "AND snapshot_date = DATE '2026-08-22'")}
    new = {(r["sku"], r["region"], r["gpu_model"]) for r in view_rows(
        con, "SELECT * FROM offer_observations WHERE provider = 'nebius' "
             "AND snapshot_date = DATE '2026-09-30'")}
    added = [r for r in rows if r["change"] == "new_pricing"]
    dropped = [r for r in rows if r["change"] == "pricing_withdrawn"]
    # Every SKU of the newer page was on the older one: no offer appeared or disappeared, but
    # "from" spot floors and announced on-demand prices were added and flat spot prices dropped.
    assert new <= old
    assert added and dropped
    assert not [r for r in rows if r["change"] in ("appeared", "disappeared")]
    assert {_sku_key(r) for r in added + dropped} <= old & new
    assert {r["pricing_model"] for r in added} == {"on_demand", "spot"}
    # the on-demand additions are the announced prices (an identity of their own)
    (announced,) = con.execute("SELECT count(*) FROM offer_observations WHERE provider = "
                               "'nebius' AND snapshot_date = DATE '2026-09-30' "
                               "AND effective_from IS NOT NULL").fetchone()
    assert len([r for r in added if r["pricing_model"] == "on_demand"]) == announced > 0
