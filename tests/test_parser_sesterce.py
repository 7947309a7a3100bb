"""Sesterce parser on the real homepage and console excerpts (values from
../shared/PROVIDERS_MORE2.md, read off the saved bytes)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.sesterce import source
from gpuprices.spiders.providers.sesterce.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "sesterce"
AT = dt.datetime(2026, 8, 22, 18, 31, 24, tzinfo=dt.UTC)


def homepage():
    body = (RAW / "cgi_sesterce_homepage_excerpt.html").read_bytes()
    return parse(body, CaptureMeta("sesterce", source.HOME_URL, AT))


def console():
    body = (RAW / "cgi_sesterce_console_compute_excerpt.html").read_bytes()
    return parse(body, CaptureMeta("sesterce", source.CONSOLE_URL, AT))


def test_homepage_floors_are_from_prices():
    offers = homepage()
    floors = {o.sku.split()[0]: o.price_per_gpu_hour for o in offers}
    assert floors == {"B300": 8.48, "B200": 4.11, "H200": 2.48, "H100": 1.83, "A100": 1.49,
                      "L40S": 0.76}
    assert all(o.extra["price_kind"] == "from" and o.currency == "USD" for o in offers)
    assert all(o.pricing_model == "on_demand" and o.gpu_count == 1 for o in offers)
    # The stale CLI strip ($4.50 / $2.25 / $1.66 / $1.24 per gpu-hour) is never read.
    assert not {4.5, 2.25, 1.66, 1.24} & set(floors.values())


def test_homepage_columns_and_blended_floors():
    by = {o.sku.split()[0]: o for o in homepage()}
    assert by["H100"].extra["listed_gpus"] == 152
    assert by["H100"].extra["live_regions"] == "13/85 regions"
    assert by["B300"].extra["available_now"] == "Limited"
    assert by["B300"].extra["live_regions"] == "0/7 regions"
    assert by["B300"].gpu_model == "B300-288GB" and by["L40S"].gpu_model == "L40S-48GB"
    # H100 and A100 floors blend SXM and PCIe: no single model, with the reason.
    assert by["H100"].gpu_model is None and by["A100"].gpu_model is None
    assert by["H100"].extra["unmapped_reason"].startswith("a floor across SXM5 and PCIe parts")


def test_console_instances_per_region():
    offers = console()
    assert len({o.sku for o in offers}) == 6  # 9 offers, 3 of them CPU tiers
    [h200] = [o for o in offers if o.sku.startswith("H200x8/")]
    assert (h200.price_per_hour, h200.price_per_gpu_hour, h200.gpu_model) == (
        28.16, 3.52, "H200-141GB")
    assert (h200.region, h200.extra["deployment_type"]) == ("tokyo-japan-5", "vm")
    pro = [o for o in offers if o.extra["gpu_wording"] == "RTXPro6000"]
    assert {o.price_per_hour for o in pro} == {30.008000000000003}
    assert len(pro) == 5 and {o.gpu_model for o in pro} == {"RTX-PRO-6000-96GB"}
    assert {o.extra["deployment_type"] for o in pro} == {"baremetal"}
    a100 = [o for o in offers if o.extra["gpu_wording"] == "A100_80G"]
    assert {(o.price_per_hour, o.gpu_count, o.gpu_model) for o in a100} == {
        (24.552000000000003, 8, "A100-SXM-80GB")}
    h100 = {(o.price_per_hour, o.gpu_model) for o in offers if o.extra["gpu_wording"] == "H100"}
    assert h100 == {(2.189, "H100-PCIE-80GB"), (4.796, "H100-SXM-80GB")}
    a100_40 = {o.gpu_model for o in offers if o.extra["gpu_wording"] == "A100"}
    assert a100_40 == {"A100-40GB"}
    assert all(o.price_per_hour != 0.385 for o in offers)  # CPU cpu_small


def test_console_rows_name_no_cloud_but_keep_its_label():
    offers = console()
    [h200] = [o for o in offers if o.sku.startswith("H200x8/")]
    assert h200.extra["upstream_label"] == "AZ_22"
    assert h200.extra["via"] == "via Sesterce from an unnamed cloud (AZ_22)"
    assert not any("counted_under" in o.extra or "underlying" in o.extra for o in offers)
    mumbai = [o for o in offers if o.region == "mumbai-india-1"]
    assert {o.extra["country"] for o in mumbai} == {"IN"}


def test_unknown_page_is_an_error():
    with pytest.raises(ParseError, match="sesterce: .*neither the homepage"):
        parse(b"<html><body>maintenance</body></html>",
              CaptureMeta("sesterce", source.HOME_URL, AT))
