"""Azure parser on the real captures (tests/fixtures/raw/azure, history/azure)."""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.azure.history import captures_from_azure_history
from gpuprices.spiders.providers.azure.parser import SKU_TABLE, parse
from gpuprices.spiders.providers.azure.source import follow, start_requests
from gpuprices.warehouse.contract import CaptureMeta
from gpuprices.warehouse.gpus import canonical_gpu, gpu_models

FIX = Path(__file__).parent / "fixtures"
ITEMS = FIX / "raw/azure/gpu-price-index_azure_items.json"
DIFF = FIX / "raw/azure/azure-pricing-radar_diff_vm-westeurope_2026-08-01.json"
HIST = FIX / "history/azure"


def meta(url: str = "https://prices.azure.com/api/retail/prices") -> CaptureMeta:
    return CaptureMeta("azure", url, dt.datetime(2026, 9, 29, 12, tzinfo=dt.UTC))


def find(offers, sku, region, model, term=None):
    hits = [o for o in offers if o.sku == sku and o.region == region
            and o.pricing_model == model and o.extra.get("provider_term") == term]
    assert len(hits) == 1, (sku, region, model, term, hits)
    return hits[0]


@pytest.fixture(scope="module")
def items():
    return parse(ITEMS.read_bytes(), meta())


def test_items_linux_on_demand_values(items):
    nd = find(items, "Standard_ND96isr_H100_v5", "eastus", "on_demand")
    assert nd.price_per_hour == 98.32
    assert nd.gpu_model == "H100-SXM-80GB" and nd.gpu_count == 8
    assert nd.price_per_gpu_hour == pytest.approx(12.29)
    assert nd.extra["source"] == "api"
    nc = find(items, "Standard_NC40ads_H100_v5", "eastus", "on_demand")
    assert nc.price_per_hour == 6.98 and nc.gpu_model == "H100-NVL-94GB" and nc.gpu_count == 1
    nc80 = find(items, "Standard_NC80adis_H100_v5", "eastus", "on_demand")
    assert nc80.price_per_hour == 13.96 and nc80.gpu_count == 2
    assert find(items, "Standard_ND96amsr_A100_v4", "eastus", "on_demand").price_per_hour == 32.77
    assert find(items, "Standard_ND96asr_v4", "eastus", "on_demand").gpu_model == "A100-40GB"


def test_items_windows_excluded(items):
    # centralus ND96isr H100 v5 exists only as a Windows row (125.35): no offer.
    nd = "Standard_ND96isr_H100_v5"
    assert not [o for o in items if o.sku == nd and o.region == "centralus"]
    assert 125.35 not in {o.price_per_hour for o in items}
    # "Srs Win"-less MI300X Linux row kept, "NDMI300Xv5 Srs Windows" rows dropped.
    assert 62.016 not in {o.price_per_hour for o in items}
    assert find(items, "Standard_ND96isr_MI300X_v5", "northeurope", "on_demand").price_per_hour \
        == 57.6
    assert all("windows" not in o.extra["product_name"].lower() for o in items)
    assert len(items) == 53


def test_items_spot_and_low_priority(items):
    spot = find(items, "Standard_NC24ads_A100_v4", "eastus", "spot", "Spot")
    assert spot.price_per_hour == 0.67877
    lp = find(items, "Standard_ND96isr_H100_v5", "southcentralus", "spot", "Low Priority")
    assert lp.price_per_hour == 23.594
    assert find(items, "Standard_ND96isr_H100_v5", "spaincentral", "spot", "Spot").price_per_hour \
        == 23.620397


def _item(**kw):
    base = json.loads(ITEMS.read_bytes())[18]  # ND96isr_H100_v5 eastus Linux 98.32
    assert base["armRegionName"] == "eastus" and base["retailPrice"] == 98.32
    base.update(kw)
    return base


def test_reservation_whole_term_divided():
    body = json.dumps({"Items": [
        _item(type="Reservation", reservationTerm="1 Year", retailPrice=500000.0),
        _item(type="Reservation", reservationTerm="3 Years", retailPrice=1200000.0),
        _item(type="DevTestConsumption"),
        _item(productName="Virtual Machines NDsr H100 v5 Series Dedicated Host"),
        _item(retailPrice=0.0),
    ], "NextPageLink": None}).encode()
    offers = parse(body, meta())
    assert [(o.pricing_model, o.commitment_months) for o in offers] == [
        ("reserved", 12), ("reserved", 36)]
    assert offers[0].price_per_hour == pytest.approx(500000.0 / 8760)
    assert offers[1].price_per_hour == pytest.approx(1200000.0 / 26280)
    assert offers[0].extra["term_price"] == 500000.0


