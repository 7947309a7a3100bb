"""Voltage Park parser on the two real recorded API answers (values as in
../shared/PROVIDERS_MORE.md, read off the saved bytes), its paging and bad input."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.voltagepark import source
from gpuprices.spiders.providers.voltagepark.parser import parse
from gpuprices.warehouse import identity
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "voltagepark"
LOCATIONS = RAW / "cgi_voltagepark_locations.json"
PRESETS = RAW / "cgi_voltagepark_instant_deploy_presets.json"
WHEN = dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC)


def meta(url: str) -> CaptureMeta:
    return CaptureMeta(provider="voltagepark", url=url, captured_at=WHEN)


def test_locations_per_gpu_hour_sold_by_node():
    offers = parse_body(LOCATIONS.read_bytes(), meta(source.LOCATIONS_URL))
    rows = {o.interconnect: o for o in offers}
    assert sorted(rows) == ["ethernet", "infiniband"]
    eth, ib = rows["ethernet"], rows["infiniband"]
    assert eth.gpu_model == ib.gpu_model == "H100-SXM-80GB"
    assert eth.gpu_count == 8 and eth.price_per_gpu_hour == pytest.approx(1.99)
    assert ib.price_per_gpu_hour == pytest.approx(2.49)
    assert eth.price_per_hour == pytest.approx(15.92)
    # Zero GPUs in stock: the price still loads, marked not available.
    assert eth.available is False and eth.extra["gpus_in_stock"] == 0
    assert eth.pricing_model == "on_demand" and eth.currency == "USD"


def test_presets_per_instance_hour():
    offers = parse_body(PRESETS.read_bytes(), meta(source.PRESETS_URL))
    rows = {o.gpu_count: o for o in offers}
    assert sorted(rows) == [1, 2, 4, 8]
    assert rows[8].price_per_hour == 15.12 and rows[8].price_per_gpu_hour == pytest.approx(1.89)
    assert rows[4].price_per_hour == 7.56 and rows[2].price_per_hour == 3.78
    assert rows[1].price_per_hour == 1.89
    assert rows[8].extra["storage_rate_hourly"] == 0.8
    assert all(o.available is False for o in offers)  # location_ids_with_availability: []


def test_node_and_preset_are_different_offers():
    offers = (parse(LOCATIONS.read_bytes(), meta(source.LOCATIONS_URL))
              + parse(PRESETS.read_bytes(), meta(source.PRESETS_URL)))
    assert len({identity.of_offer(o) for o in offers}) == len(offers) == 6


def _capture(url: str, body: bytes) -> Capture:
    return Capture(provider="voltagepark", url=url, body=body, captured_at=WHEN)


def test_fetch_plan_and_paging():
    urls = [s.url for s in source.start_requests({})]
    assert urls == [source.LOCATIONS_URL, source.PRESETS_URL]
    # The real answer says has_next false: nothing more to fetch.
    assert source.follow(_capture(source.LOCATIONS_URL, LOCATIONS.read_bytes())) == []
    more = json.loads(LOCATIONS.read_text())
    more["has_next"] = True
    (nxt,) = source.follow(_capture(source.LOCATIONS_URL, json.dumps(more).encode()))
    assert nxt.url == source.LOCATIONS_URL + "?page=2"
    (third,) = source.follow(_capture(nxt.url, json.dumps(more).encode()))
    assert third.url == source.LOCATIONS_URL + "?page=3"
    assert source.follow(_capture(source.PRESETS_URL, PRESETS.read_bytes())) == []


def test_bad_input_is_a_clear_error():
    with pytest.raises(ParseError, match="voltagepark: .*: unknown layout"):
        parse(b'{"detail": "Not found."}', meta(source.LOCATIONS_URL))
    empty = json.loads(LOCATIONS.read_text())
    empty["results"] = []
    with pytest.raises(ParseError, match="no priced GPU locations"):
        parse(json.dumps(empty).encode(), meta(source.LOCATIONS_URL))
    broken = json.loads(LOCATIONS.read_text())
    del broken["results"][0]["specs_per_node"]["gpu_model"]
    with pytest.raises(ParseError, match="specs_per_node lacks"):
        parse(json.dumps(broken).encode(), meta(source.LOCATIONS_URL))
    with pytest.raises(ParseError, match="not valid JSON"):
        parse(b"<html>", meta(source.PRESETS_URL))
