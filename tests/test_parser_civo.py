"""Civo parser on the real excerpt of civo.com/pricing (values as in
../shared/PROVIDERS_MORE2.md, read off the saved bytes) and bad input derived from it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError, parse_body, parse_body_counted
from gpuprices.spiders.providers.civo import source
from gpuprices.spiders.providers.civo.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

CAPTURE = Path(__file__).parent / "fixtures" / "raw" / "civo" / "cgi_civo_pricing_excerpt.html"
URL = "https://www.civo.com/pricing"


def meta() -> CaptureMeta:
    return CaptureMeta(provider="civo", url=URL,
                       captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def rows():
    return {(o.sku, o.commitment_months): o for o in parse_body(CAPTURE.read_bytes(), meta())}


def test_only_the_gpu_section(rows):
    text = CAPTURE.read_text()
    # 8 captions on the page excerpt, 6 of them GPU tables; the RAM Optimized CPU table before
    # the fence ($0.107137...) gives nothing.
    assert text.count("<caption>") == 8 and text.count("GPU pricing</caption>") == 6
    assert "$0.107137" in text
    assert all(o.price_per_hour > 0.5 for o in rows.values())
    assert {o.gpu_model for o in rows.values()} == {
        "L40S-48GB", "A100-40GB", "A100-SXM-80GB", "H100-SXM-80GB", "H200-141GB", "B200-180GB"}
    # 17 sizes x (on-demand + 4 terms) = 85 prices, B200's on-demand and 6-month are N/A.
    assert len(rows) == 83


def test_instance_prices_split_per_gpu(rows):
    small, xl = rows[("1x L40S 48GB Small", None)], rows[("8x L40S 48GB Extra Large", None)]
    assert (small.price_per_hour, small.gpu_count) == (1.29, 1)
    assert (xl.price_per_hour, xl.gpu_count) == (10.32, 8)
    assert xl.price_per_gpu_hour == pytest.approx(1.29)
    assert (small.vcpus, small.ram_gb, small.gpu_memory_gb) == (12, 96, 48)
    assert small.pricing_model == "on_demand" and small.extra["price_basis"] == "per_instance_hour"


def test_h100_h200_and_commitments(rows):
    assert rows[("1x H100 SXM 80GB Small", None)].price_per_hour == 2.99
    h100 = rows[("8x H100 SXM 80GB Extra Large", None)]
    assert h100.price_per_hour == 23.92 and h100.gpu_model == "H100-SXM-80GB"
    term = rows[("8x H100 SXM 80GB Extra Large", 36)]
    assert (term.pricing_model, term.price_per_hour) == ("committed", 19.92)
    assert term.price_per_gpu_hour == pytest.approx(2.49)
    assert term.extra["provider_term"] == "Commitment - 36 months"
    assert rows[("8x H200 SXM 141GB Extra Large", None)].price_per_hour == 27.92


def test_b200_has_no_on_demand_price(rows):
    b200 = {m: o for (sku, m), o in rows.items() if sku.startswith("8x B200")}
    # N/A on-demand and 6-month: no row, never $0 and never the 36-month price relabelled.
    assert sorted(b200) == [12, 24, 36]
    assert b200[12].price_per_hour == 35.92
    assert b200[36].price_per_hour == 30.32
    assert b200[36].price_per_gpu_hour == pytest.approx(3.79)
    assert b200[36].ram_gb == 2500 and b200[36].vcpus == 220


def test_skipped_na_prices_are_counted():
    _, skipped = parse_body_counted(CAPTURE.read_bytes(), meta())
    assert skipped == {"no on-demand price ('N/A')": 1, "no 6-month price ('N/A')": 1}


def test_a100_memory_from_row_and_caption(rows):
    assert rows[("1x A100 80GB Small", None)].price_per_hour == 1.79
    assert rows[("1x A100 80GB Small", None)].gpu_model == "A100-SXM-80GB"
    assert rows[("1x A100 40GB Small", None)].price_per_hour == 1.09
    assert rows[("1x A100 40GB Small", None)].gpu_model == "A100-40GB"


def test_hourly_prints_only(rows):
    # The A100 40GB 12-month monthly print repeats the 6-month one ($722.70); hourly differ.
    assert rows[("1x A100 40GB Small", 6)].price_per_hour == 0.99
    assert rows[("1x A100 40GB Small", 12)].price_per_hour == 0.89


def test_caption_memory_must_match_the_row():
    body = CAPTURE.read_text().replace("1 x NVIDIA A100 - 80GB", "1 x NVIDIA A100 - 40GB", 1)
    with pytest.raises(ParseError, match="A100 80GB GPU pricing.*40GB row"):
        parse(body.encode(), meta())


def test_no_gpu_section_is_an_error():
    body = CAPTURE.read_text().replace('id="nvidia-gpus"', 'id="gpus"')
    with pytest.raises(ParseError, match="civo.*www.civo.com/pricing.*nvidia-gpus"):
        parse(body.encode(), meta())


def test_fetch_plan():
    assert [r.url for r in source.start_requests({})] == [URL]
