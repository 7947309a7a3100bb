"""Hyperstack parser on the real gpu-pricing page (values as in ../shared/PROVIDERS_MORE.md, read
off the saved bytes) and bad input derived from it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.hyperstack import source
from gpuprices.spiders.providers.hyperstack.parser import parse
from gpuprices.warehouse import identity
from gpuprices.warehouse.contract import CaptureMeta

CAPTURE = (Path(__file__).parent / "fixtures" / "raw" / "hyperstack"
           / "cgi_hyperstack_gpu-pricing.html")
URL = "https://www.hyperstack.cloud/gpu-pricing"


def meta() -> CaptureMeta:
    return CaptureMeta(provider="hyperstack", url=URL,
                       captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def offers():
    return parse_body(CAPTURE.read_bytes(), meta())


@pytest.fixture(scope="module")
def rows(offers):
    return {(o.extra["gpu_wording"], o.pricing_model): o for o in offers}


def test_three_gpu_cards_only(offers):
    counts = {pm: sum(o.pricing_model == pm for o in offers)
              for pm in ("on_demand", "reserved", "spot")}
    assert counts == {"on_demand": 13, "reserved": 12, "spot": 5}
    assert all(o.gpu_model and o.gpu_count == 1 for o in offers)
    assert len({identity.of_offer(o) for o in offers}) == len(offers)
    # CPU flavors, storage, public IP and token prices give no rows.
    assert not any("cpu" in o.sku.lower() or "llama" in o.sku.lower() for o in offers)


def test_on_demand(rows):
    h100 = rows[("NVIDIA H100 SXM", "on_demand")]
    assert h100.price_per_hour == 3.20 and h100.gpu_model == "H100-SXM-80GB"
    assert (h100.gpu_memory_gb, h100.vcpus, h100.ram_gb) == (80, 24, 240)
    assert rows[("NVIDIA H200 SXM", "on_demand")].price_per_hour == 3.99
    b300 = rows[("NVIDIA B300", "on_demand")]
    assert b300.price_per_hour == 7.40 and b300.gpu_model == "B300-288GB"
    b200 = rows[("NVIDIA B200", "on_demand")]
    assert b200.price_per_hour == 6.00 and b200.gpu_model == "B200-180GB"
    assert b200.gpu_memory_gb == 192  # as the page states it
    a100_nvlink = rows[("NVIDIA A100 NVLink", "on_demand")]
    assert a100_nvlink.price_per_hour == 1.40  # "&nbsp;$1.40"
    assert a100_nvlink.gpu_model == "A100-PCIE-80GB"


def test_labels_of_one_card_link_across_tables(rows):
    pcie_on_demand = rows[("NVIDIA H100", "on_demand")]
    pcie_spot = rows[("NVIDIA H100 PCIe", "spot")]
    assert pcie_on_demand.sku == pcie_spot.sku == "NVIDIA H100 PCIe"
    assert pcie_on_demand.gpu_model == pcie_spot.gpu_model == "H100-PCIE-80GB"
    assert pcie_spot.price_per_hour == 2.00
    assert rows[("NVIDIA H100 NVLink", "on_demand")].sku != pcie_on_demand.sku
    assert rows[("NVIDIA A4000", "on_demand")].gpu_model == "RTXA4000-16GB"
    assert rows[("NVIDIA RTX Pro 6000 SE", "on_demand")].gpu_model == "RTX-PRO-6000-96GB"


def test_reservation_is_a_floor(rows):
    h100 = rows[("NVIDIA H100 SXM", "reserved")]
    assert h100.price_per_hour == 2.72 and h100.extra["price_kind"] == "from"
    assert h100.commitment_months is None
    assert rows[("NVIDIA B200", "reserved")].price_per_hour == 5.10
    # "Reserve here" without a link (H100 NVLink) still gives its row.
    assert rows[("NVIDIA H100 NVLink", "reserved")].price_per_hour == 1.82
    assert ("NVIDIA B300", "reserved") not in rows


def test_spot(rows):
    assert rows[("NVIDIA L40", "spot")].price_per_hour == 0.80  # " $0.80"
    assert rows[("NVIDIA L40", "spot")].gpu_model == "L40-48GB"


def test_bad_input_is_a_clear_error():
    with pytest.raises(ParseError, match="hyperstack: .*: unknown layout"):
        parse(b"<html><body><table><tr><td>H100</td><td>$2</td></tr></table></body></html>",
              meta())
    text = CAPTURE.read_text().replace("<span>$", "<span>USD ").replace("&nbsp;$", "USD ")
    text = text.replace("<span> $", "<span>USD ")
    with pytest.raises(ParseError, match="no row has a \\$ price"):
        parse(text.encode(), meta())


def test_fetch_plan():
    (spec,) = source.start_requests({})
    assert spec.url == URL and not spec.browser
