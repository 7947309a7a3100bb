"""Hyperbolic parser on the real rental-options answer (values from ../shared/PROVIDERS_MORE.md,
read off the saved bytes), and the options as loaded: min / p25 / median per GPU model and
count (spiders/marketplace.py)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.flows.pipeline import gates
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.hyperbolic import source
from gpuprices.spiders.providers.hyperbolic.parser import parse, postprocess
from gpuprices.warehouse.contract import CaptureMeta

RAW = (Path(__file__).parent / "fixtures" / "raw" / "hyperbolic"
       / "cgi_hyperbolic_rental_options.json")
META = CaptureMeta(provider="hyperbolic", url=source.RENTAL_OPTIONS_URL,
                   captured_at=dt.datetime(2026, 8, 29, 12, tzinfo=dt.UTC))


def options():
    return parse(RAW.read_bytes(), META)


def find(offers, count, gpu, region):
    [o] = [o for o in offers if o.gpu_count == count and o.extra["gpu_wording"] == gpu
           and o.region == region]
    return o


def test_cents_per_option_become_usd_per_gpu():
    offers = options()
    assert len(offers) == 13
    h100 = find(offers, 1, "h100 sxm5", "us-east-1")
    assert h100.price_per_hour == 3.19 and h100.gpu_model == "H100-SXM-80GB"
    pcie = find(offers, 1, "h100 pcie", "ca-east-1")
    assert pcie.price_per_hour == 2.75 and pcie.gpu_model == "H100-PCIE-80GB"
    assert pcie.extra["total_available"] == 2 and pcie.available is True
    bm = find(offers, 8, "h100 sxm5", "uk-southeast-3")
    assert bm.price_per_hour == 25.52 and bm.price_per_gpu_hour == pytest.approx(3.19)
    assert bm.interconnect == "infiniband" and bm.extra["machine_type"] == "bare-metal"
    h200 = find(offers, 8, "h200 sxm5", "eu-north-5")
    assert h200.price_per_gpu_hour == pytest.approx(3.99) and h200.gpu_model == "H200-141GB"
    assert find(offers, 1, "h200 sxm5", "us-east-2").price_per_hour == 3.99
    # totalAvailable missing = unknown, not none
    assert h100.available is None


def test_supplier_cost_is_never_the_price():
    for o in options():
        assert o.price_per_hour == pytest.approx(o.extra["cost_per_hour_cents"] / 100)
        assert "providerCostPerHourCents" not in json.dumps(o.extra)


def test_options_as_loaded():
    offers = postprocess(options(), [])
    by = {(o.sku, o.extra["market_stat"]): o for o in offers}
    assert len(offers) == 3 * 5  # h100 sxm5 1x/8x, h100 pcie 1x, h200 sxm5 1x/8x
    assert by[("h100 sxm5/1x", "min")].price_per_gpu_hour == 3.19
    assert by[("h100 sxm5/1x", "min")].extra["listing"]["region"] == "us-east-1"
    # 4 options 319, 485, 358, 358: p25 = 1st, median = 2nd lowest (nearest rank)
    assert by[("h100 sxm5/1x", "p25")].price_per_gpu_hour == 3.19
    assert by[("h100 sxm5/1x", "median")].price_per_gpu_hour == 3.58
    assert by[("h100 sxm5/1x", "median")].extra["listings"] == 4
    assert by[("h100 sxm5/8x", "median")].price_per_gpu_hour == pytest.approx(3.19)
    assert by[("h100 sxm5/8x", "min")].extra["listings"] == 5
    out = gates.run_gates(offers)
    assert out.bad == [] and len(out.good) == 15


def test_a_disabled_option_is_not_offered():
    doc = json.loads(RAW.read_bytes())
    doc[0]["enabled"] = False
    offers = parse(json.dumps(doc).encode(), META)
    assert len(offers) == 12
    assert all(o.price_per_hour != 3.19 or o.region != "us-east-1" for o in offers)


def test_bad_input():
    with pytest.raises(ParseError, match="not a JSON list"):
        parse(b'{"options": []}', META)
    doc = json.loads(RAW.read_bytes())
    for o in doc:
        del o["costPerHourCents"]
    with pytest.raises(ParseError, match="no enabled option"):
        parse(json.dumps(doc).encode(), META)


def test_fetch_plan():
    [spec] = source.start_requests({})
    assert spec.url == "https://api.hyperbolic.ai/v2/alpha/on-demand/rental-options"
