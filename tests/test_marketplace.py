"""The marketplace summary (spiders/marketplace.py): nearest-rank figures, one price per host,
each listing once, on the real Vast.ai capture and copies of it changed one field at a time."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.spiders import marketplace
from gpuprices.spiders.providers.vast.parser import parse
from gpuprices.warehouse import identity
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "vast" / "cgi_vast_h100_sxm_asc.json"
META = CaptureMeta(provider="vast", url="https://console.vast.ai/api/v0/bundles/?q=%7B%7D",
                   captured_at=dt.datetime(2026, 8, 22, 18, 14, 42, tzinfo=dt.UTC))


@pytest.mark.parametrize(("n", "q", "index"), [
    (1, 0.0, 0), (1, 0.5, 0), (2, 0.5, 0), (4, 0.25, 0), (5, 0.25, 1), (8, 0.25, 1),
    (8, 0.5, 3), (9, 0.5, 4)])
def test_nearest_rank(n, q, index):
    assert marketplace.nearest_rank([1.0] * n, q) == index


def test_nearest_rank_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        marketplace.nearest_rank([], 0.5)


def rows(doc):
    return parse(json.dumps(doc).encode(), META)


def test_one_host_listing_many_times_is_one_seller():
    doc = json.loads(RAW.read_bytes())
    # The cheapest host lists four more 1x offers at higher prices (new offer ids).
    extra = [dict(doc["offers"][0], id=800000 + i, dph_total=9.0 + i) for i in range(4)]
    doc["offers"] += extra
    summary = {o.extra["market_stat"]: o for o in marketplace.summarise(rows(doc))}
    assert summary["min"].extra["listings"] == 12 and summary["min"].extra["sellers"] == 8
    # the median is still the 4th of the 8 hosts' own lowest prices
    assert summary["median"].price_per_gpu_hour == pytest.approx(1.7356, abs=1e-4)
    assert summary["median"].extra["highest_per_gpu_hour"] == pytest.approx(2.0022, abs=1e-4)


def test_summary_rows_are_three_offers_to_the_identity():
    summary = marketplace.summarise(rows(json.loads(RAW.read_bytes())))
    idents = {identity.of_offer(o) for o in summary}
    assert len(idents) == 3
    assert {i.variant for i in idents} == {"|||||min", "|||||p25", "|||||median"}
