"""Google Cloud parser on the real captures (tests/fixtures/raw/gcp, history/gcp)."""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.gcp.history import captures_from_gcp_history
from gpuprices.spiders.providers.gcp.machines import TABLE, machines
from gpuprices.spiders.providers.gcp.parser import parse
from gpuprices.spiders.providers.gcp.source import follow, start_requests
from gpuprices.warehouse.contract import CaptureMeta
from gpuprices.warehouse.gpus import canonical_gpu, gpu_models

FIX = Path(__file__).parent / "fixtures"
PAGE = FIX / "raw/gcp/gpu-price-index_gcp.html"
SKUS = FIX / "raw/gcp/opencost_billing_catalog_skus_a100_a2_20230810.json"
HIST = FIX / "history/gcp"
PAGE_URL = "https://cloud.google.com/compute/gpus-pricing"
API_URL = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus"


def meta(url: str = PAGE_URL) -> CaptureMeta:
    return CaptureMeta("gcp", url, dt.datetime(2026, 10, 5, 12, tzinfo=dt.UTC))


def pick(offers, sku, model, **extra):
    hits = [o for o in offers if o.sku == sku and o.pricing_model == model
            and all(o.extra.get(k) == v for k, v in extra.items())]
    return hits


@pytest.fixture(scope="module")
def page():
    return parse(PAGE.read_bytes(), meta())


def test_page_a3_high(page):
    (od,) = [o for o in pick(page, "a3-highgpu-8g", "on_demand") if "gcp_model" not in o.extra]
    assert od.price_per_hour == 88.490000119 and od.region == "us-central1"
    assert od.gpu_model == "H100-SXM-80GB" and od.gpu_count == 8 and od.vcpus == 208
    assert od.extra["series"] == "A3 High" and od.extra["gpu_wording"] == "Nvidia H100"
    (spot,) = pick(page, "a3-highgpu-8g", "spot")
    assert spot.price_per_hour == 52.962296548 and spot.extra["provider_term"] == "Spot"
    (c1,) = pick(page, "a3-highgpu-8g", "committed", gcp_model="resource_cud")[:1]
    assert (c1.commitment_months, c1.price_per_hour) == (12, 61.383674231)
    assert pick(page, "a3-ultragpu-8g", "on_demand")[0].price_per_hour == 84.806908493
    assert pick(page, "a3-ultragpu-8g", "on_demand")[0].gpu_model == "H200-141GB"


def test_page_a4_na_on_demand(page):
    a4 = [o for o in page if o.sku == "a4-highgpu-8g"]
    assert not [o for o in a4 if o.pricing_model == "on_demand" and "gcp_model" not in o.extra]
    (flex,) = pick(page, "a4-highgpu-8g", "on_demand", gcp_model="dws_flex_start")
    assert flex.price_per_hour == 64.44 and flex.gpu_model == "B200-180GB"
    assert pick(page, "a4-highgpu-8g", "spot")[0].price_per_hour == 39.6336
    (cal,) = pick(page, "a4-highgpu-8g", "reserved", gcp_model="dws_calendar")
    assert cal.price_per_hour == 90.22 and cal.commitment_months is None
    # Booked in whole days, at least one; the other columns bill as the page says nothing else.
    assert (cal.billing_increment_s, cal.min_billing_s) == (86_400, 86_400)
    assert flex.min_billing_s is None
    assert len(a4) == 5


def test_page_quirks(page):
    # "$2 .0000/ 1 hour" is 2.0; "g2-standard-24-spot" in a spot cell is no price, no row.
    (flex,) = pick(page, "a2-highgpu-1g", "on_demand", gcp_model="dws_flex_start")
    assert flex.price_per_hour == 2.0
    (g4flex,) = pick(page, "g4-standard-192", "on_demand", gcp_model="dws_flex_start")
    assert g4flex.price_per_hour == 9.0
    assert not pick(page, "g2-standard-24", "spot")
    assert 24.0 not in {o.price_per_hour for o in page}
    # "N/A" cells: a2-ultragpu-2g has no CUDs and no calendar; columns do not shift.
    ultra2 = [o for o in page if o.sku == "a2-ultragpu-2g"]
    assert sorted((o.pricing_model, o.price_per_hour) for o in ultra2) == [
        ("on_demand", 4.8), ("on_demand", 10.137595781), ("spot", 6.082475068)]
    # Fractional GPUs and the second table's flexible CUD columns.
    (g4,) = [o for o in pick(page, "g4-standard-6", "on_demand") if "gcp_model" not in o.extra]
    assert g4.gpu_count == 0.125 and g4.gpu_model == "RTX-PRO-6000-96GB"
    assert g4.price_per_gpu_hour == pytest.approx(0.64688 * 8)
    flex1 = pick(page, "g2-standard-4", "committed", gcp_model="flexible_cud")
    assert sorted((o.commitment_months, o.price_per_hour) for o in flex1) == [
        (12, 0.558397485), (36, 0.402894397)]
    assert all(o.extra["source"] == "page" for o in page)
    assert all(o.gpu_model is not None for o in page)
    assert len(page) == 157


def test_page_components_agree_with_table(page):
    table = machines()
    for o in page:
        m = table[o.sku]
        assert o.vcpus == m.vcpus, o.sku


