"""TensorPool parser on the real excerpt of tensorpool.dev/pricing (values as in
../shared/PROVIDERS_MORE2.md) and bad input derived from it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError, parse_body, parse_body_counted
from gpuprices.spiders.providers.tensorpool import source
from gpuprices.spiders.providers.tensorpool.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

CAPTURE = (Path(__file__).parent / "fixtures" / "raw" / "tensorpool"
           / "cgi_tensorpool_pricing.html")
URL = "https://tensorpool.dev/pricing"


def meta() -> CaptureMeta:
    return CaptureMeta(provider="tensorpool", url=URL,
                       captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def rows():
    return {o.sku: o for o in parse_body(CAPTURE.read_bytes(), meta())}


def test_tensorpool_column_only(rows):
    assert {sku: o.price_per_hour for sku, o in rows.items()} == {
        "B200 SXM": 4.99, "H200 SXM": 2.99, "B300 SXM": 5.49, "H100 SXM": 1.99, "L40S": 1.49}
    assert rows["H100 SXM"].gpu_model == "H100-SXM-80GB"
    assert rows["B300 SXM"].gpu_model == "B300-288GB"
    assert all(o.pricing_model == "on_demand" and o.gpu_count == 1 for o in rows.values())


def test_competitor_columns_are_never_rows(rows):
    text = CAPTURE.read_text()
    # Lambda's $3.29 and the "Traditional Clouds" $14 sit on the H100 SXM row.
    assert "$3.29/hr" in text and "$14/hr" in text
    assert all(o.price_per_hour not in (3.29, 14, 18, 10, 3) for o in rows.values())


def test_mobile_card_agrees_and_cpu_is_no_row(rows):
    assert "H100 SXM - <strong>$1.99</strong>" in CAPTURE.read_text()
    assert all(o.extra["card_price"] == o.price_per_hour for o in rows.values())
    _, skipped = parse_body_counted(CAPTURE.read_bytes(), meta())
    assert skipped == {"not a GPU (CPU)": 1}
    assert "CPU" not in rows


def test_cells_out_of_step_are_an_error():
    # One cell dropped from the grid shifts every later row: caught by the highlight check.
    body = CAPTURE.read_text().replace('<div class="p-5"></div>', "", 1)
    with pytest.raises(ParseError, match="tensorpool.*highlight"):
        parse(body.encode(), meta())


def test_no_grid_is_an_error():
    body = CAPTURE.read_text().replace("grid-cols-[200px_200px_1fr_1fr_1fr]", "grid-cols-2")
    with pytest.raises(ParseError, match="comparison grid"):
        parse(body.encode(), meta())


def test_fetch_plan():
    assert [r.url for r in source.start_requests({})] == [URL]
