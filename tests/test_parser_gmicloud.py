"""GMI Cloud parser on the real pricing-page excerpt and IDC roster (values from
../shared/PROVIDERS_MORE2.md, read off the saved bytes)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError, parse_body_counted
from gpuprices.spiders.providers.gmicloud import source
from gpuprices.spiders.providers.gmicloud.parser import idc_countries, parse, postprocess, wants
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "gmicloud"
PAGE = RAW / "cgi_gmicloud_pricing_excerpt.html"
IDCS = RAW / "cgi_gmicloud_idcs_excerpt.json"
WHEN = dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC)
META = CaptureMeta(provider="gmicloud", url=source.PRICING_URL, captured_at=WHEN)


def cards():
    return {o.sku: o for o in parse(PAGE.read_bytes(), META)}


def test_four_priced_cards_are_from_floors_per_gpu_hour():
    by = cards()
    assert sorted(by) == ["NVIDIA B200 GPU", "NVIDIA GB200", "NVIDIA H100 GPU", "NVIDIA H200"]
    assert by["NVIDIA GB200"].price_per_hour == 8.00 and by["NVIDIA GB200"].gpu_model == "GB200"
    assert by["NVIDIA H200"].price_per_gpu_hour == 2.60
    assert by["NVIDIA H200"].gpu_model == "H200-141GB"
    b200 = by["NVIDIA B200 GPU"]
    assert b200.price_per_hour == 4.00 and b200.gpu_model == "B200-180GB"
    assert b200.extra["stock"] == "Limited Availability" and b200.available is True
    for o in by.values():
        assert o.extra["price_kind"] == "from" and o.pricing_model == "on_demand"
        assert o.gpu_count == 1 and o.currency == "USD"


def test_the_meta_description_price_is_not_a_card():
    # "$2.00" stands four times in meta/og/twitter/JSON-LD; only the H100 card is a row.
    assert PAGE.read_text().count("from $2.00") == 5
    assert [o.sku for o in parse(PAGE.read_bytes(), META) if o.price_per_hour == 2.0] == [
        "NVIDIA H100 GPU"]


def test_pre_order_card_gives_no_row_and_is_counted():
    offers, skipped = parse_body_counted(PAGE.read_bytes(), META)
    assert "NVIDIA GB300" not in {o.sku for o in offers}
    assert skipped == {"no price ('Pre order')": 1}


def test_h100_without_form_factor_stays_unmapped_with_its_reason():
    h100 = cards()["NVIDIA H100 GPU"]
    assert h100.price_per_hour == 2.00 and h100.gpu_model is None
    assert "no H100 form factor" in h100.extra["unmapped_reason"]


def test_roster_is_not_a_price_document_but_names_the_countries():
    idcs_meta = CaptureMeta(provider="gmicloud", url=source.IDCS_URL, captured_at=WHEN)
    assert wants(META) and not wants(idcs_meta)
    assert idc_countries(IDCS.read_bytes()) == ["JP", "SG", "TW", "US"]
    roster = Capture(provider="gmicloud", url=source.IDCS_URL, body=IDCS.read_bytes(),
                     captured_at=WHEN)
    rows = postprocess(parse(PAGE.read_bytes(), META), [roster])
    assert all(o.extra["idc_countries"] == ["JP", "SG", "TW", "US"] for o in rows)


def test_a_page_without_cards_is_an_error_naming_provider_and_url():
    with pytest.raises(ParseError, match="gmicloud: https://www.gmicloud.ai/en/pricing: "
                                         "unknown layout"):
        parse(b"<html><body><h3>Pricing</h3></body></html>", META)
    only_unpriced = PAGE.read_text().replace("from $", "call $")
    with pytest.raises(ParseError, match="none with a 'from \\$X'"):
        parse(only_unpriced.encode(), META)
