"""Nebius parser on the three real captures of https://nebius.com/prices (values read off each
capture) and bad input derived from them."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from parsel import Selector

from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.nebius import source as nebius_source
from gpuprices.spiders.providers.nebius.parser import parse
from gpuprices.warehouse.contract import CaptureMeta, offers_to_table
from tests import offer_index

RAW = Path(__file__).parent / "fixtures" / "raw" / "nebius"
TABLE_2024 = RAW / "nebius_com_prices_wayback_20241115043809_excerpt.html"
TABLE_2026_07 = RAW / "nebius_com_prices_wayback_20260712235400_excerpt.html"
FULL_2026_09 = RAW / "gpu-price-index_nebius.html"
CRUSOE_PAGE = Path(__file__).parent / "fixtures" / "raw" / "crusoe" / "gpu-price-index_crusoe.html"

URL = "https://nebius.com/prices"


def meta(when: str = "2026-09-30T12:00:00+00:00") -> CaptureMeta:
    return CaptureMeta(provider="nebius", url=URL, captured_at=dt.datetime.fromisoformat(when))


def index(offers):
    """(sku, pricing_model, effective_from) -> offer: an announced price is its own row."""
    return offer_index.index(offers, lambda o: (o.sku, o.pricing_model, o.effective_from))


# --- 2024 cards and table -----------------------------------------------------------------


def test_2024_table_per_instance_prices():
    offers = parse(TABLE_2024.read_bytes(), meta("2024-11-15T04:38:09+00:00"))
    rows = index(offers)
    assert len(offers) == 10  # 5 instance rows x (On demand, Reserve)
    h100x8 = rows[("H100-SXM-80GB_8gpu-128vcpu-1600gb", "on_demand", None)]
    assert h100x8.price_per_hour == 23.60 and h100x8.gpu_count == 8
    assert h100x8.price_per_gpu_hour == pytest.approx(2.95)
    assert h100x8.gpu_model == "H100-SXM-80GB" and h100x8.gpu_memory_gb == 80
    assert h100x8.vcpus == 128 and h100x8.ram_gb == 1600
    assert h100x8.extra["gpu_wording"] == "8 × H100 SXM"
    assert h100x8.extra["vram_total_gb"] == 640
    reserve = rows[("H100-SXM-80GB_8gpu-128vcpu-1600gb", "reserved", None)]
    assert reserve.price_per_hour == 16.00 and reserve.price_per_gpu_hour == pytest.approx(2.00)
    assert reserve.commitment_months is None and "unknown" in reserve.extra["commitment"]
    h200 = rows[("H200-141GB_1gpu-16vcpu-200gb", "on_demand", None)]
    assert h200.price_per_hour == 3.50 and h200.gpu_count == 1
    assert rows[("H200-141GB_1gpu-16vcpu-200gb", "reserved", None)].price_per_hour == 2.30
    # vRAM is the instance total: 8 x H200 = 1128 GB -> 141 per GPU.
    h200x8 = rows[("H200-141GB_8gpu-128vcpu-1600gb", "on_demand", None)]
    assert h200x8.gpu_memory_gb == 141 and h200x8.price_per_hour == 28.00
    l40s = rows[("L40S-48GB_1gpu-8vcpu-32gb", "on_demand", None)]
    assert l40s.price_per_hour == 1.55 and l40s.extra["gpu_wording"] == "1 × L40s PCIe"
    assert all(o.gpu_model for o in offers)
    offers_to_table(offers)  # conforms to the frozen schema


def test_2024_cards_are_reserve_prices_already_in_the_table():
    """The 'as low as' cards give no rows: each equals a 1-GPU Reserve price of the table."""
    body = TABLE_2024.read_bytes()
    sel = Selector(text=body.decode())
    cards = [float(v.strip("$")) for v in sel.css(".pc-price-card__price-value::text").getall()]
    assert cards == [2.30, 2.00, 0.80]
    reserved = {o.price_per_gpu_hour for o in parse(body, meta()) if o.pricing_model == "reserved"}
    assert set(cards) <= reserved
    assert not any(o.extra.get("price_kind") for o in parse(body, meta()))


# --- 2026-07 table: preemptible column first ----------------------------------------------


def test_2026_07_columns_mapped_by_header():
    offers = parse(TABLE_2026_07.read_bytes(), meta("2026-07-12T23:54:00+00:00"))
    rows = index(offers)
    h100 = rows[("H100-SXM-80GB_1gpu-16vcpu-200gb", "on_demand", None)]
    assert h100.price_per_hour == 3.85 and h100.gpu_count == 1
    assert h100.extra["column"] == "On-demand, GPU-hour"
    assert rows[("H100-SXM-80GB_1gpu-16vcpu-200gb", "spot", None)].price_per_hour == 2.15
    assert rows[("B200-180GB_1gpu-20vcpu-224gb", "on_demand", None)].price_per_hour == 7.15
    assert rows[("B200-180GB_1gpu-20vcpu-224gb", "spot", None)].price_per_hour == 3.95
    assert rows[("B300-288GB_1gpu-24vcpu-346gb", "on_demand", None)].price_per_hour == 7.85
    # GB200 / GB300 NVL72: "Contact us" and "––" -> no row.
    assert not [o for o in offers if o.gpu_model in ("GB200", "GB300")]
    assert len(offers) == 14  # 7 priced rows x 2 columns


def test_2026_07_l40s_keyed_on_vcpu_range_not_label():
    rows = index(parse(TABLE_2026_07.read_bytes(), meta("2026-07-12T23:54:00+00:00")))
    # This capture labels the 8-40 vCPU shape "with AMD CPU" (swapped vs 2026-09).
    small = rows[("L40S-48GB_1gpu-8vcpu-32gb", "on_demand", None)]
    assert small.extra["gpu_wording"] == "NVIDIA L40S with AMD CPU"
    assert small.price_per_hour == 1.55 and small.extra["price_kind"] == "from"
    assert small.vcpus == 8 and small.extra["vcpus_range"] == "8-40"
    assert small.ram_gb == 32 and small.extra["ram_gb_range"] == "32-160"
    assert small.extra["platform"].startswith("gpu-l40s-a")
    assert rows[("L40S-48GB_1gpu-8vcpu-32gb", "spot", None)].price_per_hour == 0.74
    big = rows[("L40S-48GB_1gpu-16vcpu-96gb", "on_demand", None)]
    assert big.extra["gpu_wording"] == "NVIDIA L40S with Intel CPU"
    assert big.price_per_hour == 1.82 and big.extra["vcpus_range"] == "16-192"
    assert rows[("L40S-48GB_1gpu-16vcpu-96gb", "spot", None)].price_per_hour == 0.90


# --- ~2026-09 full page: announced prices and the preemptible table -----------------------


def test_2026_09_effective_october_prices():
    offers = parse(FULL_2026_09.read_bytes(), meta())
    rows = index(offers)
    oct1 = dt.date(2026, 10, 1)
    for sku, now, later in [
        ("H100-SXM-80GB_1gpu-16vcpu-200gb", 3.85, 4.50),
        ("H200-141GB_1gpu-16vcpu-200gb", 4.50, 5.40),
        ("B200-180GB_1gpu-20vcpu-224gb", 7.15, 8.50),
        ("B300-288GB_1gpu-24vcpu-346gb", 7.85, 9.50),
        ("RTX-PRO-6000-96GB_1gpu-24vcpu-218gb", 1.80, 1.80),
    ]:
        assert rows[(sku, "on_demand", None)].price_per_hour == now
        future = rows[(sku, "on_demand", oct1)]
        assert future.price_per_hour == later
        assert future.extra["column"] == "GPU-hour (Effective October 1, 2026)"
    # Labels here: Intel = 8-40 vCPU $1.55, AMD = 16-192 vCPU $1.82; same SKUs as 2026-07.
    assert rows[("L40S-48GB_1gpu-8vcpu-32gb", "on_demand", None)].extra["gpu_wording"] == (
        "NVIDIA L40S with Intel CPU")
    assert rows[("L40S-48GB_1gpu-8vcpu-32gb", "on_demand", oct1)].price_per_hour == 1.55
    assert rows[("L40S-48GB_1gpu-16vcpu-96gb", "on_demand", None)].price_per_hour == 1.82
    assert not [o for o in offers if o.gpu_model in ("GB200", "GB300")]


def test_2026_09_preemptible_table_is_spot_from_prices():
    offers = parse(FULL_2026_09.read_bytes(), meta())
    spot = {o.sku: o for o in offers if o.pricing_model == "spot"}
    assert len(spot) == 7
    assert all(o.extra["price_kind"] == "from" for o in spot.values())
    assert all(o.extra["table"] == "Preemptible NVIDIA GPU Instances" for o in spot.values())
    assert spot["H100-SXM-80GB_1gpu-16vcpu-200gb"].price_per_hour == 0.79
    assert spot["B300-288GB_1gpu-24vcpu-346gb"].price_per_hour == 0.99
    # "from $0.74**": the footnote mark is stripped.
    assert spot["L40S-48GB_1gpu-8vcpu-32gb"].price_per_hour == 0.74
    assert spot["L40S-48GB_1gpu-16vcpu-96gb"].price_per_hour == 0.90
    # CPU-only and storage tables give no rows.
    assert all(o.gpu_model for o in offers)
    assert len(offers) == 21
    offers_to_table(offers)


def test_sources_plan():
    specs = nebius_source.start_requests({})
    assert [s.url for s in specs] == [URL]
    assert specs[0].method == "GET" and not specs[0].browser


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize("body", [
    b"",
    b'{"prices": []}',
    b"\xff\xfe\x00<\x00h\x00t\x00m\x00l",
    b"<html><body><h1>Service unavailable</h1></body></html>",
])
def test_bad_bodies_raise(body):
    with pytest.raises(ParseError) as err:
        parse_body(body, meta())
    assert err.value.provider == "nebius" and err.value.url == URL


def test_other_provider_page_raises():
    with pytest.raises(ParseError, match="no GPU price table") as err:
        parse(CRUSOE_PAGE.read_bytes(), meta())
    assert err.value.url == URL


@pytest.mark.parametrize("fixture", [TABLE_2024, TABLE_2026_07, FULL_2026_09])
def test_table_removed_raises(fixture):
    text = fixture.read_text(encoding="utf-8")
    text = text.replace("pc-highlight-table-block__table", "removed").replace("pc-table", "x")
    with pytest.raises(ParseError, match="no GPU price table"):
        parse(text.encode(), meta())


@pytest.mark.parametrize("placeholder", ["$—", "Contact us"])
@pytest.mark.parametrize("fixture", [TABLE_2024, TABLE_2026_07, FULL_2026_09])
def test_prices_replaced_raise(fixture, placeholder):
    text = fixture.read_text(encoding="utf-8")
    text = re.sub(r"(from )?\$\d+\.\d+(\*\*)?", placeholder, text)
    with pytest.raises(ParseError, match="no row has a price"):
        parse(text.encode(), meta())


def test_unknown_price_header_raises():
    text = TABLE_2026_07.read_text(encoding="utf-8")
    text = text.replace("Preemptible, GPU-hour", "Colour").replace("On-demand, GPU-hour", "Size")
    with pytest.raises(ParseError, match="no price column"):
        parse(text.encode(), meta())


ESCAPED_2026_08 = RAW / "cgi_nebius_prices_excerpt.html"


def test_escaped_page_data_2026_08():
    offers = parse(ESCAPED_2026_08.read_bytes(), meta("2026-08-22T12:00:00+00:00"))
    got = {(o.gpu_model, o.pricing_model, o.extra.get("vcpus_range")): o.price_per_hour
           for o in offers}
    assert got[("H100-SXM-80GB", "on_demand", None)] == 3.85
    assert got[("H100-SXM-80GB", "spot", None)] == 2.15
    assert got[("H200-141GB", "on_demand", None)] == 4.50
    assert got[("B200-180GB", "spot", None)] == 3.95
    assert got[("B300-288GB", "on_demand", None)] == 7.85
    assert got[("L40S-48GB", "on_demand", "16-192")] == 1.82
    assert all(o.extra["layout"] == "2026-json" for o in offers)
    # GB200/GB300 NVL72 "Contact us" / "––" give no row; CPU-only and storage tables are skipped
    assert len(offers) == 14 and all(o.gpu_model for o in offers)


def test_escaped_page_data_without_gpu_table_fails():
    body = b'{\\"type\\":\\"highlight-table-block\\",\\"title\\":\\"Storage\\",\\"table\\":{}}'
    with pytest.raises(ParseError):
        parse(body, meta())