def test_page_table_removed_or_renamed():
    text = PAGE.read_text()
    with pytest.raises(ParseError, match="Machine type"):
        parse(text.replace("<table", "<div").replace("</table>", "</div>").encode(), meta())
    with pytest.raises(ParseError, match="Machine type"):
        parse(text.replace("Machine type", "Instance").encode(), meta())
    body = text.replace("Price (USD)", "Cost").replace("Spot", "X").replace("DWS", "Y") \
        .replace("CUD", "Z").encode()
    with pytest.raises(ParseError, match="price columns"):
        parse(body, meta())


def test_billing_sku_page_sums_parts():
    offers = parse(SKUS.read_bytes(), meta(API_URL))
    (a2,) = [o for o in offers if o.sku == "a2-highgpu-8g" and o.region == "us-central1"]
    assert a2.price_per_hour == pytest.approx(96 * 0.031611 + 680 * 0.004237 + 8 * 2.933908)
    assert a2.price_per_hour == 29.38708 and a2.currency == "USD"
    assert a2.extra["billing_skus"] == {"2922-40C5-B19F": 96, "2390-DCAF-DA38": 680,
                                        "039F-D0DA-4055": 8}
    mega = [o for o in offers if o.sku == "a2-megagpu-16g" and o.region == "us-central1"]
    assert mega[0].price_per_hour == 55.739504
    assert {o.region for o in offers} == {"us-central1", "us-east1", "us-west1"}
    assert {o.sku for o in offers} == {"a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g",
                                      "a2-highgpu-8g", "a2-megagpu-16g"}
    assert "key=" not in a2.source_url


def test_billing_page_missing_part_raises():
    data = json.loads(SKUS.read_bytes())
    data["skus"] = [s for s in data["skus"] if s["skuId"] != "039F-D0DA-4055"]  # drop the GPU
    with pytest.raises(ParseError, match="SKUs are all on this page"):
        parse(json.dumps(data).encode(), meta(API_URL))


def test_history_captures():
    caps = captures_from_gcp_history(HIST)
    assert [c.snapshot_date.isoformat() for c in caps] == [
        "2023-01-12", "2024-05-17", "2024-12-26", "2025-06-26", "2026-01-22", "2026-07-30"]
    assert caps[1].url == ("https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/"
                           "blob/cc7959e03c6553b08b9c3f3a99b45bd33e136e27/pricing.yml")

    def od(cap, sku, region="us-central1"):
        (o,) = [o for o in parse(cap.body, cap.meta()) if o.sku == sku and o.region == region
                and o.pricing_model == "on_demand"]
        assert o.extra["derived"] is True and o.extra["source"] == "history"
        return o

    assert od(caps[1], "a3-highgpu-8g").price_per_hour == 87.832465656
    for cap in caps[2:]:
        assert od(cap, "a3-highgpu-8g").price_per_hour == 88.4899999025753
    for cap in caps:
        assert od(cap, "a2-highgpu-8g").price_per_hour == 29.38708
    spot = [o for o in parse(caps[1].body, caps[1].meta()) if o.sku == "a3-highgpu-8g"
            and o.region == "us-central1" and o.pricing_model == "spot"]
    assert spot[0].price_per_hour == 61.94814684
    # a2-ultragpu CUD equal to on-demand (2023-01) is not a commitment price: no row.
    first = parse(caps[0].body, caps[0].meta())
    assert not [o for o in first if o.sku.startswith("a2-ultragpu") and
                o.pricing_model == "committed"]
    cud = [o for o in first if o.sku == "a2-highgpu-8g" and o.region == "us-central1"
           and o.commitment_months == 12]
    assert cud[0].price_per_hour == pytest.approx(13514.9691136 / 730)


@pytest.mark.parametrize("body", [b"", b"  \n", SKUS.read_bytes()[:3000], b'{"a": 1}',
                                  b"x,y\n1,2\n", b"<html><body><p>moved</p></body></html>"])
def test_bad_input(body):
    with pytest.raises(ParseError) as err:
        parse(body, meta())
    assert err.value.provider == "gcp"


def test_machine_table():
    models = gpu_models()
    with TABLE.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len({r["machine_type"] for r in rows}) == len(rows)
    for r in rows:
        assert r["gpu_model"] in models and r["source"]
        assert canonical_gpu(r["gpu_wording"], float(r["gpu_memory_gb"])) == r["gpu_model"]


def test_sources_key_never_in_url():
    assert [r.url for r in start_requests({})] == [PAGE_URL]
    secret = "AIza-not-a-real-key"
    (req,) = start_requests({"GOOGLE_CLOUD_API_KEY": secret})
    assert req.url.startswith(API_URL + "?pageSize=5000") and secret not in req.url
    assert req.meta["secret_params"] == {"key": secret}
    cap = Capture("gcp", req.url, SKUS.read_bytes(), dt.datetime(2023, 8, 10, tzinfo=dt.UTC))
    (nxt,) = follow(cap, {"GOOGLE_CLOUD_API_KEY": secret})
    assert "pageToken=APKCS1HVa0" in nxt.url and secret not in nxt.url
    assert nxt.meta["secret_params"] == {"key": secret}
    last = Capture("gcp", req.url, b'{"skus": [], "nextPageToken": ""}',
                   dt.datetime(2023, 8, 10, tzinfo=dt.UTC))
    assert follow(last, {"GOOGLE_CLOUD_API_KEY": secret}) == []
    assert follow(cap, {}) == []
