"""Scaleway parser on the real Instance API catalog pages (values from
../shared/PROVIDERS_MORE.md, read off the saved bytes): EUR per node-hour, per GPU derived."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.flows.pipeline import gates, usd_rates
from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError, wants
from gpuprices.spiders.providers.scaleway import source
from gpuprices.spiders.providers.scaleway.parser import parse, postprocess
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "scaleway"
WHEN = dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC)


def meta(base: str = source.CATALOG, page: int = 1) -> CaptureMeta:
    return CaptureMeta(provider="scaleway", url=source.page_url(base, page), captured_at=WHEN)


def catalog(page: int):
    return {o.sku: o for o in parse((RAW / f"cgi_scaleway_servers_page{page}.json").read_bytes(),
                                    meta(page=page))}


def test_page1_node_prices_in_eur():
    rows = catalog(1)
    b300 = rows["B300-SXM-8-288G"]
    assert b300.gpu_count == 8 and b300.price_per_hour == 60.0 and b300.currency == "EUR"
    assert b300.price_per_gpu_hour == 7.5 and b300.gpu_model == "B300-288GB"
    assert b300.gpu_memory_gb == 288 and b300.extra["monthly_price"] == 43800.0
    assert rows["H100-SXM-8-80G"].price_per_hour == 25.3308
    assert rows["H100-SXM-8-80G"].gpu_model == "H100-SXM-80GB"
    assert rows["H100-1-80G"].price_per_hour == 2.8665
    assert rows["H100-1-80G"].gpu_model == "H100-PCIE-80GB"
    assert rows["L40S-1-48G"].price_per_hour == 1.469916
    assert rows["L4-1-24G"].price_per_hour == 0.7875 and rows["L4-1-24G"].gpu_model == "L4-24GB"
    assert all(o.region == "fr-par-2" and o.pricing_model == "on_demand" for o in rows.values())
    # two CPU types on the page give no row
    assert len(rows) == 16 and not any(s.startswith("BASIC") for s in rows)


def test_page2_render_s_is_a_p100():
    rows = catalog(2)
    assert list(rows) == ["RENDER-S"]
    assert rows["RENDER-S"].price_per_hour == 1.221 and rows["RENDER-S"].gpu_model == "P100-16GB"


def test_every_row_passes_the_gates():
    # EUR prices are judged in USD at the ECB rate of the day: the bundled archive's rates.
    ref = gates.Reference(per_usd=usd_rates.UsdRates(Path(__file__).resolve().parents[1]
                                                     / "snapshots"))
    out = gates.run_gates([*catalog(1).values(), *catalog(2).values()], ref)
    assert out.bad == [] and len(out.good) == 17


def test_availability_is_not_parsed_but_read_beside_the_catalog():
    avail = CaptureMeta(provider="scaleway", url=source.page_url(source.AVAILABILITY, 1),
                        captured_at=WHEN)
    assert not wants(avail) and wants(meta())
    caps = [Capture(provider="scaleway", url=source.page_url(source.AVAILABILITY, p),
                    body=(RAW / f"cgi_scaleway_availability_page{p}.json").read_bytes(),
                    captured_at=WHEN, status=200) for p in (1, 2)]
    rows = {o.sku: o for o in postprocess([*catalog(1).values(), *catalog(2).values()], caps)}
    assert rows["H100-SXM-8-80G"].extra["stock"] == "available"
    assert rows["H100-SXM-8-80G"].available is True
    for n in (2, 4, 8):
        assert rows[f"B300-SXM-{n}-288G"].extra["stock"] == "shortage"
        assert rows[f"B300-SXM-{n}-288G"].available is False
    assert rows["RENDER-S"].available is True


def test_a_mig_slice_is_not_priced_as_whole_gpus():
    doc = json.loads((RAW / "cgi_scaleway_servers_page1.json").read_bytes())
    doc["servers"]["H100-1-80G"]["mig_profile"] = "1g.10gb"
    rows = {o.sku: o for o in parse(json.dumps(doc).encode(), meta())}
    assert rows["H100-1-80G"].gpu_model is None
    assert rows["H100-1-80G"].extra["mig_profile"] == "1g.10gb"


def test_bad_input():
    with pytest.raises(ParseError, match="no 'servers' object"):
        parse(b'{"types": {}}', meta())
    doc = json.loads((RAW / "cgi_scaleway_servers_page1.json").read_bytes())
    doc["servers"] = {k: v for k, v in doc["servers"].items() if not v["gpu"]}
    with pytest.raises(ParseError, match="no GPU type"):
        parse(json.dumps(doc).encode(), meta())


def test_fetch_plan_pages_until_a_short_page():
    specs = source.start_requests({})
    assert [s.url for s in specs] == [
        "https://api.scaleway.com/instance/v1/zones/fr-par-2/products/servers?per_page=100&page=1",
        "https://api.scaleway.com/instance/v1/zones/fr-par-2/products/servers/availability"
        "?per_page=100&page=1"]
    full = json.dumps({"servers": {f"T{i}": {} for i in range(100)}}).encode()
    [nxt] = source.follow(Capture(provider="scaleway", url=specs[0].url, body=full,
                                  captured_at=WHEN, status=200))
    assert nxt.url.endswith("products/servers?per_page=100&page=2")
    short = (RAW / "cgi_scaleway_servers_page2.json").read_bytes()
    assert source.follow(Capture(provider="scaleway", url=nxt.url, body=short,
                                 captured_at=WHEN, status=200)) == []
