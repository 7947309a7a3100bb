"""Hot Aisle parser on the real excerpt of hotaisle.xyz/pricing (values as in
../shared/PROVIDERS_MORE.md, read off the saved bytes) and bad input derived from it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.hotaisle import source
from gpuprices.spiders.providers.hotaisle.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

CAPTURE = (Path(__file__).parent / "fixtures" / "raw" / "hotaisle"
           / "cgi_hotaisle_pricing_excerpt.html")
URL = "https://hotaisle.xyz/pricing"


def meta() -> CaptureMeta:
    return CaptureMeta(provider="hotaisle", url=URL,
                       captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def rows():
    return {o.gpu_count: o for o in parse_body(CAPTURE.read_bytes(), meta())}


def test_cards_not_dollar_signs(rows):
    # Hero boxes repeat $2.99 and $3.39 and the page has $1.99: three cards, four sizes.
    assert CAPTURE.read_text().count("$2.99/GPU/hr") == 3
    assert sorted(rows) == [1, 2, 4, 8]
    assert {o.gpu_model for o in rows.values()} == {"MI300X-192GB"}


def test_vm_cards_on_demand_per_gpu(rows):
    small = rows[1]
    assert small.pricing_model == "on_demand" and small.price_per_hour == 2.99
    assert small.extra["plan"] == "Small" and small.billing_increment_s == 60
    # Medium "2x &amp; 4x": one row per size at the same per-GPU rate.
    assert rows[2].price_per_hour == pytest.approx(5.98)
    assert rows[4].price_per_hour == pytest.approx(11.96)
    assert rows[2].price_per_gpu_hour == pytest.approx(2.99)
    assert rows[4].extra["plan"] == "Medium"


def test_bare_metal_is_a_one_month_commitment(rows):
    large = rows[8]
    assert large.pricing_model == "committed" and large.commitment_months == 1
    assert large.price_per_gpu_hour == pytest.approx(3.39)
    assert large.extra["provider_term"] == "one-month minimum"


def test_grandfathered_rate_is_no_row(rows):
    assert all(o.price_per_gpu_hour != 1.99 for o in rows.values())
    assert rows[1].extra["grandfathered_rate"] == 1.99


def test_bad_input_is_a_clear_error():
    with pytest.raises(ParseError, match="hotaisle: https://hotaisle.xyz/pricing: unknown layout"):
        parse(b"<html><body><p>$2.99/GPU/hr</p></body></html>", meta())
    # The cards with their price sentence removed (derived from the capture).
    text = CAPTURE.read_text().replace("/GPU/hr</p>", "/GPU/day</p>")
    text = text.replace("$3.39/GPU/hr<span", "$3.39/GPU/day<span")
    with pytest.raises(ParseError):
        parse(text.encode(), meta())


def test_fetch_plan():
    (spec,) = source.start_requests({})
    assert spec.url == URL and not spec.browser
