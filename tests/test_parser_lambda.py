"""Lambda parsers on the two real captures (values read off each capture) and bad input."""

from __future__ import annotations

import datetime as dt
import importlib
import re
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.registry import parser_for
from gpuprices.warehouse.contract import CaptureMeta

lambda_parser = importlib.import_module("gpuprices.spiders.providers.lambda.parser")
lambda_source = importlib.import_module("gpuprices.spiders.providers.lambda.source")

FIX = Path(__file__).parent / "fixtures" / "raw"
TABLE_2024 = FIX / "lambda" / "lambdalabs_service_gpu-cloud_wayback_20241103180910_excerpt.html"
TABS_2026 = FIX / "lambda" / "lambda_ai_pricing_wayback_20260109103934_excerpt.html"
URL_2024 = "https://lambdalabs.com/service/gpu-cloud"
URL_2026 = "https://lambda.ai/pricing"


def meta(url: str, when: str = "2026-01-09T10:39:34+00:00") -> CaptureMeta:
    return CaptureMeta(provider="lambda", url=url, captured_at=dt.datetime.fromisoformat(when))


def parse(body: bytes, url: str = URL_2026):
    return lambda_parser.parse(body, meta(url))


def by_sku(offers):
    out = {}
    for o in offers:
        key = (o.sku, o.pricing_model)
        assert key not in out, f"duplicate {key}"
        out[key] = o
    return out


def test_parser_is_found_by_provider_id():
    assert parser_for("lambda") is lambda_parser.parse


def test_table_2024_values():
    offers = lambda_parser.parse(TABLE_2024.read_bytes(),
                                 meta(URL_2024, "2024-11-03T18:09:10+00:00"))
    rows = by_sku(offers)
    h8 = rows[("8x NVIDIA H100 SXM 80 GB", "on_demand")]
    assert h8.gpu_model == "H100-SXM-80GB" and h8.gpu_count == 8
    assert h8.price_per_gpu_hour == 2.99 and h8.price_per_hour == pytest.approx(23.92)
    assert h8.vcpus == 208 and h8.extra["ram_wording"] == "1800 GiB"
    assert h8.extra["layout"] == "table" and h8.extra["source"] == "page"
    assert h8.extra["gpu_wording"] == "NVIDIA H100 SXM"
    assert h8.snapshot_date == dt.date(2024, 11, 3)
    h1 = rows[("1x NVIDIA H100 SXM 80 GB", "on_demand")]
    assert h1.price_per_hour == 3.29 and h1.gpu_count == 1
    assert rows[("4x NVIDIA H100 SXM 80 GB", "on_demand")].price_per_gpu_hour == 3.09
    assert rows[("2x NVIDIA H100 SXM 80 GB", "on_demand")].price_per_hour == pytest.approx(6.38)
    pcie = rows[("1x NVIDIA H100 PCIe 80 GB", "on_demand")]
    assert pcie.price_per_hour == 2.49 and pcie.gpu_model == "H100-PCIE-80GB"
    a100_80 = rows[("8x NVIDIA A100 SXM 80 GB", "on_demand")]
    assert a100_80.price_per_gpu_hour == 1.79 and a100_80.gpu_model == "A100-SXM-80GB"
    a100_40 = rows[("8x NVIDIA A100 SXM 40 GB", "on_demand")]
    assert a100_40.price_per_gpu_hour == 1.29 and a100_40.gpu_model == "A100-40GB"
    assert rows[("1x NVIDIA A10 24 GB", "on_demand")].gpu_model == "A10-24GB"
    assert rows[("8x NVIDIA Tesla V100 16 GB", "on_demand")].price_per_hour == pytest.approx(4.4)


def test_table_2024_contact_sales_gives_no_row():
    offers = lambda_parser.parse(TABLE_2024.read_bytes(), meta(URL_2024))
    # 18 rows in the table; "Reserved 8x NVIDIA H100 SXM" is CONTACT SALES.
    assert len(offers) == 17
    assert all(o.pricing_model == "on_demand" for o in offers)
    assert "CONTACT SALES" in TABLE_2024.read_text()


def test_table_2024_priced_reserved_row_is_committed_not_on_demand():
    # Mutation of the real capture: had the Reserved row been priced, it is a separate row.
    text = re.sub(r"<a href=[^>]*><strong><span>CONTACT SALES</span></strong></a>",
                  "$1.99 / GPU / hr", TABLE_2024.read_text())
    rows = by_sku(lambda_parser.parse(text.encode(), meta(URL_2024)))
    reserved = rows[("8x NVIDIA H100 SXM 80 GB", "committed")]
    assert reserved.price_per_gpu_hour == 1.99 and reserved.extra["provider_term"] == "Reserved"
    assert rows[("8x NVIDIA H100 SXM 80 GB", "on_demand")].price_per_gpu_hour == 2.99


def test_table_2024_quadro_mapped():
    offers = lambda_parser.parse(TABLE_2024.read_bytes(), meta(URL_2024))
    quadro = by_sku(offers)[("1x NVIDIA Quadro RTX 6000 24 GB", "on_demand")]
    assert quadro.gpu_model == "QUADRORTX6000-24GB" and quadro.price_per_hour == 0.5
    assert all(o.gpu_model for o in offers)


