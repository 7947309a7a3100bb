"""Compute Pulse parser on the real listings and supply answers (values from
../shared/PROVIDERS_MORE2.md, read off the saved bytes): prices per GPU-hour in the seller's own
currency, the seller kept as the underlying cloud, first-party clouds not counted twice, the
fetch plan's paging."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.computepulse import source
from gpuprices.spiders.providers.computepulse.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "computepulse"
AT = dt.datetime(2026, 8, 22, 18, 7, 8, tzinfo=dt.UTC)
LISTINGS = "https://compute-pulse.com/api/listings?gpu={}&limit=200&offset=0"


def read(name: str, slug: str | None = None, url: str | None = None):
    meta = CaptureMeta("computepulse", url or LISTINGS.format(slug), AT)
    return parse((RAW / name).read_bytes(), meta)


def one(offers, listing):
    [o] = [o for o in offers if o.extra.get("listing_id") == listing]
    return o


def test_b300_book_prices_per_gpu_in_the_sellers_currency():
    offers = read("cgi_computepulse_b300_listings.json", "nvidia-b300")
    assert len(offers) == 9
    assert {o.gpu_model for o in offers} == {"B300-288GB"}
    spot = one(offers, "900001")
    assert (spot.pricing_model, spot.price_per_gpu_hour, spot.gpu_count) == ("spot", 3.75, 8)
    tensorpool = one(offers, "900004")
    assert tensorpool.price_per_gpu_hour == 5.49 and tensorpool.pricing_model == "on_demand"
    assert tensorpool.extra["via"] == "via Compute Pulse from TensorPool"
    # Scaleway prices in euros: the row keeps EUR 7.50, the index's own USD figure beside it.
    scaleway = one(offers, "900007")
    assert (scaleway.currency, scaleway.price_per_gpu_hour, scaleway.price_per_hour) == (
        "EUR", 7.5, 60.0)
    assert scaleway.extra["index_usd_per_gpu_hour"] == 8.7743


def test_sellers_we_read_first_party_are_counted_under_them():
    offers = read("cgi_computepulse_b300_listings.json", "nvidia-b300")
    counted = {o.extra["listing_id"]: o.extra.get("counted_under") for o in offers}
    # Verda three times from three sources, Scaleway three sizes, GPU.ai: all first-party here.
    assert counted["900001"] == counted["900002"] == counted["900006"] == "verda"
    assert counted["900007"] == "scaleway" and counted["900005"] == "gpuai"
    assert all(o.extra["underlying"] for o in offers)


def test_h100_book_reserved_term_and_inr():
    offers = read("cgi_computepulse_h100_listings.json", "nvidia-h100")
    vast = [o for o in offers if o.extra["underlying"] == "Vast.ai"]
    assert {(o.gpu_count, o.pricing_model, o.price_per_gpu_hour) for o in vast} == {
        (2, "spot", 0.302), (1, "on_demand", 1.387)}
    assert all(o.extra["counted_under"] == "vast" for o in vast)
    cyfuture = one(offers, "900017")
    assert (cyfuture.currency, cyfuture.price_per_gpu_hour, cyfuture.gpu_count) == (
        "INR", 205.75, 8)
    assert cyfuture.pricing_model == "reserved" and cyfuture.commitment_months == 12
    assert cyfuture.extra["min_duration_hours"] == 8640
    assert cyfuture.extra["index_usd_per_gpu_hour"] == 2.1499
    # A cloud we do not read keeps counting as Compute Pulse's offer, labelled.
    assert "counted_under" not in cyfuture.extra
    assert cyfuture.extra["via"] == "via Compute Pulse from Cyfuture AI"
    hyperstack = one(offers, "900016")
    assert hyperstack.gpu_model == "H100-PCIE-80GB" and hyperstack.price_per_gpu_hour == 1.75


def test_rtx4090_chf_listing():
    offers = read("cgi_computepulse_rtx4090_listings.json", "nvidia-rtx-4090")
    swiss = one(offers, "900013")
    assert (swiss.currency, swiss.price_per_gpu_hour, swiss.gpu_model) == (
        "CHF", 0.4, "RTX4090-24GB")
    assert swiss.extra["index_usd_per_gpu_hour"] == 0.4923
    assert sorted(o.price_per_gpu_hour for o in offers if o.pricing_model == "spot") == [
        0.134, 0.135, 0.136]


def test_availability_probe_reads_its_one_row():
    [o] = read("cgi_computepulse_b300_available_probe.json",
               url="https://compute-pulse.com/api/listings?gpu=nvidia-b300&available=true"
                   "&limit=1&offset=0")
    assert (o.price_per_gpu_hour, o.gpu_count, o.pricing_model) == (5.251, 8, "spot")


def test_empty_book_is_an_error_naming_the_slug():
    with pytest.raises(ParseError, match=r"empty book for gpu='amd-mi325x' \(page.total 0\)"):
        read("cgi_computepulse_mi325x_listings.json", "amd-mi325x")


def test_canned_catalog_and_a_foreign_gpu_link_are_refused():
    doc = json.loads((RAW / "cgi_computepulse_b300_listings.json").read_bytes())
    canned = {**doc, "meta": {**doc["meta"], "catalog_status": "seed_fallback"}}
    meta = CaptureMeta("computepulse", LISTINGS.format("nvidia-b300"), AT)
    with pytest.raises(ParseError, match="seed_fallback"):
        parse(json.dumps(canned).encode(), meta)
    meta = CaptureMeta("computepulse", LISTINGS.format("nvidia-h100"), AT)
    with pytest.raises(ParseError, match="not the queried gpu 'nvidia-h100'"):
        parse(json.dumps(doc).encode(), meta)


def test_supply_board():
    url = source.SUPPLY_URL
    offers = read("cgi_computepulse_supply_supply_selling.json", url=url)
    by_slug = {o.extra["slug"]: o for o in offers}
    # 7 classifieds: the unpriced Anonymous 8x H100 is not an offer.
    assert len(offers) == 6 and "example-handle" not in by_slug
    h100 = by_slug["example-seller-one-h100-aa0001"]
    assert (h100.price_per_gpu_hour, h100.gpu_count, h100.pricing_model) == (1.49, 4, "on_demand")
    assert h100.gpu_model is None and "without its form factor" in h100.extra["unmapped_reason"]
    l40s = by_slug["example-seller-two-l40s-aa0002"]
    assert (l40s.price_per_gpu_hour, l40s.pricing_model, l40s.commitment_months) == (
        0.92, "committed", 1)
    h200 = by_slug["example-seller-three-h200-aa0004"]
    assert (h200.gpu_count, h200.extra["gpus_listed"], h200.price_per_gpu_hour) == (
        128, 1016, 2.95)
    assert h200.commitment_months == 12 and h200.gpu_model == "H200-141GB"
    assert h200.extra["via"] == "via Compute Pulse from Example Seller Three"


def test_fetch_plan_pages_a_long_book():
    urls = [s.url for s in source.start_requests({})]
    assert source.listings_url("nvidia-h100") in urls and source.SUPPLY_URL in urls
    page = Capture("computepulse", source.listings_url("nvidia-h100"),
                   (RAW / "cgi_computepulse_h100_listings.json").read_bytes(), AT)
    [nxt] = source.follow(page)
    assert nxt.url == source.listings_url("nvidia-h100", 200)
    last = Capture("computepulse", source.listings_url("nvidia-b300"),
                   (RAW / "cgi_computepulse_b300_listings.json").read_bytes(), AT)
    assert source.follow(last) == []  # next_offset null
