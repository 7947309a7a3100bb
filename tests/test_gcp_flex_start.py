"""Google's DWS Flex-start price is not an on-demand price (issue 30, item 5), on the real GCP
pricing page (tests/fixtures/raw/gcp/gpu-price-index_gcp.html). The parser keeps the row
(pricing_model on_demand, extra.gcp_model = dws_flex_start); the one firm-price rule
(warehouse/sql/staging/price_caveat.sql) keeps it out of every on-demand figure with its caveat."""

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.providers.gcp.parser import parse
from gpuprices.warehouse import db
from gpuprices.warehouse.contract import CaptureMeta, offers_to_table

PAGE = Path(__file__).parent / "fixtures" / "raw" / "gcp" / "gpu-price-index_gcp.html"
DAY = dt.date(2026, 10, 5)


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    meta = CaptureMeta("gcp", "https://cloud.google.com/compute/gpus-pricing",
                       dt.datetime(2026, 10, 5, 12, tzinfo=dt.UTC))
    connection = db.connect(str(tmp_path_factory.mktemp("gcp") / "w.duckdb"))
    db.init_schema(connection)
    db.load_partition(connection, DAY, "gcp", offers_to_table(parse(PAGE.read_bytes(), meta)))
    yield connection
    connection.close()


def _firm_on_demand(con, sku):
    return con.execute("SELECT price_per_hour, price_per_gpu_hour FROM offers_as_of(?::DATE) "
                       "WHERE sku = ? AND pricing_model = 'on_demand' AND firm_price",
                       [DAY, sku]).fetchall()


def test_on_demand_is_the_list_price_not_flex_start(con):
    ((node, gpu_h),) = _firm_on_demand(con, "a3-highgpu-8g")
    assert node == pytest.approx(88.490000119) and round(gpu_h, 2) == 11.06
    assert _firm_on_demand(con, "a2-highgpu-1g") == [(pytest.approx(3.673385),) * 2]
    # The flex-start rows are still listed, with the reason they are set apart.
    flex = con.execute("SELECT sku, price_per_hour, price_caveat FROM offers_as_of(?::DATE) "
                       "WHERE extra->>'gcp_model' = 'dws_flex_start' AND sku IN "
                       "('a3-highgpu-8g', 'a2-highgpu-1g') ORDER BY sku", [DAY]).fetchall()
    assert [(s, p) for s, p, _ in flex] == [("a2-highgpu-1g", 2.0), ("a3-highgpu-8g", 38.32)]
    assert all("DWS Flex-start" in c for _, _, c in flex)


def test_no_on_demand_figure_takes_a_flex_start_price(con):
    rows = con.execute(
        "SELECT gpu_model, sku, round(price_per_gpu_hour, 6) FROM cheapest_now "
        "WHERE pricing_model = 'on_demand' AND gpu_model IN ('A100-40GB', 'H100-SXM-80GB')"
    ).fetchall()
    # List prices (flex-start would give A100-40GB 2.00 and H100 4.79 per GPU-hour).
    assert sorted(rows) == [("A100-40GB", "a2-megagpu-16g", 3.483719),
                            ("H100-SXM-80GB", "a3-highgpu-8g", 11.06125)]
    cheapest = {m: p for m, _, p in rows}
    daily = dict(con.execute(
        "SELECT gpu_model, round(price_per_gpu_hour, 6) FROM cheapest_daily WHERE day = ? "
        "AND pricing_model = 'on_demand' AND gpu_model IN ('A100-40GB', 'H100-SXM-80GB')",
        [DAY]).fetchall())
    assert daily == cheapest
    lowest = dict(con.execute(
        "SELECT gpu_model, round(lowest, 6) FROM gpu_provider_lowest(?::DATE, 'USD') "
        "WHERE gpu_model IN ('A100-40GB', 'H100-SXM-80GB')", [DAY]).fetchall())
    assert lowest == cheapest
    # B200 on GCP has no list on-demand price (N/A on the page), only flex-start: no figure.
    assert con.execute("SELECT count(*) FROM cheapest_now WHERE gpu_model = 'B200-180GB' "
                       "AND pricing_model = 'on_demand'").fetchone() == (0,)
    # Spot is below on-demand again for a3-highgpu-8g.
    spot = con.execute("SELECT price_per_hour FROM offers_as_of(?::DATE) WHERE sku = "
                       "'a3-highgpu-8g' AND pricing_model = 'spot'", [DAY]).fetchone()[0]
    assert spot < 88.490000119
