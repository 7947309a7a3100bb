"""Oracle (OCI) parser on the real cetools price list (values from ../shared/PROVIDERS_MORE.md,
read off the saved bytes)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpuprices.flows.pipeline import gates
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.oracle import source
from gpuprices.spiders.providers.oracle.parser import chip_label, parse
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "oracle" / "cgi_oracle_products_usd.json"
META = CaptureMeta(provider="oracle", url=source.PRODUCTS_URL,
                   captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


def by_part():
    return {o.extra["part_number"]: o for o in parse(RAW.read_bytes(), META)}


@pytest.mark.parametrize(("part", "model", "price"), [
    ("B98415", "H100-SXM-80GB", 10), ("B110519", "H200-141GB", 10),
    ("B110978", "B200-180GB", 14), ("B112237", "B300-288GB", 15), ("B110979", "GB200", 16),
    ("B112140", "GB300", 18), ("B109485", "MI300X-192GB", 6), ("B111758", "MI355X-288GB", 8.6),
    ("B109479", "L40S-48GB", 3.5), ("B95907", "A100-SXM-80GB", 4), ("B95909", "A10-24GB", 2),
    ("B92740", "A100-40GB", 3.05),  # 'GPU - E3': BM.GPU4, the one E3-based GPU series (chips.csv)
])
def test_gpu_per_hour_rows(part, model, price):
    o = by_part()[part]
    assert o.gpu_model == model and o.price_per_hour == price and o.price_per_gpu_hour == price
    assert o.gpu_count == 1 and o.currency == "USD" and o.pricing_model == "on_demand"
    assert o.region is None and o.extra["list_updated"] == "2026-08-14T09:09:55.872Z"


def test_licences_appliances_and_other_metrics_are_not_rentals():
    rows = by_part()
    assert "B111824" not in rows  # OCI - NVIDIA AI Enterprise - H100: a software licence
    assert not {"B110965", "B111455", "B111454"} & set(rows)  # Compute Cloud@Customer
    assert not {"B108806", "B108807", "B108808"} & set(rows)  # VMware, Node Per Hour
    assert "B109493" not in rows  # Roving Edge, per day
    assert "B108776" not in rows  # not a GPU
    assert len(rows) == 18


def test_generation_labels_stay_unmapped_and_are_held_back():
    rows = by_part()
    unmapped = {p: o.extra["gpu_wording"] for p, o in rows.items() if o.gpu_model is None}
    assert unmapped == {"B88517": "X7", "B88518": "X7", "B89734": "V2", "B93544": "E4",
                        "B109480": "H100T"}
    out = gates.run_gates(list(rows.values()))
    assert len(out.good) == 13 and len(out.bad) == 5


def test_chip_label_reads_untidy_names():
    assert chip_label("OCI- Compute - GPU - MI355X") == "MI355X"
    assert chip_label("Compute  - GPU - A10") == "A10"
    assert chip_label("Compute - Bare Metal GPU Standard - X7") == "X7"
    assert chip_label("Compute - GPU - A100 - v2") == "A100 - v2"


def test_bad_input():
    with pytest.raises(ParseError, match="no 'items' list"):
        parse(b"[]", META)
    doc = json.loads(RAW.read_bytes())
    doc["items"] = [i for i in doc["items"] if i["metricName"] != "GPU Per Hour"]
    with pytest.raises(ParseError, match="no 'GPU Per Hour' rental"):
        parse(json.dumps(doc).encode(), META)


def test_fetch_plan_asks_for_usd_only():
    [spec] = source.start_requests({})
    assert spec.url.endswith("/products/?currencyCode=USD")
