"""Vast.ai parser on the four real bundles answers (values from ../shared/PROVIDERS_MORE.md,
read off the saved bytes) and the day's book as loaded: min / p25 / median per GPU model and
GPU count (spiders/marketplace.py)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.flows.pipeline import gates
from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.vast import source
from gpuprices.spiders.providers.vast.parser import capture_time, parse, postprocess
from gpuprices.warehouse.contract import CaptureMeta
from tests.conftest import manifest_rows

RAW = Path(__file__).parent / "fixtures" / "raw" / "vast"
FILES = ("cgi_vast_h100_sxm_asc.json", "cgi_vast_h100_sxm_desc.json",
         "cgi_vast_h200_nvl_asc.json", "cgi_vast_b300_asc.json")
WHEN = dt.datetime(2026, 8, 22, 18, 14, 42, tzinfo=dt.UTC)


def url_of(name: str) -> str:
    return next(r["url"] for r in manifest_rows("vast") if r["file"].endswith(name))


def meta(name: str) -> CaptureMeta:
    return CaptureMeta(provider="vast", url=url_of(name), captured_at=WHEN)


def listings(name: str):
    return parse((RAW / name).read_bytes(), meta(name))


def day():
    return postprocess([o for f in FILES for o in listings(f)], [])


def book(offers, sku):
    return {o.extra["market_stat"]: o for o in offers if o.sku == sku}


def test_listing_price_is_dph_total_per_instance_divided_by_gpus():
    asc = listings("cgi_vast_h100_sxm_asc.json")
    assert len(asc) == 8 and {o.gpu_count for o in asc} == {1}
    assert asc[0].price_per_hour == 1.3867407407407408
    assert asc[0].extra["dph_base"] == 1.3866666666666667  # GPU part only: not the price
    assert asc[-1].price_per_hour == 2.002222222222222
    assert all(o.gpu_model == "H100-SXM-80GB" and o.currency == "USD" for o in asc)
    desc = listings("cgi_vast_h100_sxm_desc.json")
    assert desc[0].gpu_count == 8 and desc[0].price_per_hour == 35.159555555555556
    assert desc[0].price_per_gpu_hour == pytest.approx(4.395, abs=5e-4)
    assert desc[2].gpu_count == 8 and desc[2].price_per_hour == 19.201777777777778
    assert desc[2].price_per_gpu_hour == pytest.approx(2.400, abs=5e-4)
    assert desc[2].region == "Taiwan, TW"
    assert desc[-1].gpu_count == 4 and desc[-1].price_per_hour == 12.271999999999998
    # verification is a word, kept as written (deverified listings are still rentable)
    assert desc[-1].extra["verification"] == "deverified"


def test_h200_nvl_and_b300_books():
    h200 = listings("cgi_vast_h200_nvl_asc.json")
    assert [o.price_per_hour for o in h200][::3] == [2.6688888888888886, 3.4014814814814813]
    assert {o.gpu_model for o in h200} == {"H200-NVL-141GB"}
    b300 = listings("cgi_vast_b300_asc.json")
    assert [(o.gpu_count, o.price_per_hour) for o in b300] == [
        (2, 15.002083333333335), (4, 30.00208333333334)]
    assert b300[1].price_per_gpu_hour == pytest.approx(7.50, abs=1e-3)
    assert {o.extra["host"] for o in b300} == {900017}  # one machine, two slices


def test_capture_time_is_end_date_minus_duration():
    doc = json.loads((RAW / "cgi_vast_h100_sxm_asc.json").read_bytes())
    assert capture_time(doc["offers"][0]).replace(microsecond=0) == WHEN


def test_day_book_min_p25_median_per_gpu_model_and_count():
    offers = day()
    one = book(offers, "H100 SXM/1x")
    assert set(one) == {"min", "p25", "median"}
    assert one["min"].price_per_gpu_hour == 1.3867407407407408
    # nearest rank over 8 sellers: p25 = 2nd lowest, median = 4th lowest
    assert one["p25"].price_per_gpu_hour == pytest.approx(1.4929, abs=1e-4)
    assert one["median"].price_per_gpu_hour == pytest.approx(1.7356, abs=1e-4)
    assert one["min"].extra["listings"] == 8 and one["min"].extra["hosts"] == 8
    eight = book(offers, "H100 SXM/8x")
    assert eight["min"].price_per_gpu_hour == pytest.approx(1.9335, abs=1e-4)
    assert eight["median"].price_per_gpu_hour == pytest.approx(2.4002, abs=1e-4)
    assert eight["min"].extra["listings"] == 3
    four = book(offers, "H100 SXM/4x")
    assert four["min"].price_per_hour == 12.271999999999998
    b300 = book(offers, "B300/4x")
    assert b300["min"].price_per_gpu_hour == pytest.approx(7.50, abs=1e-3)
    assert all(o.region is None and o.pricing_model == "on_demand" for o in offers)
    # every row says which listing its price is, and where it was read
    assert one["min"].extra["listing"]["listing_id"] == 700031
    assert one["min"].source_url == url_of("cgi_vast_h100_sxm_asc.json")


def test_the_gates_see_one_price_per_offer():
    out = gates.run_gates(day())
    assert out.bad == []
    assert len(out.good) == 3 * 6  # H100 1x/4x/8x, H200 NVL 1x, B300 2x/4x


def test_overlapping_windows_count_a_listing_once():
    asc = listings("cgi_vast_h100_sxm_asc.json")
    twice = postprocess(asc + listings("cgi_vast_h100_sxm_asc.json"), [])
    assert book(twice, "H100 SXM/1x")["min"].extra["listings"] == 8


def test_fetch_plan_and_desc_window():
    specs = source.start_requests({})
    names = [source.query_of(s.url)["gpu_name"]["eq"] for s in specs]
    assert {"H100 SXM", "H200 NVL", "B300"} <= set(names)
    assert all(s.url.startswith(source.BUNDLES_URL + "?q=") for s in specs)
    full = {"offers": [{"id": i} for i in range(source.LIMIT)]}
    cap = Capture(provider="vast", url=specs[0].url, body=json.dumps(full).encode(),
                  captured_at=WHEN, status=200)
    [desc] = source.follow(cap)
    assert source.query_of(desc.url)["order"] == [["dph_total", "desc"]]
    short = Capture(provider="vast", url=specs[0].url, body=b'{"offers": [{"id": 1}]}',
                    captured_at=WHEN, status=200)
    assert source.follow(short) == []
    assert source.follow(Capture(provider="vast", url=desc.url, body=cap.body,
                                 captured_at=WHEN, status=200)) == []


def test_an_empty_book_is_an_error_naming_the_gpu():
    with pytest.raises(ParseError, match="'MI300X'"):
        parse_body(b'{"offers": []}', CaptureMeta(
            provider="vast", url=source.url_for(source.query("MI300X")), captured_at=WHEN))


def test_bad_input():
    m = meta("cgi_vast_b300_asc.json")
    with pytest.raises(ParseError, match="not valid JSON"):
        parse(b"<html>", m)
    with pytest.raises(ParseError, match="no 'offers' list"):
        parse(b'{"data": []}', m)
    doc = json.loads((RAW / "cgi_vast_b300_asc.json").read_bytes())
    for o in doc["offers"]:
        o["rentable"] = False
    with pytest.raises(ParseError, match="no rentable"):
        parse(json.dumps(doc).encode(), m)
