"""Crusoe parser on the three real captures of the pricing page (values read off each capture)
and bad input derived from them."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.crusoe import source as crusoe_source
from gpuprices.spiders.providers.crusoe.parser import parse
from gpuprices.warehouse.contract import CaptureMeta, offers_to_table
from tests.offer_index import index

RAW = Path(__file__).parent / "fixtures" / "raw" / "crusoe"
TABLE_2025 = RAW / "crusoe_ai_cloud_pricing_wayback_20250521220413_excerpt.html"
CARDS_2025 = RAW / "crusoe_ai_cloud_pricing_wayback_20251215002446_excerpt.html"
FULL_2026 = RAW / "gpu-price-index_crusoe.html"
NEBIUS_PAGE = Path(__file__).parent / "fixtures" / "raw" / "nebius" / "gpu-price-index_nebius.html"

URL = "https://www.crusoe.ai/cloud/pricing"


def meta(when: str = "2026-10-04T12:00:00+00:00", url: str = URL) -> CaptureMeta:
    return CaptureMeta(provider="crusoe", url=url, captured_at=dt.datetime.fromisoformat(when))


def test_2025_table_all_terms():
    offers = parse(TABLE_2025.read_bytes(),
                   meta("2025-05-21T22:04:13+00:00", "https://crusoe.ai/cloud/pricing"))
    rows = index(offers)
    h100 = rows[("H100-SXM-80GB", "on_demand", None)]
    assert h100.price_per_hour == 3.90 and h100.gpu_count == 1 and h100.price_per_gpu_hour == 3.90
    assert h100.gpu_memory_gb == 80 and h100.extra["gpu_wording"] == "NVIDIA H100 80GB SXM"
    assert h100.extra["layout"] == "table"
    # Spot "Contact Sales" -> no row.
    assert ("H100-SXM-80GB", "spot", None) not in rows
    assert rows[("H100-SXM-80GB", "reserved", 6)].price_per_hour == 3.12
    assert rows[("H100-SXM-80GB", "reserved", 12)].price_per_hour == 2.93
    assert rows[("H100-SXM-80GB", "reserved", 36)].price_per_hour == 2.54
    assert rows[("MI300X-192GB", "spot", None)].price_per_hour == 0.95
    assert rows[("MI300X-192GB", "on_demand", None)].price_per_hour == 3.45
    assert rows[("L40S-48GB", "on_demand", None)].price_per_hour == 1.00
    assert rows[("L40S-48GB", "spot", None)].price_per_hour == 0.50
    # A100 SXM vs PCIe told apart by tag.
    assert rows[("A100-SXM-80GB", "on_demand", None)].price_per_hour == 1.95
    assert rows[("A100-PCIE-80GB", "on_demand", None)].price_per_hour == 1.65
    assert rows[("A100-PCIE-40GB", "on_demand", None)].price_per_hour == 1.45
    assert rows[("H200-141GB", "reserved", 36)].price_per_hour == 2.79
    # 7 GPUs priced (the excerpt ends on an unpriced "NVIDIA A40" row), 5 columns each,
    # minus 5 "Contact Sales" spot cells.
    assert len(offers) == 7 * 5 - 5
    assert all(o.gpu_model for o in offers)
    offers_to_table(offers)


def test_2025_12_cards():
    offers = parse(CARDS_2025.read_bytes(), meta("2025-12-15T00:24:46+00:00"))
    rows = index(offers)
    assert rows[("H100-SXM-80GB", "on_demand", None)].price_per_hour == 3.90
    h100_spot = rows[("H100-SXM-80GB", "spot", None)]
    assert h100_spot.price_per_hour == 1.60 and h100_spot.extra["column"] == "Current spot"
    assert h100_spot.extra["gpu_wording"] == "NVIDIA H100 80GB HGX"
    assert rows[("H200-141GB", "on_demand", None)].price_per_hour == 4.29
    # GB200 and B200 are "Contact sales" in both columns -> no row.
    assert {o.gpu_model for o in offers} == {"H100-SXM-80GB", "H200-141GB"}
    assert len(offers) == 3


def test_2026_full_page_gpu_section_only():
    offers = parse(FULL_2026.read_bytes(), meta())
    rows = index(offers)
    assert rows[("A100-SXM-80GB", "on_demand", None)].price_per_hour == 2.30
    assert rows[("A100-PCIE-80GB", "on_demand", None)].price_per_hour == 2.00
    assert rows[("L40S-48GB", "on_demand", None)].price_per_hour == 1.50
    assert rows[("MI300X-192GB", "on_demand", None)].price_per_hour == 3.45
    assert rows[("H100-SXM-80GB", "on_demand", None)].price_per_hour == 3.90
    assert rows[("H200-141GB", "on_demand", None)].price_per_hour == 4.29
    # Every spot cell is "Contact sales"; Self-Serve Deployments (H100 $5.50/h, an endpoint,
    # not GPU rental), CPU, storage and inference cards give no rows.
    assert not [o for o in offers if o.pricing_model != "on_demand"]
    assert 5.50 not in {o.price_per_hour for o in offers}
    assert len(offers) == 6
    assert all(o.extra["layout"] == "cards" for o in offers)


def test_sources_plan():
    specs = crusoe_source.start_requests({})
    assert [s.url for s in specs] == [URL]
    assert specs[0].method == "GET" and not specs[0].browser


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize("body", [
    b"",
    b"%PDF-1.7 binary",
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    b"<html><body><p>Just a moment...</p></body></html>",
])
def test_bad_bodies_raise(body):
    with pytest.raises(ParseError) as err:
        parse_body(body, meta())
    assert err.value.provider == "crusoe" and err.value.url == URL


def test_other_provider_page_raises():
    with pytest.raises(ParseError, match="no GPU price table"):
        parse(NEBIUS_PAGE.read_bytes(), meta())


@pytest.mark.parametrize("fixture", [TABLE_2025, CARDS_2025, FULL_2026])
def test_table_removed_raises(fixture):
    text = fixture.read_text(encoding="utf-8")
    # The 2025 excerpt ends inside its table (no </table>).
    text = re.sub(r"<table.*?(</table>|\Z)", "", text, flags=re.S)
    text = text.replace("prixing-item", "gone").replace("GPU instances pricing", "Other")
    with pytest.raises(ParseError, match="no GPU price table"):
        parse(text.encode(), meta())


@pytest.mark.parametrize("placeholder", ["$—", "Contact sales", "CONTACT SALES"])
@pytest.mark.parametrize("fixture", [TABLE_2025, CARDS_2025, FULL_2026])
def test_prices_replaced_raise(fixture, placeholder):
    text = fixture.read_text(encoding="utf-8")
    # Card cells "$3.90/GPU-hr" and table cells "<span>$</span> 3.90".
    text = re.sub(r"\$\d+\.\d+/GPU-hr", placeholder, text)
    text = re.sub(r"<span[^>]*>\$</span>\s*\d+\.\d+", placeholder, text)
    with pytest.raises(ParseError, match="no row has a per-GPU-hour price"):
        parse(text.encode(), meta())


def test_self_serve_cards_alone_give_no_rows():
    """Only the GPU instances section counts: with it renamed, the page's other price cards
    (Self-Serve Deployments $5.50 per hour …) must not be read as GPU instances."""
    text = FULL_2026.read_text(encoding="utf-8").replace("GPU instances pricing", "Other")
    with pytest.raises(ParseError):
        parse(text.encode(), meta())


def test_cgi_2026_08_cards():
    offers = parse((RAW / "cgi_crusoe_pricing_excerpt.html").read_bytes(),
                   meta("2026-08-22T12:00:00+00:00"))
    got = {(o.gpu_model, o.pricing_model): o.price_per_gpu_hour for o in offers}
    assert got == {("H100-SXM-80GB", "on_demand"): 3.90, ("H200-141GB", "on_demand"): 4.29,
                   ("A100-SXM-80GB", "on_demand"): 2.30, ("A100-PCIE-80GB", "on_demand"): 2.00,
                   ("L40S-48GB", "on_demand"): 1.50, ("MI300X-192GB", "on_demand"): 3.45}
    # spot cells are all "Contact sales"; self-serve deployments (H100 $5.50/h) are not rentals
    assert 5.50 not in {o.price_per_hour for o in offers}
