"""Aggregators' rows (spiders/resold.py): each keeps the cloud that runs the machine, a buyer
reads "via Shadeform from <cloud>", and a listing of a cloud we read first-party is never
counted as a second market price (price_caveat), on the real Shadeform, Verda and Lambda
captures loaded through the pipeline."""

import datetime as dt

import duckdb
import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.reports.tables import offer_label
from gpuprices.reports.workloads import AGGREGATOR_NOTE, choices_table
from gpuprices.spiders import resold
from gpuprices.spiders.importer import import_capture, parse_timestamp
from tests.conftest import ROOT, manifest_rows

DAY = dt.date(2026, 8, 22)


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("resold")
    root = tmp / "snapshots"
    for p in ("shadeform", "verda", "lambda"):
        for r in manifest_rows(p):
            import_capture(root, ROOT / r["file"], p, r["url"], parse_timestamp(r["captured_at"]),
                           method=r["method"], origin=r["origin"])
    settings = Settings(data_dir=tmp / "data", archive_root=root).ensure()
    for p in ("shadeform", "verda", "lambda"):
        loading.load(settings, pipeline.replay(settings, p, "all"), f"r-{p}")
    connection = duckdb.connect(str(settings.db_path), read_only=True)
    yield connection
    connection.close()


def rows(con, sql, *params):
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def test_first_party_clouds_are_named():
    assert resold.first_party("lambdalabs") == "lambda"
    assert resold.first_party("Vast.ai") == "vast"
    assert resold.first_party("Verda") == "verda"
    assert resold.first_party("paperspace") is None
    # A cloud never counts under itself.
    tagged = resold.tag({}, "GPU.ai", "GPU.ai", reader="gpuai")
    assert "counted_under" not in tagged and tagged["via"] == "via GPU.ai from GPU.ai"


def test_a_listing_of_a_first_party_cloud_is_set_apart(con):
    apart = rows(con, "SELECT sku, why FROM offers_set_apart(?::DATE, 'USD') "
                      "WHERE provider = 'shadeform'", DAY)
    by_sku = {r["sku"]: r["why"] for r in apart}
    assert by_sku["verda/B300x8"].startswith(
        "via Shadeform from Verda: a resold listing of verda's own offer")
    assert by_sku["lambdalabs/B200_sxm6x8"].startswith("via Shadeform from Lambda: ")
    # Every set-apart Shadeform row is one of a cloud we read, and no such row is firm.
    firm = rows(con, "SELECT sku, extra FROM latest_offers WHERE provider = 'shadeform' "
                     "AND firm_price")
    assert firm and not any('"counted_under"' in r["extra"] for r in firm)
    assert {r["sku"].split("/")[0] for r in firm} >= {"paperspace", "vultr", "denvr"}


def test_no_figure_counts_one_machine_twice(con):
    lowest = rows(con, "SELECT gpu_model, provider FROM gpu_provider_lowest(?::DATE, 'USD') "
                       "WHERE provider = 'shadeform'", DAY)
    # Shadeform's B300s are Verda's and Scaleway's, both read first-party: no Shadeform B300.
    assert lowest and "B300-288GB" not in {r["gpu_model"] for r in lowest}
    day_min = rows(con, "SELECT gpu_model FROM provider_day_lowest WHERE provider = "
                        "'shadeform' AND gpu_model = 'B300-288GB'")
    assert day_min == []
    (b300,) = rows(con, "SELECT provider FROM cheapest_now WHERE gpu_model = 'B300-288GB' "
                        "AND pricing_model = 'on_demand'")
    assert b300["provider"] != "shadeform"


def test_a_buyer_reads_via_the_aggregator_from_the_cloud(con):
    (row,) = rows(con, "SELECT provider, sku, extra FROM latest_offers WHERE provider = "
                       "'shadeform' AND sku = 'paperspace/A100_sxm4_80Gx8' LIMIT 1")
    assert offer_label(row["provider"], row["sku"], row["extra"]) == (
        "shadeform paperspace/A100_sxm4_80Gx8 (via Shadeform from Paperspace)")
    assert offer_label("lambda", "gpu_8x_h100_sxm5", None) == "lambda gpu_8x_h100_sxm5"
    sections = [dict(name="w", choices={"on_demand": dict(
        cost_to_finish=1.0, reason="fits", offer="x", supply="aggregator")})]
    (headline, *_) = choices_table(sections).rows
    assert headline["reason"] == f"{AGGREGATOR_NOTE}; fits"
