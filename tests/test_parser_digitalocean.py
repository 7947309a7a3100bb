"""DigitalOcean parser on the real docs pricing page (values as in ../shared/PROVIDERS_MORE.md,
read off the saved bytes) and bad input derived from it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.digitalocean import source
from gpuprices.spiders.providers.digitalocean.parser import parse
from gpuprices.warehouse import identity
from gpuprices.warehouse.contract import CaptureMeta

CAPTURE = (Path(__file__).parent / "fixtures" / "raw" / "digitalocean"
           / "cgi_digitalocean_droplets_pricing.html")
URL = "https://docs.digitalocean.com/products/droplets/details/pricing/"


def meta() -> CaptureMeta:
    return CaptureMeta(provider="digitalocean", url=URL,
                       captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def offers():
    return parse_body(CAPTURE.read_bytes(), meta())


@pytest.fixture(scope="module")
def rows(offers):
    return {(o.sku, o.pricing_model): o for o in offers}


def test_one_table_per_tier(offers, rows):
    assert len(rows) == len(offers) == 19
    assert sum(o.pricing_model == "on_demand" for o in offers) == 11
    assert sum(o.pricing_model == "spot" for o in offers) == 8
    assert len({identity.of_offer(o) for o in offers}) == 19
    assert all(o.gpu_model for o in offers)


def test_on_demand_per_droplet(rows):
    h100 = rows[("NVIDIA H100", "on_demand")]
    assert h100.price_per_hour == 4.41 and h100.gpu_count == 1
    assert h100.gpu_model == "H100-SXM-80GB"
    h100x8 = rows[("NVIDIA H100 (8x)", "on_demand")]
    assert h100x8.price_per_hour == 35.28 and h100x8.gpu_count == 8
    assert h100x8.price_per_gpu_hour == pytest.approx(4.41)
    assert rows[("NVIDIA H200 (8x)", "on_demand")].price_per_gpu_hour == pytest.approx(4.47)
    mi300 = rows[("AMD MI300X (8x)", "on_demand")]
    assert mi300.price_per_hour == 20.72 and mi300.price_per_gpu_hour == pytest.approx(2.59)
    l40s = rows[("NVIDIA L40s", "on_demand")]
    assert l40s.price_per_hour == 1.57 and l40s.gpu_model == "L40S-48GB"
    assert h100.billing_increment_s == 1 and h100.min_billing_s == 60


def test_rtx_cards_are_ada(rows):
    assert rows[("NVIDIA RTX 4000", "on_demand")].gpu_model == "RTX4000ADA-20GB"
    assert rows[("NVIDIA RTX 6000", "on_demand")].gpu_model == "RTX6000ADA-48GB"


def test_spot_table(rows):
    air = rows[("NVIDIA B300, air-cooled (8x)", "spot")]
    assert air.price_per_hour == 89.52 and air.price_per_gpu_hour == pytest.approx(11.19)
    assert air.gpu_model == "B300-288GB" and air.extra["cooling"] == "air-cooled"
    liquid = rows[("NVIDIA B300, liquid-cooled (8x)", "spot")]
    assert liquid.price_per_hour == 89.52 and liquid.extra["cooling"] == "liquid-cooled"
    assert rows[("AMD MI355X", "spot")].price_per_hour == 4.50
    assert rows[("AMD MI350X", "spot")].gpu_model == "MI350X-288GB"


def test_no_rows_across_tiers(rows):
    # B300 has no on-demand price (the $11.19 is spot); the contract table has no figures.
    assert not any(sku.startswith("NVIDIA B300") and pm == "on_demand" for sku, pm in rows)
    assert "Per contract after" in CAPTURE.read_text()
    assert ("NVIDIA B300", "spot") not in rows
    assert all(o.price_per_hour != 0.01 for o in rows.values())  # billing minimum, bandwidth


def test_bad_input_is_a_clear_error():
    with pytest.raises(ParseError, match="digitalocean: .*: unknown layout"):
        parse(b"<html><body><h2 id='pricing'>Pricing</h2><table></table></body></html>",
              meta())
    text = CAPTURE.read_text().replace(" per hour</td>", " per month</td>")
    with pytest.raises(ParseError, match="no row priced"):
        parse(text.encode(), meta())


def test_fetch_plan():
    (spec,) = source.start_requests({})
    assert spec.url == URL and not spec.browser
