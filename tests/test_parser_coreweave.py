"""CoreWeave parsers on the real captures (values read off each capture), the derived JSON, and
bad input."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.coreweave import source as coreweave_source
from gpuprices.spiders.providers.coreweave.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

FIX = Path(__file__).parent / "fixtures" / "raw"
CW = FIX / "coreweave"
COMPONENT_2023 = CW / "coreweave_gpu-cloud-pricing_wayback_20230921194906_excerpt.html"
PAGE_2026 = FIX / "coreweave" / "gpu-price-index_coreweave.html"
DERIVED = FIX / "coreweave" / "coreweave_pricing_parsed_becloudready_2026-02.json"
URL_2023 = "http://www.coreweave.com/gpu-cloud-pricing"
URL = "https://www.coreweave.com/pricing"


def meta(url: str = URL, when: str = "2026-10-04T12:00:00+00:00") -> CaptureMeta:
    return CaptureMeta(provider="coreweave", url=url, captured_at=dt.datetime.fromisoformat(when))


def keyed(offers):
    out = {}
    for o in offers:
        key = (o.extra.get("data_product") or o.sku, o.region, o.pricing_model)
        assert key not in out, f"duplicate {key}"
        out[key] = o
    return out


# --- 2025+ instance layout -----------------------------------------------------------------------


def test_instances_north_america_values():
    rows = keyed(parse(PAGE_2026.read_bytes(), meta()))
    h100 = rows[("hgx-h100", "north-america", "on_demand")]
    assert h100.gpu_model == "H100-SXM-80GB" and h100.gpu_count == 8
    assert h100.price_per_hour == 49.24 and h100.price_per_gpu_hour == pytest.approx(6.155)
    assert h100.vcpus == 128 and h100.ram_gb == 2048 and h100.gpu_memory_gb == 80
    assert h100.extra["price_scope"] == "instance" and h100.extra["layout"] == "instances"
    assert h100.extra["gpu_wording"] == "NVIDIA HGX H100"
    spot = rows[("hgx-h100", "north-america", "spot")]
    assert spot.price_per_hour == 19.71 and spot.extra["provider_term"] == "Spot"
    assert rows[("hgx-h200", "north-america", "on_demand")].price_per_hour == 50.44
    b200 = rows[("nvidia-b200", "north-america", "on_demand")]
    assert b200.price_per_hour == 68.80 and b200.price_per_gpu_hour == pytest.approx(8.6)
    assert rows[("nvidia-b200", "north-america", "spot")].price_per_hour == 34.11
    gh200 = rows[("nvidia-gh200", "north-america", "on_demand")]
    assert gh200.gpu_count == 1 and gh200.price_per_hour == 6.50
    assert gh200.gpu_model == "GH200-96GB"
    assert rows[("nvidia-a100", "north-america", "on_demand")].price_per_hour == 21.60


def test_instances_footnote_count_cleaned():
    rows = keyed(parse(PAGE_2026.read_bytes(), meta()))
    gb200 = rows[("nvidia-gb200-nvl72", "north-america", "on_demand")]
    assert gb200.gpu_count == 4 and gb200.extra["gpu_count_wording"] == "4^1"
    assert gb200.price_per_hour == 42.00 and gb200.price_per_gpu_hour == 10.50
    assert gb200.gpu_model == "GB200"


def test_instances_contact_sales_na_and_inference_give_no_row():
    offers = parse(PAGE_2026.read_bytes(), meta())
    rows = keyed(offers)
    # GB300 NVL72: Contact sales, spot N/A, inference Contact sales -> nothing at all.
    assert not [o for o in offers if o.extra["data_product"] == "nvidia-gb300-nvl72"]
    # HGX B300: on-demand Contact sales, spot $35.84 -> spot only.
    assert ("nvidia-b300", "north-america", "on_demand") not in rows
    assert rows[("nvidia-b300", "north-america", "spot")].price_per_hour == 35.84
    assert ("nvidia-gb200-nvl72", "north-america", "spot") not in rows  # N/A
    # The inference column ($6.16 for H100, $10.50 for GB200) is another product.
    assert not [o for o in offers if o.price_per_hour in (6.16, 8.60, 6.31, 2.70)]
    assert {o.pricing_model for o in offers} == {"on_demand", "spot"}


def test_instances_europe_block_is_its_own_region():
    offers = parse(PAGE_2026.read_bytes(), meta())
    rows = keyed(offers)
    assert {o.region for o in offers} == {"north-america", "europe"}
    assert rows[("hgx-h100", "europe", "on_demand")].price_per_hour == 49.24
    assert rows[("hgx-h100", "europe", "spot")].price_per_hour == 19.51
    assert rows[("hgx-h200", "europe", "spot")].price_per_hour == 20.64
    assert rows[("nvidia-b300", "europe", "spot")].price_per_hour == 36.70
    assert ("nvidia-l40s", "europe", "spot") not in rows  # N/A in Europe
    # 11 GPU rows per region; on-demand priced for 9, spot for 8 (NA) and 6 (EU).
    assert len(offers) == 34
    assert not [o for o in offers if o.extra["data_product"].startswith(("amd-", "intel-"))]


def test_instances_rtx_pro_host_memory_suffix_is_not_the_gpu():
    rows = keyed(parse(PAGE_2026.read_bytes(), meta()))
    high = rows[("nvidia-rtx-pro-6000-blackwell-server-edition", "north-america", "on_demand")]
    assert high.gpu_model == "RTX-PRO-6000-96GB" and high.ram_gb == 1024
    assert high.extra["gpu_wording"].endswith("(High Memory)")
    std = rows[("nvidia-rtx-pro-6000-blackwell-server-edition-standard-memory", "north-america",
                "spot")]
    assert std.price_per_hour == 9.56 and std.ram_gb == 512


def test_instances_repeated_listing_counted_once():
    text = PAGE_2026.read_text()
    start = text.rindex('<div role="listitem"', 0, text.index('data-product="hgx-h100"'))
    end = text.index('<div role="listitem"', start + 10)
    doubled = text[:end] + text[start:end] + text[end:]  # HGX H100 listed twice in NA
    assert doubled.count('data-product="hgx-h100"') == text.count('data-product="hgx-h100"') + 2
    offers = parse(doubled.encode(), meta())
    assert len(offers) == len(parse(PAGE_2026.read_bytes(), meta()))
    assert len([o for o in offers if o.extra["data_product"] == "hgx-h100"]) == 4


# --- 2023 component layout -----------------------------------------------------------------------


def test_component_2023_values():
    offers = parse(COMPONENT_2023.read_bytes(), meta(URL_2023, "2023-09-21T19:49:06+00:00"))
    rows = {o.sku: o for o in offers}
    assert len(offers) == 12  # the last row, "Tesla V100 NVLINK", is cut before its price
    assert "tesla-v100-nvlink" not in rows
    h100 = rows["hgx-h100"]
    assert h100.price_per_hour == 4.76 and h100.gpu_count == 1
    assert h100.gpu_model == "H100-SXM-80GB"
    assert h100.extra["price_scope"] == "gpu_component_only"
    assert h100.extra["max_vcpus_per_gpu"] == 48 and h100.extra["max_ram_gb_per_gpu"] == 256
    assert h100.vcpus is None and h100.ram_gb is None  # not included in this price
    assert rows["h100-pcie"].price_per_hour == 4.25
    assert rows["nvidia-a100-80gb"].price_per_hour == 2.21
    assert rows["nvidia-a100-80gb"].gpu_model == "A100-SXM-80GB"
    assert rows["a100-80gb-pcie"].gpu_model == "A100-PCIE-80GB"
    assert rows["a100-40gb-nvlink"].gpu_model == "A100-40GB"
    assert rows["a40"].price_per_hour == 1.28
    assert rows["rtx-a5000"].extra["max_vcpus_per_gpu"] == 36
    assert rows["quadro-rtx-4000"].gpu_model == "QUADRORTX4000-8GB"
    assert rows["quadro-rtx-5000"].gpu_model == "QUADRORTX5000-16GB"
    assert all(o.extra["price_scope"] == "gpu_component_only" for o in offers)


# --- derived JSON --------------------------------------------------------------------------------


def test_derived_becloudready_json():
    offers = parse(DERIVED.read_bytes(), meta(URL, "2026-02-11T12:00:00+00:00"))
    rows = {o.sku: o for o in offers}
    assert all(o.extra["derived"] is True and o.extra["source"] == "derived" for o in offers)
    assert rows["NVIDIA B200/8x"].price_per_hour == 68.80
    assert rows["NVIDIA HGX H200/8x"].price_per_hour == 50.44
    assert rows["NVIDIA HGX H200/8x"].gpu_model == "H200-141GB"
    assert rows["NVIDIA GH200/1x"].price_per_hour == 6.50
    # GB200 has gpu_count null there: skipped, not guessed; no H100 was in their parse.
    assert len(offers) == 7 and not [s for s in rows if "GB200" in s or "H100" in s]


# --- bad input -----------------------------------------------------------------------------------


def _fails(body: bytes, words: str, url: str = URL) -> None:
    with pytest.raises(ParseError) as err:
        parse(body, meta(url))
    assert err.value.provider == "coreweave" and err.value.url == url
    assert words in err.value.problem, err.value.problem


def test_empty_body():
    _fails(b"", "empty")


def test_non_html_body():
    _fails(b"just some text", "not HTML")
    _fails(b'{"data": {"gpuTypes": []}}', "not a list")
    _fails(b'[{"a": 1}', "not valid JSON")


def test_another_providers_page():
    _fails((FIX / "lambda" / "lambda_ai_pricing_wayback_20260109103934_excerpt.html").read_bytes(),
           "unknown layout")
    _fails((FIX / "runpod" / "runpod_io_pricing_wayback_20250909131230_excerpt.html").read_bytes(),
           "unknown layout")
    _fails((FIX / "runpod" / "runpod_graphql_gpuTypes_ewyluda_fixture.json").read_bytes(),
           "not a list")


def test_instances_page_with_gpu_tables_removed():
    text = PAGE_2026.read_text().replace("GPU Model", "Product")
    _fails(text.encode(), "unknown layout")


def test_component_page_with_rows_removed():
    text = COMPONENT_2023.read_text().replace("data-product=", "data-x=")
    _fails(text.encode(), "unknown layout", URL_2023)


@pytest.mark.parametrize("placeholder", ["$—", "Contact us"])
def test_prices_replaced_by_placeholders(placeholder):
    text = re.sub(r"\$[0-9][0-9,]*\.[0-9]{2}", placeholder, PAGE_2026.read_text())
    _fails(text.encode(), "no prices in the instances layout")
    old = re.sub(r"\$[0-9]+\.[0-9]{2}", placeholder, COMPONENT_2023.read_text())
    _fails(old.encode(), "no prices in the component layout", URL_2023)


def test_derived_json_of_another_provider():
    doc = json.loads(DERIVED.read_bytes())
    for r in doc:
        r["provider"] = "nebius"
    _fails(json.dumps(doc).encode(), "provider 'nebius'")


def test_start_requests():
    (spec,) = coreweave_source.start_requests({})
    assert spec.url == URL and spec.method == "GET" and not spec.browser


def test_cgi_2026_08_excerpt_values():
    offers = parse((CW / "cgi_coreweave_pricing_excerpt.html").read_bytes(),
                   meta(when="2026-08-22T12:00:00+00:00"))
    rows = keyed(offers)
    na = "north-america"
    assert rows[("hgx-h100", na, "on_demand")].price_per_hour == 49.24
    assert rows[("hgx-h100", na, "spot")].price_per_hour == 19.71
    assert rows[("hgx-h200", na, "on_demand")].price_per_hour == 50.44
    assert rows[("hgx-h200", na, "spot")].price_per_hour == 20.93
    assert rows[("nvidia-b200", na, "on_demand")].price_per_hour == 68.80
    assert rows[("nvidia-b200", na, "spot")].price_per_hour == 34.11
    assert rows[("nvidia-b300", na, "spot")].price_per_hour == 35.84
    assert ("nvidia-b300", na, "on_demand") not in rows  # "Contact sales"
    gb200 = rows[("nvidia-gb200-nvl72", na, "on_demand")]
    assert (gb200.price_per_hour, gb200.gpu_count) == (42.00, 4)
    assert rows[("hgx-h100", "europe", "spot")].price_per_hour == 19.51
    # the inference-only per-GPU column (footnote 2) gives no row
    assert 6.16 not in {o.price_per_hour for o in offers}
    assert all(o.gpu_model for o in offers)
