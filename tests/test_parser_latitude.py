"""Latitude.sh parser on the real pricing-page excerpt (escaped Next.js flight data; values from
../shared/PROVIDERS_MORE2.md, read off the saved bytes): one row per GPU plan, region and term,
USD per node-hour, BRL recorded beside it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.flows.pipeline import gates
from gpuprices.spiders.parsers import ParseError, parse_body_counted
from gpuprices.spiders.providers.latitude import source
from gpuprices.spiders.providers.latitude.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

PAGE = (Path(__file__).parent / "fixtures" / "raw" / "latitude"
        / "cgi_latitude_pricing_excerpt.html")
META = CaptureMeta(provider="latitude", url=source.PRICING_URL,
                   captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


def rows():
    return parse(PAGE.read_bytes(), META)


def find(offers, slug, region, model="on_demand"):
    [o] = [o for o in offers if o.sku == slug and o.region == region
           and o.pricing_model == model and (o.commitment_months or 0) in (0, 1)]
    return o


def test_b300_node_hour_month_and_year():
    offers = rows()
    b300 = find(offers, "g4-b300-large", "United States")
    assert b300.price_per_hour == 128 and b300.price_per_gpu_hour == 16.0
    assert b300.gpu_count == 8 and b300.gpu_model == "B300-288GB" and b300.gpu_memory_gb == 288
    assert b300.interconnect == "800Gbps Dual Plane RoCE"
    assert b300.extra["price_brl"] == 640 and b300.currency == "USD"
    assert b300.extra["stock"] == "unavailable" and b300.available is False
    month = find(offers, "g4-b300-large", "United States", "committed")
    assert month.commitment_months == 1 and month.extra["term_price"] == 46720
    assert month.price_per_hour == 64.0  # 46720 / 730 h
    [year] = [o for o in offers if o.sku == "g4-b300-large" and o.commitment_months == 12]
    assert year.extra["term_price"] == 392448 and year.price_per_hour == pytest.approx(44.8)


def test_one_row_per_region_and_unoffered_regions_give_none():
    offers = [o for o in rows() if o.sku == "g4-rtx6kpro-large" and o.pricing_model == "on_demand"]
    by = {o.region: o for o in offers}
    assert sorted(by) == ["Australia", "Japan", "Netherlands", "United States"]
    assert by["United States"].price_per_hour == 48 and by["Australia"].price_per_hour == 66
    assert by["Japan"].price_per_hour == 52 and by["Japan"].price_per_gpu_hour == 6.5
    assert by["United States"].gpu_model == "RTX-PRO-6000-96GB"
    assert by["United States"].available is True and by["United States"].extra["in_stock"] == [
        "CHI"]
    # United Kingdom: USD null, BRL 0 -> not offered, never $0
    assert "United Kingdom" not in by
    # priced yet unavailable
    assert by["Netherlands"].price_per_hour == 48 and by["Netherlands"].available is False


def test_h100_small_and_its_unmapped_reason():
    offers = rows()
    h100 = find(offers, "g3-h100-small", "United States")
    assert h100.price_per_hour == 3.37 and h100.gpu_count == 1
    assert h100.extra["price_brl"] == 18.54
    assert find(offers, "g3-h100-small", "United States", "committed").extra["term_price"] == 1230
    assert h100.gpu_model is None and "without SXM or PCIe" in h100.extra["unmapped_reason"]


def test_cpu_plans_and_the_cut_plan_give_no_rows():
    offers, skipped = parse_body_counted(PAGE.read_bytes(), META)
    assert {o.sku for o in offers} == {"g4-b300-large", "g4-rtx6kpro-large", "g3-h100-small"}
    assert len(offers) == 3 * (1 + 4 + 1)  # 3 terms x (B300 US, 4 priced RTX regions, H100 US)
    assert skipped["plan cut off in the captured flight data"] == 1
    for term in ("hour", "month", "year"):  # the RTX plan's United Kingdom
        assert skipped[f"no USD {term} price in region (not offered)"] == 1


def test_rows_pass_the_gates():
    out = gates.run_gates(rows())
    assert [(o.sku, why) for o, why in out.bad if o.gpu_model] == []


def test_a_page_without_plans_is_an_error():
    with pytest.raises(ParseError, match="latitude: https://www.latitude.sh/pricing: unknown"):
        parse(b"<html><body>Pricing</body></html>", META)
    cpu_only = b'<script>\\"plansData\\":{\\"servers\\":[{\\"id\\":\\"plan_x\\",' \
               b'\\"attributes\\":{\\"slug\\":\\"c3\\",\\"specs\\":{\\"gpu\\":{}}}}]}</script>'
    with pytest.raises(ParseError, match="1 plans, no GPU plan"):
        parse(cpu_only, META)