def test_unknown_gpu_sku_quarantined_non_gpu_skipped():
    body = json.dumps([
        _item(armSkuName="Standard_NC99zz_X900_v9", retailPrice=7.5),
        _item(armSkuName="Standard_D4s_v5", retailPrice=0.2),
    ]).encode()
    offers = parse(body, meta())
    assert len(offers) == 1
    assert offers[0].gpu_model is None and offers[0].extra["gpu_count_unknown"] is True
    assert offers[0].sku == "Standard_NC99zz_X900_v9"


def test_effective_start_date_and_currency_kept():
    body = json.dumps({"Items": [_item(effectiveStartDate="2024-06-01T00:00:00Z",
                                       currencyCode="EUR")]}).encode()
    (o,) = parse(body, meta())
    assert o.extra["effective_start_date"] == "2024-06-01T00:00:00Z" and o.currency == "EUR"


def test_radar_diff_after_values():
    offers = parse(DIFF.read_bytes(), meta("https://prices.azure.com/api/retail/prices"))
    o = find(offers, "Standard_NC24ads_A100_v4", "westeurope", "spot", "Spot")
    assert o.price_per_hour == 1.097295  # after; before was 1.37138
    assert o.extra["derived"] is True and o.extra["source"] == "radar_diff"
    assert find(offers, "Standard_NC40ads_H100_v5", "westeurope", "spot", "Spot") \
        .price_per_hour == 5.23008
    # the radar's RTX PRO 6000 v6 meter "NC36dsxlRTX6kv6" is the GA size with a quarter GPU
    # (Microsoft's NCv6 GA table): a fractional count, whole-GPU price per GPU-hour
    o = find(offers, "Standard_NC36ds_xl_RTXPRO6000BSE_v6", "westeurope", "spot", "Spot")
    assert (o.gpu_model, o.gpu_count, o.price_per_hour) == ("RTX-PRO-6000-96GB", 0.25, 0.381242)
    assert o.price_per_gpu_hour == pytest.approx(0.381242 * 4)
    assert o.extra["vm_gpu_memory_gb"] == 24 and o.gpu_memory_gb == 96
    assert all(o.gpu_model for o in offers)
    assert all(o.region == "westeurope" for o in offers)
    assert len(offers) == 25


def test_radar_history_captures():
    caps = captures_from_azure_history(HIST)
    assert len(caps) == 8 and all(c.provider == "azure" for c in caps)
    west = [c for c in caps if c.snapshot_date == dt.date(2026, 8, 22)
            and c.url.endswith("/vm-eu-west.json")]
    assert west[0].url == ("https://github.com/andy-diericks/azure-pricing-radar/blob/"
                           "1b7f5544/data/latest/vm-eu-west.json")
    offers = parse(west[0].body, west[0].meta())
    nd = "Standard_ND96isr_H100_v5"
    assert find(offers, nd, "westeurope", "on_demand").price_per_hour == 127.816
    assert find(offers, nd, "westeurope", "spot", "Spot").price_per_hour == 23.620397
    assert find(offers, nd, "westeurope", "spot", "Low Priority").price_per_hour == 25.563
    assert 132.232 not in {o.price_per_hour for o in offers}  # Windows
    assert all(o.extra["derived"] and o.extra["source"] == "history" for o in offers)
    assert sum(len(parse(c.body, c.meta())) for c in caps) == 539 + 539


@pytest.mark.parametrize("body", [b"", b"   ", ITEMS.read_bytes()[:5000],
                                  b'{"Items": []}', b'{"foo": 1}', b"a,b\n1,2\n"])
def test_bad_input(body):
    with pytest.raises(ParseError) as err:
        parse(body, meta())
    assert err.value.provider == "azure"


def test_sku_table_consistent():
    models = gpu_models()
    with SKU_TABLE.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len({r["arm_sku_name"] for r in rows}) == len(rows)
    for r in rows:
        assert r["gpu_model"] in models and r["source"]
        assert canonical_gpu(r["gpu_wording"], float(r["gpu_memory_gb"])) == r["gpu_model"]
        assert 0 < float(r["gpu_count"]) <= 8


def test_sources_plan_and_pagination():
    reqs = start_requests({})
    assert len(reqs) == 4
    assert all(r.url.startswith("https://prices.azure.com/api/retail/prices?") for r in reqs)
    assert "contains%28armSkuName%2C%20%27Standard_ND%27%29" in reqs[1].url
    assert " " not in reqs[0].url
    nxt = "https://prices.azure.com/api/retail/prices?$skip=1000"
    cap = Capture("azure", reqs[0].url, json.dumps({"Items": [], "NextPageLink": nxt}).encode(),
                  dt.datetime(2026, 9, 29, tzinfo=dt.UTC))
    assert [r.url for r in follow(cap)] == [nxt]
    end = Capture("azure", nxt, b'{"Items": [], "NextPageLink": null}',
                  dt.datetime(2026, 9, 29, tzinfo=dt.UTC))
    assert follow(end) == []
