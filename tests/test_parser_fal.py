"""fal parser on the real excerpt of fal.ai/pricing (values as in ../shared/PROVIDERS_MORE2.md)
and bad input derived from it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders import registry
from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.fal import source
from gpuprices.spiders.providers.fal.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

CAPTURE = Path(__file__).parent / "fixtures" / "raw" / "fal" / "cgi_fal_pricing.html"
URL = "https://fal.ai/pricing"


def meta() -> CaptureMeta:
    return CaptureMeta(provider="fal", url=URL,
                       captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def rows():
    return {o.sku: o for o in parse_body(CAPTURE.read_bytes(), meta())}


def test_list_prices_per_gpu_hour(rows):
    assert {sku: o.price_per_hour for sku, o in rows.items()} == {
        "B300 288GB": 8.50, "B200 180GB": 6.25, "H200 141GB": 4.50, "H100 80GB": 4.50,
        "RTX PRO 6000 96GB": 2.99}
    assert rows["H100 80GB"].gpu_model == "H100-SXM-80GB"
    assert rows["H200 141GB"].gpu_model == "H200-141GB"
    assert rows["RTX PRO 6000 96GB"].gpu_model == "RTX-PRO-6000-96GB"
    assert all(o.pricing_model == "on_demand" and o.billing_increment_s == 1
               for o in rows.values())


def test_as_low_as_is_a_floor_not_a_row(rows):
    assert rows["H100 80GB"].extra["as_low_as"] == 1.89
    assert rows["B300 288GB"].extra["as_low_as"] == 4.49
    assert rows["RTX PRO 6000 96GB"].extra["as_low_as"] == 1.10
    assert all(o.price_per_hour not in (1.89, 4.49, 1.10) for o in rows.values())


def test_flight_copy_and_model_apis_give_no_row(rows):
    text = CAPTURE.read_text()
    assert "$$8.50/h" in text  # RSC copy of the B300 price
    assert "$<!-- -->0.05" in text and "$<!-- -->0.03" in text  # per second / per image
    assert len(rows) == 5
    assert rows["B200 180GB"].extra["service"] == "serverless_app_compute"
    assert registry.declaration("fal").kind == "inference_host"


def test_no_gpu_table_is_an_error():
    body = CAPTURE.read_text().replace(">List Price</th>", ">Price</th>")
    with pytest.raises(ParseError, match="fal.*fal.ai/pricing.*List Price"):
        parse(body.encode(), meta())


def test_fetch_plan():
    assert [r.url for r in source.start_requests({})] == [URL]
