"""Lambda's price history from the bundled snapshots (2024-11-03, 2026-01-09, ~2026-08-22),
loaded into a warehouse as `make run` loads it: price_changes shows the 2026 move."""

from pathlib import Path

import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.warehouse import db

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def lambda_settings(tmp_path_factory):
    s = Settings(tmp_path_factory.mktemp("lambda") / "data", ROOT / "snapshots").ensure()
    days = [d for d, _, _ in pipeline.archives(s, ["lambda"])]
    results = pipeline.reparse(s, "lambda", days)
    assert [r.status for r in results] == ["ok"] * 3, [r.errors for r in results]
    loading.load(s, results, "20260822T120000-lambda-history")
    return s


def _rows(settings, sql, params=()):
    con = db.connect(settings.db_path, read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def test_price_changes_shows_the_2026_h100_move(lambda_settings):
    got = _rows(lambda_settings,
                "SELECT old_date::VARCHAR, new_date::VARCHAR, old_price_per_gpu_hour, "
                "new_price_per_gpu_hour FROM price_changes WHERE provider = 'lambda' "
                "AND sku = '8x NVIDIA H100 SXM 80 GB' AND pricing_model = 'on_demand'")
    assert got == [("2026-01-09", "2026-08-22", 2.99, 3.99)]
    b200 = _rows(lambda_settings,
                 "SELECT old_price_per_gpu_hour, new_price_per_gpu_hour FROM price_changes "
                 "WHERE sku = '8x NVIDIA B200 SXM6 180 GB'")
    assert b200 == [(4.99, 6.69)]


def test_clusters_load_as_committed_offers_by_size_and_term(lambda_settings):
    got = _rows(lambda_settings,
                "SELECT gpu_model, gpu_count, price_per_gpu_hour, "
                "json_extract_string(extra, '$.cluster_duration'), "
                "json_extract_string(extra, '$.cluster_gpus') FROM latest_offers "
                "WHERE provider = 'lambda' AND pricing_model = 'committed' ORDER BY ALL")
    assert len(got) == 6
    assert ("H100-SXM-80GB", 16.0, 6.16, "2 weeks – 1 year", "16") in got
    assert ("B200-180GB", 256.0, 8.87, "2 weeks – 1 year", "256+") in got
