"""GPU.ai parser on the two real pages of its pricing book (values from
../shared/PROVIDERS_MORE2.md, read off the saved bytes), and the cursor paging."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.gpuai import source
from gpuprices.spiders.providers.gpuai.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "gpuai"
AT = dt.datetime(2026, 8, 22, 18, 37, 3, tzinfo=dt.UTC)


def page(n: int):
    body = (RAW / f"cgi_gpuai_pricing_page{n}.json").read_bytes()
    return parse(body, CaptureMeta("gpuai", source.page_url(), AT))


def find(offers, gpu_type, count, price):
    [o] = [o for o in offers if o.extra["gpu_wording"] == gpu_type and o.gpu_count == count
           and o.price_per_hour == price]
    return o


def test_page1_prices_whole_configurations():
    offers = page(1)
    assert len(offers) == 16
    b300 = find(offers, "b300", 8, 50.62)
    assert b300.gpu_model == "B300-288GB" and b300.price_per_gpu_hour == pytest.approx(6.3275)
    assert (b300.pricing_model, b300.extra["capacity_class"], b300.extra["deployment_type"]) == (
        "on_demand", "secure", "vm")
    assert b300.region == "ca-central"
    b200 = find(offers, "b200", 8, 57.02)
    assert b200.pricing_model == "community" and b200.price_per_gpu_hour == pytest.approx(7.1275)
    h100 = find(offers, "h100_sxm", 2, 3.47)
    assert h100.gpu_model == "H100-SXM-80GB" and h100.price_per_gpu_hour == pytest.approx(1.735)
    # An odd count is kept as written.
    assert find(offers, "rtx_3090", 7, 1.5).gpu_model == "RTX3090-24GB"
    # Storage is kept beside the price, never added.
    assert b200.extra["disk_price_per_gb_hour"] == 0.00028


def test_page2_outlier_and_sold_out_rows():
    offers = page(2)
    assert len(offers) == 9
    assert find(offers, "rtx_5090", 4, 154.67).price_per_gpu_hour == pytest.approx(38.6675)
    assert find(offers, "rtx_5090", 1, 0.41).available is True
    sold_out = {(o.extra["gpu_wording"], o.price_per_hour) for o in offers if o.available is False}
    assert sold_out == {("a100_80gb", 1.07), ("a40", 0.44), ("b200", 43.2)}


def test_every_row_maps_to_a_gpu_model():
    assert all(o.gpu_model for o in page(1) + page(2))


def test_cursor_paging():
    body = (RAW / "cgi_gpuai_pricing_page1.json").read_bytes()
    first = Capture("gpuai", source.page_url(), body, AT)
    [nxt] = source.follow(first)
    assert nxt.url.startswith(f"{source.PRICING_URL}?limit=200&cursor=MjAyNi0wOC0yMlQxODoz")
    last = Capture("gpuai", nxt.url, (RAW / "cgi_gpuai_pricing_page2.json").read_bytes(), AT)
    assert source.follow(last) == []


def test_a_page_without_data_is_an_error():
    with pytest.raises(ParseError, match="gpuai: .*no 'data' list"):
        parse(b'{"next_cursor": null}', CaptureMeta("gpuai", source.page_url(), AT))