def test_tabs_2026_values():
    offers = parse(TABS_2026.read_bytes())
    rows = by_sku(offers)
    assert len(offers) == 5 and all(o.gpu_count == 8 for o in offers)
    b200 = rows[("8x NVIDIA B200 SXM6 180 GB", "on_demand")]
    assert b200.gpu_model == "B200-180GB" and b200.price_per_gpu_hour == 4.99
    assert b200.price_per_hour == pytest.approx(39.92)
    h100 = rows[("8x NVIDIA H100 SXM 80 GB", "on_demand")]
    assert h100.price_per_gpu_hour == 2.99 and h100.extra["layout"] == "tabs"
    assert rows[("8x NVIDIA A100 SXM 80 GB", "on_demand")].price_per_gpu_hour == 1.79
    a40 = rows[("8x NVIDIA A100 SXM 40 GB", "on_demand")]
    assert a40.price_per_gpu_hour == 1.29 and a40.gpu_model == "A100-40GB"
    assert rows[("8x NVIDIA Tesla V100 16 GB", "on_demand")].price_per_gpu_hour == 0.55
    assert h100.vcpus == 208 and h100.ram_gb == pytest.approx(1932.7)


def test_same_sku_across_layouts_for_history():
    old = {o.sku for o in lambda_parser.parse(TABLE_2024.read_bytes(), meta(URL_2024))}
    new = {o.sku for o in parse(TABS_2026.read_bytes())}
    assert "8x NVIDIA H100 SXM 80 GB" in old & new


def test_tab_label_gives_the_count():
    # The same panel under a "4x" tab is a 4-GPU shape at the same per-GPU price.
    body = TABS_2026.read_text().replace(">8x</button>", ">4x</button>")
    rows = by_sku(parse(body.encode()))
    h100 = rows[("4x NVIDIA H100 SXM 80 GB", "on_demand")]
    assert h100.gpu_count == 4 and h100.price_per_hour == pytest.approx(11.96)


# --- bad input -----------------------------------------------------------------------------------


def _fails(body: bytes, words: str, url: str = URL_2026) -> None:
    with pytest.raises(ParseError) as err:
        lambda_parser.parse(body, meta(url))
    assert err.value.provider == "lambda" and err.value.url == url
    assert words in err.value.problem, err.value.problem


def test_empty_body():
    _fails(b"", "empty")


def test_non_html_body():
    _fails(b'{"data": {"gpu_1x_h100_pcie": {}}}', "not HTML")
    _fails(b"plain text, no markup", "not HTML")


def test_another_providers_page():
    _fails((FIX / "runpod" / "runpod_io_pricing_wayback_20250909131230_excerpt.html").read_bytes(),
           "unknown layout")
    _fails((FIX / "runpod" / "runpod_io_pricing_wayback_20260810082317_jsonld.html").read_bytes(),
           "unknown layout")


def test_tabs_page_with_table_removed():
    text = re.sub(r"<table.*?</table>", "", TABS_2026.read_text(), flags=re.S)
    _fails(text.encode(), "unknown layout")


def test_table_page_with_rows_removed():
    text = re.sub(r"<tr>.*?</tr>", "", TABLE_2024.read_text(), flags=re.S)
    _fails(text.encode(), "unknown layout", URL_2024)


@pytest.mark.parametrize("placeholder", ["$—", "Contact us"])
def test_prices_replaced_by_placeholders(placeholder):
    tabs = re.sub(r"\$\d+\.\d+", placeholder, TABS_2026.read_text())
    _fails(tabs.encode(), "no prices in the tabs layout")
    table = re.sub(r"\$\d+\.\d+ / GPU / hr", placeholder, TABLE_2024.read_text())
    _fails(table.encode(), "no prices in the table layout", URL_2024)


def test_tab_without_count_label():
    body = TABS_2026.read_text().replace(">8x</button>", ">All</button>")
    _fails(body.encode(), "no GPU count")


def test_start_requests():
    (spec,) = lambda_source.start_requests({})
    assert spec.url == URL_2026 and spec.method == "GET" and not spec.browser


CGI_2026 = Path(__file__).parent / "fixtures/raw/lambda/cgi_lambda_pricing_excerpt.html"


def test_cgi_2026_08_instances_and_clusters():
    offers = lambda_parser.parse(CGI_2026.read_bytes(),
                                 meta(URL_2026, "2026-08-22T12:00:00+00:00"))
    rows = by_sku([o for o in offers if o.extra["layout"] == "tabs"])
    # the August page: 8x H100 SXM $3.99 per GPU-hour (was $2.99 on 2026-01-09)
    assert rows[("8x NVIDIA H100 SXM 80 GB", "on_demand")].price_per_gpu_hour == 3.99
    assert rows[("8x NVIDIA B200 SXM6 180 GB", "on_demand")].price_per_gpu_hour == 6.69
    assert rows[("8x NVIDIA A100 SXM 80 GB", "on_demand")].price_per_gpu_hour == 2.79
    assert rows[("1x NVIDIA H100 SXM 80 GB", "on_demand")].price_per_gpu_hour == 4.29
    assert rows[("1x NVIDIA GH200 96 GB", "on_demand")].price_per_gpu_hour == 2.29
    # 1-Click Clusters: committed per-GPU prices by size and term, escaped copies not read
    clusters = [o for o in offers if o.extra.get("layout") == "clusters"]
    assert len(clusters) == 6 and all(o.pricing_model == "committed" for o in clusters)
    h100 = {o.extra["cluster_gpus"]: o for o in clusters if o.gpu_model == "H100-SXM-80GB"}
    assert h100["16"].price_per_gpu_hour == 6.16 and h100["16"].gpu_count == 16
    b200 = {o.extra["cluster_gpus"]: o for o in clusters if o.gpu_model == "B200-180GB"}
    assert b200["16"].price_per_gpu_hour == 9.86 and b200["256+"].gpu_count == 256
    assert b200["16"].extra["cluster_duration"] == "2 weeks – 1 year"
    assert len(offers) == 22 + 6 and all(o.gpu_model for o in offers)
