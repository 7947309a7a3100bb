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


W35 = (dt.date(2026, 8, 24), dt.date(2026, 8, 30))


def test_a_partial_capture_makes_no_offer_disappear(con):
    """GPU.ai's 2026-08-25 capture is page 2 (the tail) of its pricing book, ComputePulse's a
    trimmed supply answer (7 of 25 rows): marked partial in the manifest and the archive. The
    offers of their 2026-08-22 captures missing from them were not read, not withdrawn."""
    pairs = {r["provider"]: r for r in view_rows(
        con, "SELECT * FROM week_snapshot_pairs(?, ?)", *W35)}
    for p in ("gpuai", "computepulse"):
        assert pairs[p]["comparable"] and pairs[p]["new_partial"], pairs[p]
        old, new = ({r[0] for r in con.execute(
            "SELECT offer_id FROM offer_observations WHERE provider = ? AND snapshot_date = ?",
            [p, day]).fetchall()} for day in (pairs[p]["old_date"], pairs[p]["new_date"]))
        assert old - new  # offers the partial capture does not list
    rows = view_rows(con, "SELECT * FROM offer_turnover(?, ?)", *W35)
    assert not [r for r in rows if r["provider"] in ("gpuai", "computepulse")]
    (why,) = con.execute("SELECT partial FROM partial_snapshots WHERE provider = 'gpuai' AND "
                         "snapshot_date = DATE '2026-08-25'").fetchone()
    assert "page 2" in why


def test_the_partial_mark_is_kept_by_the_archive(tmp_path):
    from gpuprices.spiders.archive import read_archive
    from gpuprices.spiders.importer import import_capture, parse_timestamp
    from tests.conftest import manifest_rows

    (row,) = [r for r in manifest_rows("gpuai") if r["partial"]][1:]
    path, added = import_capture(tmp_path, ROOT / row["file"], "gpuai", row["url"],
                                 parse_timestamp(row["captured_at"]), partial=row["partial"])
    assert added
    assert [c.partial for c in read_archive(path).captures] == [row["partial"]]
    # and the bundled archive holds the same mark
    bundled = read_archive(ROOT / "snapshots" / "2026-08-25" / "gpuai.warc.gz").captures
    assert [c.partial for c in bundled] == [row["partial"]]
