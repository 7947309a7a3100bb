"""Shadeform parser on the real homepage excerpt (values from ../shared/PROVIDERS_MORE2.md, read
off the saved bytes): cents per instance-hour, the upstream cloud on every row, one row per
listed region, first-party clouds not counted twice."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.shadeform import source
from gpuprices.spiders.providers.shadeform.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

RAW = (Path(__file__).parent / "fixtures" / "raw" / "shadeform"
       / "cgi_shadeform_homepage_excerpt.html")
AT = dt.datetime(2026, 8, 22, 18, 2, 58, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def offers():
    return parse(RAW.read_bytes(), CaptureMeta("shadeform", source.HOME_URL, AT))


def rows(offers, sku):
    return [o for o in offers if o.sku == sku]


def test_book_size_and_date(offers):
    # 103 entries, 4 of them CPU; the 99 GPU entries list 100 regions.
    assert len({o.sku for o in offers}) == 99 and len(offers) == 100
    assert {o.extra["book_dehydrated_at"] for o in offers} == {"2026-08-22T18:02:58.775000+00:00"}


def test_cents_per_instance_hour(offers):
    [h100] = rows(offers, "hyperstack/H100")
    assert (h100.price_per_hour, h100.price_per_gpu_hour, h100.gpu_model) == (
        2.5, 2.5, "H100-PCIE-80GB")
    assert h100.extra["hourly_price_cents"] == 250
    [h100x8] = rows(offers, "hyperstack/H100_sxm5x8")
    assert (h100x8.price_per_hour, h100x8.price_per_gpu_hour, h100x8.gpu_model) == (
        25.6, 3.2, "H100-SXM-80GB")
    [b200] = rows(offers, "lambdalabs/B200_sxm6x8")
    assert b200.price_per_gpu_hour == pytest.approx(6.69) and b200.gpu_model == "B200-180GB"
    [b300] = rows(offers, "verda/B300x8")
    assert b300.price_per_gpu_hour == pytest.approx(7.705)
    [scaleway] = rows(offers, "scaleway/B300x8")
    assert scaleway.price_per_hour == 72.06 and scaleway.region == "paris-france-1"


def test_cpu_entries_are_skipped(offers):
    assert not rows(offers, "lambdalabs/cpu_small")
    assert all(o.gpu_count >= 1 for o in offers)


def test_underlying_cloud_and_who_counts_it(offers):
    [b200] = rows(offers, "lambdalabs/B200_sxm6x8")
    assert b200.extra["underlying"] == "lambdalabs"
    assert b200.extra["via"] == "via Shadeform from Lambda"
    assert b200.extra["counted_under"] == "lambda"
    # Paperspace is not read first-party: its rows count, as Shadeform's offers.
    paperspace = [o for o in offers if o.extra["underlying"] == "paperspace"]
    assert paperspace and all("counted_under" not in o.extra for o in paperspace)
    assert paperspace[0].extra["via"] == "via Shadeform from Paperspace"


def test_one_row_per_listed_region(offers):
    a6000 = rows(offers, "lambdalabs/A6000x4")
    assert sorted(o.region for o in a6000) == ["dallas-usa-3", "mumbai-india-1"]
    assert {o.price_per_hour for o in a6000} == {4.36}
    assert {o.extra["region_name"] for o in a6000} == {"IN, Mumbai", "US, Dallas, TX"}


def test_unmapped_rows_carry_their_reason(offers):
    unmapped = {o.extra["gpu_wording"] for o in offers if o.gpu_model is None}
    assert unmapped == {"A16", "GAUDI2"}
    assert all("unmapped_reason" in o.extra for o in offers if o.gpu_model is None)
    # Shadeform's run-together names map with their memory and form factor.
    by_type = {(o.extra["gpu_wording"], o.interconnect): o.gpu_model for o in offers}
    assert by_type[("A100_80G", "pcie")] == "A100-PCIE-80GB"
    assert by_type[("A100_80G", "sxm4")] == "A100-SXM-80GB"
    assert by_type[("RTX6000", "pcie")] == "QUADRORTX6000-24GB"
    assert by_type[("RTXPro6000", "pcie")] == "RTX-PRO-6000-96GB"


def test_a_page_without_the_book_is_an_error():
    with pytest.raises(ParseError, match="shadeform: https://shadeform.com/: no instance_types"):
        parse(b"<html><body>Shadeform</body></html>",
              CaptureMeta("shadeform", source.HOME_URL, AT))


def test_fallback_host_on_an_error():
    failed = Capture("shadeform", source.HOME_URL, b"", AT, status=503)
    assert [s.url for s in source.follow(failed)] == [source.FALLBACK_URL]
    ok = Capture("shadeform", source.HOME_URL, RAW.read_bytes(), AT)
    assert source.follow(ok) == []
