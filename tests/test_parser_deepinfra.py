"""DeepInfra parser on the real capture of deepinfra.com/pricing (four bare MUI tables + an i18n
snippet; values as in ../shared/PROVIDERS_MORE2.md) and bad input derived from it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders import registry
from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.deepinfra import source
from gpuprices.spiders.providers.deepinfra.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

CAPTURE = Path(__file__).parent / "fixtures" / "raw" / "deepinfra" / "cgi_deepinfra_pricing.html"
URL = "https://deepinfra.com/pricing"


def meta() -> CaptureMeta:
    return CaptureMeta(provider="deepinfra", url=URL,
                       captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def rows():
    return {o.sku: o for o in parse_body(CAPTURE.read_bytes(), meta())}


def test_the_gpu_table_only(rows):
    assert {sku: o.price_per_hour for sku, o in rows.items()} == {
        "A100 80GB": 0.89, "H100 80GB": 2.20, "H200 141GB": 2.69, "B200 180GB": 3.69,
        "B300 270GB": 4.89}
    assert {o.gpu_model for o in rows.values()} == {
        "A100-SXM-80GB", "H100-SXM-80GB", "H200-141GB", "B200-180GB", "B300-288GB"}
    assert all(o.gpu_count == 1 and o.pricing_model == "on_demand" for o in rows.values())
    assert rows["B300 270GB"].gpu_memory_gb == 270


def test_lookalike_tables_and_i18n_give_nothing(rows):
    text = CAPTURE.read_text()
    # The tier table's "1x base price", the empty usage-tier and per-token tables and the i18n
    # blob (`"gpu_b200":"B200"`, an unpriced `${{price}} / hour`) are on the page...
    assert "1x base price" in text and "$ per 1M input tokens" in text
    assert '"gpu_b200":"B200"' in text
    # ...and none of them is a row: one B200, priced.
    assert [sku for sku in rows if "B200" in sku] == ["B200 180GB"]


def test_rows_say_they_are_inference_hosting(rows):
    h100 = rows["H100 80GB"]
    assert h100.extra["service"] == "dedicated_inference_deployment"
    assert h100.extra["product"] == "Custom LLMs" and h100.billing_increment_s == 60
    decl = registry.declaration("deepinfra")
    assert decl.kind == "inference_host" and "per-token" in decl.note


def test_a_table_without_gpu_hour_prices_is_an_error():
    body = CAPTURE.read_text().replace(" / GPU-hour", " / 1M tokens")
    with pytest.raises(ParseError, match="deepinfra.*GPU-hour"):
        parse(body.encode(), meta())


def test_no_gpu_table_is_an_error():
    body = CAPTURE.read_text().replace(">Memory</th>", ">Context</th>")
    with pytest.raises(ParseError, match="GPU \\| Memory \\| Price"):
        parse(body.encode(), meta())


def test_fetch_plan():
    assert [r.url for r in source.start_requests({})] == [URL]
