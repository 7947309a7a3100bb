"""Massed Compute parser on the real RSC flight excerpt of vm.massedcompute.com/pricing (values
from ../shared/PROVIDERS_MORE2.md, read off the saved bytes): USD per VM-hour, mobile and
desktop copies merged, deferred chunks resolved, 'Request' rows skipped."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.flows.pipeline import gates
from gpuprices.spiders.parsers import ParseError, parse_body_counted
from gpuprices.spiders.providers.massedcompute import source
from gpuprices.spiders.providers.massedcompute.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

PAGE = (Path(__file__).parent / "fixtures" / "raw" / "massedcompute"
        / "cgi_massedcompute_pricing_rsc_excerpt.html")
META = CaptureMeta(provider="massedcompute", url=source.PRICING_URL,
                   captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


def rows():
    return {o.sku: o for o in parse(PAGE.read_bytes(), META)}


def test_node_prices_per_vm_hour():
    by = rows()
    b300 = by["B300 SXM6 x8"]
    assert b300.price_per_hour == 52.80 and b300.price_per_gpu_hour == 6.60
    assert b300.gpu_model == "B300-288GB" and b300.vcpus == 280 and b300.ram_gb == 2800
    assert by["B200 SXM6 x8"].price_per_hour == 43.46
    assert by["B200 SXM6 x8"].extra["copies_priced"] == ["mobile"]  # desktop cells deferred
    sxm = by["H100 SXM5 (80GB) x8"]
    assert sxm.price_per_hour == 25.12 and sxm.gpu_model == "H100-SXM-80GB"
    assert by["H100 (80GB) x1"].price_per_hour == 2.73
    assert by["A30 (24GB) x1"].price_per_hour == 0.35 and by["A30 (24GB) x1"].gpu_model == (
        "A30-24GB")
    assert len(by) == 23


def test_deferred_chunk_gives_the_mobile_copy_and_the_request_row_steals_nothing():
    by = rows()
    nvl = by["H100 NVL (94GB) NVLink x8"]
    assert nvl.price_per_hour == 23.36 and nvl.gpu_model == "H100-NVL-94GB"
    assert nvl.extra["copies_priced"] == ["desktop", "mobile"]  # mobile via chunk 7d
    assert nvl.vcpus == 140 and nvl.ram_gb == 1500 and nvl.interconnect == "nvlink"
    assert "H100 (80GB) x8" not in by and "L40 (48GB) x8" not in by


def test_request_rows_are_counted_not_priced():
    _, skipped = parse_body_counted(PAGE.read_bytes(), META)
    assert skipped == {"'Request' (contact sales)": 2}


def test_plain_h100_and_a100_stay_unmapped_with_their_reason():
    by = rows()
    for sku in ("H100 (80GB) x1", "A100 (80GB) x1"):
        assert by[sku].gpu_model is None and "does not name" in by[sku].extra["unmapped_reason"]
    assert by["A100 SXM4 (80GB) x1"].gpu_model == "A100-SXM-80GB"
    unmapped = [sku for sku, o in rows().items() if o.gpu_model is None]
    assert sorted(unmapped) == ["A100 (80GB) x1", "H100 (80GB) x1"]


def test_disagreeing_copies_refuse_the_page():
    text = PAGE.read_text()
    first = text.index("$$52.80")
    tampered = text[:first] + "$$50.00" + text[first + len("$$52.80"):]
    with pytest.raises(ParseError, match=r"massedcompute: .*: B300 SXM6 x8: the mobile and "
                                         r"desktop copies disagree \(\[50.0, 52.8\]\)"):
        parse(tampered.encode(), META)


def test_mapped_rows_pass_the_gates():
    out = gates.run_gates(list(rows().values()))
    assert [o.sku for o, _ in out.bad if o.gpu_model] == []


def test_a_page_without_rows_is_an_error():
    with pytest.raises(ParseError, match="unknown layout: no '<label>-x <qty>-<i>' row key"):
        parse(b"<html><body>Pricing</body></html>", META)
