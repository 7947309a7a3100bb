"""Runpod parsers on the four real captures (values read off each capture) and bad input."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.runpod import source as runpod_source
from gpuprices.spiders.providers.runpod.parser import parse
from gpuprices.warehouse.contract import CaptureMeta, offers_to_table
from tests.offer_index import index

RAW = Path(__file__).parent / "fixtures" / "raw" / "runpod"
API = RAW / "runpod_graphql_gpuTypes_ewyluda_fixture.json"
NEXT_2023 = RAW / "runpod_io_gpu-instance_pricing_wayback_20230929070808_nextdata.html"
ATTR_2025 = RAW / "runpod_io_pricing_wayback_20250909131230_excerpt.html"
JSONLD_2026 = RAW / "runpod_io_pricing_wayback_20260810082317_jsonld.html"

API_URL = "https://api.runpod.io/graphql"
PAGE_2023 = "https://www.runpod.io/gpu-instance/pricing"
PAGE = "https://www.runpod.io/pricing"


def meta(url: str, when: str = "2026-09-29T12:00:00+00:00", method: str = "GET") -> CaptureMeta:
    return CaptureMeta(provider="runpod", url=url, captured_at=dt.datetime.fromisoformat(when),
                       method=method)


# --- API --------------------------------------------------------------------------------------


def test_api_capture_values():
    offers = parse(API.read_bytes(), meta(API_URL, method="POST"))
    rows = index(offers)
    h100 = rows[("NVIDIA H100 80GB HBM3/secure", "on_demand", None)]
    assert h100.price_per_hour == 3.49 and h100.gpu_model == "H100-SXM-80GB"
    assert h100.gpu_count == 1 and h100.price_per_gpu_hour == 3.49
    assert h100.billing_increment_s == 1 and h100.gpu_memory_gb == 80
    assert h100.extra["source"] == "api" and h100.extra["layout"] == "api"
    assert h100.extra["gpu_wording"] == "NVIDIA H100 80GB HBM3"
    assert h100.extra["display_name"] == "H100 SXM"
    assert rows[("NVIDIA H100 80GB HBM3/community", "community", None)].price_per_hour == 2.69
    assert rows[("NVIDIA B200/secure", "on_demand", None)].price_per_hour == 6.79
    assert rows[("NVIDIA B200/community", "community", None)].price_per_hour == 5.98
    assert rows[("NVIDIA B300 SXM6 AC/secure", "on_demand", None)].gpu_model == "B300-288GB"
    mi300 = rows[("AMD Instinct MI300X OAM/secure", "on_demand", None)]
    assert mi300.price_per_hour == 2.39 and mi300.gpu_model == "MI300X-192GB"
    assert "suspect_placeholder" not in mi300.extra


def test_api_placeholder_half_dollar_is_kept_and_flagged():
    rows = index(parse(API.read_bytes(), meta(API_URL)))
    for sku in ("AMD Instinct MI300X OAM/community", "NVIDIA H200 NVL/community",
                "NVIDIA RTX 2000 Ada Generation/community"):
        row = rows[(sku, "community", None)]
        assert row.price_per_hour == 0.5 and row.extra["suspect_placeholder"] is True
    maxq = "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"
    assert rows[(f"{maxq}/secure", "on_demand", None)].extra["suspect_placeholder"] is True
    assert rows[(f"{maxq}/community", "community", None)].price_per_hour == 1.64


def test_api_zero_means_not_offered_and_unknown_record_gives_nothing():
    offers = parse(API.read_bytes(), meta(API_URL))
    skus = {o.sku for o in offers}
    # securePrice 0: A100 SXM 40GB and both V100s are community-only in this capture.
    assert "NVIDIA A100-SXM4-40GB/secure" not in skus
    assert "NVIDIA A100-SXM4-40GB/community" in skus
    assert "Tesla V100-PCIE-16GB/secure" not in skus
    assert not [o for o in offers if o.sku.lower().startswith("unknown")]
    # 48 types, the last "unknown": 47 real; 6 have securePrice 0 -> 47 * 2 - 6 rows.
    assert len(json.loads(API.read_bytes())["data"]["gpuTypes"]) == 48
    assert len(offers) == 47 * 2 - 6
    assert {o.pricing_model for o in offers} == {"on_demand", "community"}


def test_api_geforce_and_mig_wordings_mapped():
    rows = index(parse(API.read_bytes(), meta(API_URL)))
    r3070 = rows[("NVIDIA GeForce RTX 3070/community", "community", None)]
    assert r3070.gpu_model == "RTX3070-8GB" and r3070.price_per_hour == 0.13
    assert all(o.gpu_model for o in rows.values())
    # a MIG slice is a quarter of the 96 GB card: fractional count, whole-GPU equivalent price
    mig = rows[("NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb/secure", "on_demand",
                None)]
    assert (mig.gpu_model, mig.gpu_count, mig.gpu_memory_gb) == ("RTX-PRO-6000-96GB", 0.25, 96)
    assert mig.extra["slice_memory_gb"] == 24 and mig.extra["mig_profile"] == "1g.24gb"
    assert mig.price_per_gpu_hour == pytest.approx(mig.price_per_hour * 4)
    half = rows[("NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 2g.48gb/secure", "on_demand",
                 None)]
    assert half.gpu_count == 0.5


def test_unknown_wording_is_kept_unmapped_not_guessed():
    body = json.dumps({"data": {"gpuTypes": [
        {"id": "NVIDIA Imaginary X9 MIG 1g.10gb", "memoryInGb": 10, "securePrice": 1.0},
        {"id": "NVIDIA Imaginary X9", "memoryInGb": 40, "securePrice": 2.0}]}}).encode()
    offers = parse(body, meta(API_URL))
    assert len(offers) == 2 and all(o.gpu_model is None and o.gpu_count == 1 for o in offers)


def test_offers_fit_the_arrow_schema():
    table = offers_to_table(parse(API.read_bytes(), meta(API_URL)))
    assert table.num_rows == 88
    assert json.loads(table.column("extra")[0].as_py())["source"] == "api"


# --- 2023 __NEXT_DATA__ --------------------------------------------------------------------------


def test_nextdata_2023_values():
    m = meta(PAGE_2023, "2023-09-29T07:08:08+00:00")
    offers = parse(NEXT_2023.read_bytes(), m)
    rows = index(offers)
    assert all(o.extra["source"] == "page" and o.extra["layout"] == "nextdata" for o in offers)
    assert offers[0].snapshot_date == dt.date(2023, 9, 29)
    h100 = "NVIDIA H100 80GB HBM3"
    assert rows[(f"{h100}/secure", "on_demand", None)].price_per_hour == 4.49
    assert rows[(f"{h100}/community", "community", None)].price_per_hour == 4.09
    spot = rows[(f"{h100}/community", "spot", None)]
    assert spot.price_per_hour == 2.49 and spot.extra["price_field"] == "communitySpotPrice"
    # lowestPrice.minimumBidPrice 2.49 equals communitySpotPrice: noted, not a second row.
    assert spot.extra["also_minimum_bid_price"] is True
    assert spot.extra["stock_status"] == "Low"
    l40 = "NVIDIA L40/savings-plan"
    assert rows[(l40, "committed", 1)].price_per_hour == 1.08
    assert rows[(l40, "committed", 3)].price_per_hour == 1.02
    assert rows[(l40, "committed", 6)].price_per_hour == 0.97
    assert rows[("NVIDIA L40/secure", "spot", None)].price_per_hour == 0.69
    a6000 = "NVIDIA RTX A6000"
    assert rows[(f"{a6000}/secure", "spot", None)].price_per_hour == 0.49
    assert rows[(f"{a6000}/community", "spot", None)].price_per_hour == 0.34
    assert rows[("NVIDIA A100 80GB PCIe/secure", "on_demand", None)].gpu_model == "A100-PCIE-80GB"


def test_nextdata_2023_has_25_records():
    text = NEXT_2023.read_text()
    raw = re.search(r'id="__NEXT_DATA__"[^>]*>(.*?)</script>', text, re.S).group(1)
    assert len(json.loads(raw)["props"]["pageProps"]["data"]) == 25
    skus = {o.sku for o in parse(NEXT_2023.read_bytes(), meta(PAGE_2023))}
    assert len({s.rsplit("/", 1)[0] for s in skus}) == 25


def test_nextdata_2023_cloud_flags_gate_prices():
    offers = parse(NEXT_2023.read_bytes(), meta(PAGE_2023))
    keys = {(o.sku, o.pricing_model) for o in offers}
    # communityCloud false with communityPrice 1.69 and communitySpotPrice 0.89: no community row.
    assert ("NVIDIA A100-SXM4-80GB/community", "community") not in keys
    assert ("NVIDIA A100-SXM4-80GB/community", "spot") not in keys
    assert ("NVIDIA A100-SXM4-80GB/secure", "on_demand") in keys
    # L40 community 0.5 and L4 community 0.44 sit behind communityCloud false as well.
    assert ("NVIDIA L40/community", "community") not in keys
    assert ("NVIDIA L4/community", "community") not in keys
    # secureCloud false with securePrice 1.09 (A100 PCIe 40GB): community only.
    assert ("NVIDIA A100-PCIE-40GB/secure", "on_demand") not in keys
    assert ("NVIDIA A100-PCIE-40GB/community", "community") in keys


# --- 2025 data attributes ------------------------------------------------------------------------


def test_attributes_2025_values():
    offers = parse(ATTR_2025.read_bytes(), meta(PAGE, "2025-09-09T13:12:30+00:00"))
    rows = index(offers)
    assert len(offers) == 10  # 5 priced rows x (secure, community); A100 PCIe is cut, unpriced
    assert rows[("NVIDIA H200/secure", "on_demand", None)].price_per_hour == 3.79
    assert rows[("NVIDIA H200/community", "community", None)].price_per_hour == 3.59
    assert rows[("NVIDIA B200/secure", "on_demand", None)].price_per_hour == 5.99
    assert rows[("NVIDIA B200/community", "community", None)].price_per_hour == 5.98
    sxm = rows[("NVIDIA H100 80GB HBM3/secure", "on_demand", None)]
    assert sxm.price_per_hour == 2.69 and sxm.gpu_model == "H100-SXM-80GB"
    assert sxm.vcpus == 20 and sxm.ram_gb == 125 and sxm.gpu_memory_gb == 80
    assert rows[("NVIDIA H100 80GB HBM3/community", "community", None)].price_per_hour == 2.69
    h200 = rows[("NVIDIA H200/secure", "on_demand", None)]
    assert h200.vcpus == 24 and h200.ram_gb == 276 and h200.gpu_model == "H200-141GB"
    assert rows[("NVIDIA H100 NVL/secure", "on_demand", None)].gpu_model == "H100-NVL-94GB"
    assert rows[("NVIDIA H100 PCIe/community", "community", None)].price_per_hour == 1.99
    assert all(o.extra["layout"] == "attributes" and o.extra["source"] == "page"
               for o in offers)
    assert h200.extra["price_field"] == "data-secure-cloud-price"


def test_attributes_later_names_data_secure_data_community():
    body = (ATTR_2025.read_bytes()
            .replace(b"data-secure-cloud-price=", b"data-secure=")
            .replace(b"data-community-cloud-price=", b"data-community="))
    rows = index(parse(body, meta(PAGE)))
    assert rows[("NVIDIA B200/secure", "on_demand", None)].price_per_hour == 5.99
    assert rows[("NVIDIA B200/secure", "on_demand", None)].extra["price_field"] == "data-secure"


def test_attributes_gpu_listed_twice_counted_once():
    text = ATTR_2025.read_text()
    start = text.rindex('<div role="listitem"', 0, text.index(">H100 SXM<"))
    end = text.index('<div role="listitem"', start + 10)
    doubled = text[:end] + text[start:end] + text[end:]
    assert doubled.count(">H100 SXM<") == 2
    assert len(parse(doubled.encode(), meta(PAGE))) == 10


# --- 2026 JSON-LD --------------------------------------------------------------------------------


def test_jsonld_2026_values():
    offers = parse(JSONLD_2026.read_bytes(), meta(PAGE, "2026-08-10T08:23:17+00:00"))
    rows = index(offers)
    assert len({o.sku.rsplit("/", 1)[0] for o in offers}) == 19
    assert len(offers) == 38
    assert rows[("NVIDIA B300 SXM6 AC/secure", "on_demand", None)].price_per_hour == 7.39
    assert rows[("NVIDIA B300 SXM6 AC/community", "community", None)].price_per_hour == 6.94
    assert rows[("NVIDIA H100 80GB HBM3/secure", "on_demand", None)].price_per_hour == 2.99
    assert rows[("NVIDIA H100 80GB HBM3/community", "community", None)].price_per_hour == 2.69
    # lowPrice/highPrice are not tiers: L4 community 0.44 is above secure 0.39.
    assert rows[("NVIDIA L4/community", "community", None)].price_per_hour == 0.44
    assert rows[("NVIDIA L4/secure", "on_demand", None)].price_per_hour == 0.39
    a100 = rows[("NVIDIA A100 80GB PCIe/secure", "on_demand", None)]
    assert a100.price_per_hour == 1.39 and a100.gpu_model == "A100-PCIE-80GB"
    pro = "NVIDIA RTX PRO 6000 Blackwell Server Edition/secure"
    assert rows[(pro, "on_demand", None)].gpu_model == "RTX-PRO-6000-96GB"
    assert all(o.gpu_model for o in offers)
    assert all(o.extra["layout"] == "jsonld" for o in offers)


# --- bad input -----------------------------------------------------------------------------------


def _fails(body: bytes, url: str, words: str) -> ParseError:
    with pytest.raises(ParseError) as err:
        parse(body, meta(url))
    assert err.value.provider == "runpod" and err.value.url == url
    assert words in err.value.problem, err.value.problem
    assert "runpod" in str(err.value) and url in str(err.value)
    return err.value


def test_empty_body():
    _fails(b"", API_URL, "empty")
    _fails(b"   \n", PAGE, "empty")


def test_truncated_json():
    _fails(API.read_bytes()[:500], API_URL, "not valid JSON")


def test_graphql_error_answer():
    body = json.dumps({"errors": [{"message": "Cannot query field \"x\""}]}).encode()
    _fails(body, API_URL, "GraphQL errors")


def test_api_with_every_price_zero():
    doc = json.loads(API.read_bytes())
    for rec in doc["data"]["gpuTypes"]:
        rec["securePrice"] = rec["communityPrice"] = 0
    _fails(json.dumps(doc).encode(), API_URL, "no prices")


def test_jsonld_page_with_script_removed():
    text = JSONLD_2026.read_text()
    stripped = re.sub(r"<script type=\"application/ld\+json\">.*?</script>", "", text, flags=re.S)
    assert stripped != text
    _fails(stripped.encode(), PAGE, "unknown page layout")


def test_jsonld_page_without_gpu_products():
    text = JSONLD_2026.read_text().replace("GPU on Runpod", "on Runpod")
    _fails(text.encode(), PAGE, "no '<GPU> GPU on Runpod' Product")


def test_attribute_page_with_no_prices():
    body = re.sub(rb'data-(secure|community)-cloud-price="[0-9.]*"', rb'data-\1-cloud-price="0"',
                  ATTR_2025.read_bytes())
    _fails(body, PAGE, "unknown page layout")


def test_nextdata_page_with_no_prices():
    text = NEXT_2023.read_text()
    text = re.sub(r'"(\w*Price)":[0-9.]+', r'"\1":null', text)
    _fails(text.encode(), PAGE_2023, "no prices")


def test_another_providers_page():
    lam = Path(__file__).parent / "fixtures" / "raw" / "lambda"
    body = (lam / "lambda_ai_pricing_wayback_20260109103934_excerpt.html").read_bytes()
    _fails(body, PAGE, "unknown page layout")


def test_non_html_body():
    _fails(b"%PDF-1.4 binary", PAGE, "not HTML")


# --- fetch plan ----------------------------------------------------------------------------------


def test_start_requests_post_graphql_and_get_page():
    api, page = runpod_source.start_requests({})
    assert api.url == API_URL and api.method == "POST"
    assert api.headers["Content-Type"] == "application/json"
    assert "Authorization" not in api.headers and "api_key" not in api.url
    query = json.loads(api.body)["query"]
    for field in ("securePrice", "communityPrice", "secureSpotPrice", "communitySpotPrice",
                  "oneMonthPrice", "threeMonthPrice", "sixMonthPrice", "minimumBidPrice",
                  "memoryInGb", "displayName", "lowestPrice(input: {gpuCount: 1})"):
        assert field in query
    assert page.url == PAGE and page.method == "GET" and not page.browser


CGI_2026_08 = RAW / "cgi_runpod_gputypes.json"


def test_cgi_2026_08_api_values_and_spot_echoes_dropped():
    offers = parse(CGI_2026_08.read_bytes(), meta(API_URL, "2026-08-25T12:00:00+00:00", "POST"))
    rows = index(offers)
    assert rows[("NVIDIA H100 80GB HBM3/secure", "on_demand", None)].price_per_hour == 3.29
    assert rows[("NVIDIA H100 80GB HBM3/community", "community", None)].price_per_hour == 2.69
    assert rows[("NVIDIA H200/secure", "on_demand", None)].price_per_hour == 4.59
    assert rows[("NVIDIA H200/community", "community", None)].price_per_hour == 3.59
    assert rows[("NVIDIA B200/secure", "on_demand", None)].price_per_hour == 6.79
    assert rows[("NVIDIA B200/community", "community", None)].price_per_hour == 5.98
    mi300x = rows[("AMD Instinct MI300X OAM/secure", "on_demand", None)].price_per_hour
    assert mi300x == 2.39
    # communityCloud false (MI300X's 0.5 placeholder), secureCloud false (A100 SXM 40GB at 0)
    assert ("AMD Instinct MI300X OAM/community", "community", None) not in rows
    assert ("NVIDIA A100-SXM4-40GB/secure", "on_demand", None) not in rows
    # every *SpotPrice and minimum bid here echoes the uninterrupted price: no spot rows
    assert not [o for o in offers if o.pricing_model == "spot"]
    assert rows[("NVIDIA B200/community", "community", None)].extra["spot_price_same"] is True
    assert len(offers) == 15 and all(o.gpu_model for o in offers)


# --- page names are the API's GPU ids (one offer whatever the source) ----------------------------


def _identity(o):
    return (o.sku, o.gpu_model, o.gpu_count, o.pricing_model)


def test_page_rows_are_named_by_the_api_gpu_id():
    api = {_identity(o) for o in parse(API.read_bytes(), meta(API_URL, method="POST"))}
    aug = {_identity(o) for o in parse(CGI_2026_08.read_bytes(), meta(API_URL, method="POST"))}
    page_2025 = parse(ATTR_2025.read_bytes(), meta(PAGE, "2025-09-09T13:12:30+00:00"))
    page_2026 = parse(JSONLD_2026.read_bytes(), meta(PAGE, "2026-08-10T08:23:17+00:00"))
    # Every row of both page layouts is an offer the API lists, under the same identity.
    assert {_identity(o) for o in page_2025} <= api
    assert {_identity(o) for o in page_2026} <= api
    assert not [o for o in page_2025 + page_2026 if o.extra.get("gpu_id_unmapped")]
    sxm = index(page_2026)[("NVIDIA H100 80GB HBM3/secure", "on_demand", None)]
    assert sxm.extra["gpu_wording"] == "H100 SXM" and sxm.price_per_hour == 2.99
    # "H200" on the page is the API's "H200 SXM" (id "NVIDIA H200"), not the 143 GB H200 NVL.
    h200 = index(page_2025)[("NVIDIA H200/community", "community", None)]
    assert h200.extra["gpu_wording"] == "H200" and h200.gpu_memory_gb == 141
    assert ("NVIDIA H200/community", "H200-141GB", 1, "community") in aug
    # "RTX Pro 6000" (page case) is displayName "RTX PRO 6000", the Server Edition.
    pro = index(page_2026)[("NVIDIA RTX PRO 6000 Blackwell Server Edition/community",
                            "community", None)]
    assert pro.price_per_hour == 1.69


def test_page_name_unknown_to_the_api_keeps_its_own_name():
    text = JSONLD_2026.read_text().replace("B300 GPU on Runpod", "Z900 GPU on Runpod")
    rows = index(parse(text.encode(), meta(PAGE)))
    z900 = rows[("Z900/secure", "on_demand", None)]
    assert z900.extra["gpu_id_unmapped"] is True and z900.gpu_model is None


# --- stock ---------------------------------------------------------------------------------------


def test_cgi_2026_08_rows_carry_stock_per_cloud():
    rows = index(parse(CGI_2026_08.read_bytes(), meta(API_URL, "2026-08-25T12:00:00+00:00")))
    h100 = rows[("NVIDIA H100 80GB HBM3/secure", "on_demand", None)]
    # lp1s (secure, 1 GPU) "Low"; lp8 "Low"; of 3 data centres listing it only AP-IN-1 has it.
    assert (h100.available, h100.extra["stock_status_secure"]) == (True, "Low")
    assert h100.extra["stock_status_8gpu"] == "Low"
    assert h100.extra["stock_data_centers"] == ["AP-IN-1"]
    assert h100.extra["stock_rule"] == "lp1s.stockStatus"
    # Community: the cheapest uninterrupted machine (2.69) is the community price, below secure.
    h100c = rows[("NVIDIA H100 80GB HBM3/community", "community", None)]
    assert h100c.available is True
    assert h100c.extra["stock_rule"] == "lowestPrice.uninterruptablePrice = communityPrice"
    assert rows[("NVIDIA H200/secure", "on_demand", None)].extra["stock_status_secure"] == "Medium"
    # MI300X: every stock probe null: sold out at the snapshot, price kept.
    mi300x = rows[("AMD Instinct MI300X OAM/secure", "on_demand", None)]
    assert (mi300x.available, mi300x.price_per_hour) == (False, 2.39)
    assert mi300x.extra["stock_rule"] == "lowestPrice.stockStatus null"
    # A100 SXM 40GB is community-only: its one-cloud stock is lowestPrice's "Low".
    a100 = rows[("NVIDIA A100-SXM4-40GB/community", "community", None)]
    assert a100.available is True and a100.extra["stock_status"] == "Low"
    b300 = rows[("NVIDIA B300 SXM6 AC/secure", "on_demand", None)]
    assert b300.extra["stock_data_centers"] == ["EU-NL-1", "EUR-IS-1", "US-WA-2"]
    assert sum(o.available is True for o in rows.values()) == 14
    assert sum(o.available is False for o in rows.values()) == 1


def test_nextdata_2023_rows_carry_stock_where_it_decides():
    rows = index(parse(NEXT_2023.read_bytes(), meta(PAGE_2023, "2023-09-29T07:08:08+00:00")))
    # lowestPrice null: no A100 SXM 80GB could be rented at all (secure 2.19 kept, sold out).
    sxm = rows[("NVIDIA A100-SXM4-80GB/secure", "on_demand", None)]
    assert (sxm.available, sxm.price_per_hour) == (False, 2.19)
    assert rows[("NVIDIA GeForce RTX 3090 Ti/community", "community", None)].available is False
    # L40 is secure-only: its "Low" is the secure cloud's.
    assert rows[("NVIDIA L40/secure", "on_demand", None)].available is True
    # H100 SXM: stock "Low" somewhere, the cheapest machine at the community price 4.09; no
    # probe tells whether the secure cloud had one: unknown, not guessed.
    assert rows[("NVIDIA H100 80GB HBM3/community", "community", None)].available is True
    secure = rows[("NVIDIA H100 80GB HBM3/secure", "on_demand", None)]
    assert secure.available is None and "stock_rule" not in secure.extra
    # Savings-plan rows name no cloud: unknown.
    assert rows[("NVIDIA L40/savings-plan", "committed", 1)].available is None


def test_api_capture_without_stock_probes_leaves_stock_unknown():
    offers = parse(API.read_bytes(), meta(API_URL, method="POST"))
    assert {o.available for o in offers} == {None}


def test_query_asks_for_the_stock_probes():
    query = runpod_source.GPU_TYPES_QUERY
    assert "lp1s: lowestPrice(input: {gpuCount: 1, secureCloud: true})" in query
    assert "lp8: lowestPrice(input: {gpuCount: 8})" in query
    assert "gpuAvailability" in query
