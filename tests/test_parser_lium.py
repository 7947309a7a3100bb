"""Lium parser on the real executors book (values from ../shared/PROVIDERS_MORE2.md, read off
the saved bytes), and the book as loaded: min / p25 / median per GPU model, count and tier
(spiders/marketplace.py), with the fleet size from the real /api/machines catalog."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.flows.pipeline import gates
from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError, parse_body_counted
from gpuprices.spiders.providers.lium import source
from gpuprices.spiders.providers.lium.parser import fleet, parse, postprocess, wants
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "lium"
EXECUTORS = RAW / "cgi_lium_executors.json"
MACHINES = RAW / "cgi_lium_machines.json"
WHEN = dt.datetime(2026, 8, 22, 18, 35, tzinfo=dt.UTC)
META = CaptureMeta(provider="lium", url=source.EXECUTORS_URL, captured_at=WHEN)


def machines():
    return parse(EXECUTORS.read_bytes(), META)


def test_price_per_gpu_is_usd_per_gpu_hour():
    offers = machines()
    assert len(offers) == 17
    b300 = sorted(o.price_per_gpu_hour for o in offers if o.extra["gpu_wording"]
                  == "NVIDIA B300 SXM6 AC")
    assert b300 == [7.97, 8.000300000000001]
    [us] = [o for o in offers if o.price_per_gpu_hour == 7.97]
    assert us.gpu_count == 8 and us.price_per_hour == pytest.approx(63.76)
    assert us.gpu_model == "B300-288GB" and us.region == "US"
    [h200] = [o for o in offers if o.extra["gpu_wording"] == "NVIDIA H200" and o.gpu_count == 8]
    assert h200.pricing_model == "spot" and h200.price_per_gpu_hour == 3.1
    assert h200.region == "IN"
    [rtx] = [o for o in offers if o.extra["gpu_wording"]
             == "NVIDIA RTX PRO 6000 Blackwell Server Edition"]
    assert rtx.price_per_gpu_hour == 1.01 and rtx.gpu_model == "RTX-PRO-6000-96GB"
    assert rtx.extra["available_gpu_count"] == 4 and rtx.gpu_count == 8 and rtx.available
    assert all(o.gpu_model for o in offers)  # every machine_name maps
    nvl = [o.gpu_model for o in offers if o.extra["gpu_wording"] == "NVIDIA H200 NVL"]
    assert nvl == ["H200-NVL-141GB"]


def test_book_as_loaded_with_fleet_size():
    catalog = Capture(provider="lium", url=source.MACHINES_URL, body=MACHINES.read_bytes(),
                      captured_at=WHEN)
    rows = postprocess(machines(), [catalog])
    by = {(o.sku, o.pricing_model, o.extra["market_stat"]): o for o in rows}
    b300 = by[("NVIDIA B300 SXM6 AC/8x", "on_demand", "min")]
    assert b300.price_per_gpu_hour == 7.97 and b300.extra["listings"] == 2
    # two sellers 7.97 and 8.0003: nearest-rank median = the lower
    assert by[("NVIDIA B300 SXM6 AC/8x", "on_demand", "median")].price_per_gpu_hour == 7.97
    assert b300.extra["highest_per_gpu_hour"] == 8.000300000000001
    assert b300.extra["fleet_gpus"] == 57 and b300.extra["rental_rate"] == 1.0
    assert by[("NVIDIA H200/8x", "spot", "min")].price_per_gpu_hour == 3.1
    assert len(rows) == 3 * 16  # 17 machines in 16 (model, count, tier) books
    out = gates.run_gates(rows)
    assert out.bad == [] and len(out.good) == 48


def test_catalog_is_read_for_fleet_only():
    assert not wants(CaptureMeta(provider="lium", url=source.MACHINES_URL, captured_at=WHEN))
    assert not wants(CaptureMeta(provider="lium", url=source.CAPACITY_URL, captured_at=WHEN))
    assert wants(META)
    by = fleet(MACHINES.read_bytes())
    assert by["NVIDIA A30"] == {"fleet_gpus": 0, "rental_rate": 0.0}


def test_pending_price_is_never_the_price_and_tier_must_agree_with_is_spot():
    doc = json.loads(EXECUTORS.read_bytes())
    doc[0]["pending_price_per_hour"] = 1.0
    doc[1]["specs"]["is_spot"] = True  # tier says secure
    offers, skipped = parse_body_counted(json.dumps(doc).encode(), META)
    assert len(offers) == 16
    first = [o for o in offers if o.extra["listing_id"] == doc[0]["id"]][0]
    assert first.price_per_gpu_hour == 7.97 and first.extra["pending_price_per_hour"] == 1.0
    assert skipped == {"tier 'secure' disagrees with specs.is_spot True": 1}


def test_bad_answers_are_errors():
    with pytest.raises(ParseError, match="lium: https://lium.io/api/executors: unknown layout"):
        parse(b'{"detail": "rate limited"}', META)
    with pytest.raises(ParseError, match="no machine with a price_per_gpu"):
        parse(b'[{"machine_name": "NVIDIA H100", "price_per_gpu": 0, "gpu_count": 1}]', META)
