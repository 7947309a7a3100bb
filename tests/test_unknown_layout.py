"""A page in a layout no parser knows: its candidate rows are held in quarantine as "unknown
layout", the provider-day is degraded (summary and alert say so), and the rows load only after a
reviewer releases them. Tested on Lambda's real 2023-09-09 page (Wayback), whose plain
"GPUs | VRAM per GPU | ... | Price" table the Lambda parser does not read."""

import datetime as dt

import duckdb
import pytest
from rich.console import Console

from gpuprices.flows import loading
from gpuprices.flows.cli import quarantine as ops_cli
from gpuprices.flows.config import Settings
from gpuprices.flows.ops import alerts
from gpuprices.flows.ops.status import status_table
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders import generic
from gpuprices.spiders.importer import import_capture
from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.warehouse import lake
from gpuprices.warehouse.contract import CaptureMeta
from tests.conftest import FIXTURES

PAGE = (FIXTURES / "raw" / "lambda"
        / "lambdalabs_service_gpu-cloud_wayback_20230909194011_excerpt.html")
URL = "https://lambdalabs.com/service/gpu-cloud"
AT = dt.datetime(2023, 9, 9, 19, 40, 11, tzinfo=dt.UTC)
DAY = AT.date()
META = CaptureMeta(provider="lambda", url=URL, captured_at=AT)

# Rows as the page prints them: (sku, GPU model, GPUs, pricing, months, price per instance-hour).
EXPECTED = {
    ("1x NVIDIA H100 PCIe New", "H100-PCIE-80GB", 1, "on_demand", None, 1.99),  # "$1.99 / hr"
    ("8x NVIDIA H100 SXM New", "H100-SXM-80GB", 8, "on_demand", None, 20.72),
    ("1x NVIDIA A100", "A100-40GB", 1, "on_demand", None, 1.10),  # VRAM cell "40 GB"
    ("8x NVIDIA A100", "A100-40GB", 8, "on_demand", None, 8.80),
    ("8x NVIDIA A100", "A100-SXM-80GB", 8, "on_demand", None, 12.00),  # VRAM cell "80 GB"
    ("4x NVIDIA RTX A6000", "RTXA6000-48GB", 4, "on_demand", None, 3.20),
    ("1x NVIDIA A10", "A10-24GB", 1, "on_demand", None, 0.60),
    ("8x NVIDIA Tesla V100", "V100-16GB", 8, "on_demand", None, 4.40),
    # Reserved table: "$1.89/H100/hour", term "3-years"; "Sprint" "$4.85/H100/hour", "3-months".
    ("Reserved 8x NVIDIA H100", "H100-SXM-80GB", 8, "reserved", 36, 8 * 1.89),
    ("Sprint 8x NVIDIA H100", "H100-SXM-80GB", 8, "reserved", 3, 8 * 4.85),
}


def _key(o):
    return (o.sku, o.gpu_model, o.gpu_count, o.pricing_model, o.commitment_months,
            round(o.price_per_hour, 4))


def test_the_lambda_parser_does_not_know_the_2023_layout():
    with pytest.raises(ParseError, match="unknown layout"):
        parse_body(PAGE.read_bytes(), META)


def test_the_generic_extractor_reads_the_rows_of_the_page():
    body = PAGE.read_bytes()
    rows = generic.candidates(body, META)
    assert {(s, g, c, p, m, round(v, 4)) for s, g, c, p, m, v in EXPECTED} <= set(map(_key, rows))
    # Every candidate's price is written in the page, beside the GPU wording it was read with.
    text = body.decode()
    for o in rows:
        assert o.extra["price_text"] in text and o.extra["gpu_wording"] in o.extra["row_text"]
        assert o.extra["source"] == "generic"
    # Per GPU-hour where the page says so: the reserved 3-year H100 is $1.89 per GPU-hour.
    reserved = next(o for o in rows if o.sku.startswith("Reserved"))
    assert reserved.price_per_gpu_hour == pytest.approx(1.89)
    # Only rows with a GPU and an hourly price: not the header, not the sign-up button.
    assert all(o.gpu_model for o in rows) and len(rows) == len(set(map(_key, rows)))


def test_a_page_without_candidates_still_fails():
    """Bad input: a page the parser does not know and with no GPU price in it."""
    body = b"<html><body><p>Talk to our sales team.</p></body></html>"
    assert generic.candidates(body, META) == []
    exc = ParseError("lambda", URL, "unknown layout: nothing known")
    assert generic.held(exc, body, META) == []
    assert generic.held(ParseError("lambda", URL, "HTTP status 503"), PAGE.read_bytes(),
                        META) == []


@pytest.fixture
def settings(tmp_path):
    s = Settings(data_dir=tmp_path / "data", archive_root=tmp_path / "snap").ensure()
    import_capture(s.archive_root, PAGE, "lambda", URL, AT,
                   origin="repo henryzhangpku/gpu-price-index tests/fixtures/backfill/"
                          "lambda_20230909194011.html commit c4ae7ff9")
    return s


def _offers(settings, sql="SELECT count(*) FROM offers WHERE provider = 'lambda'"):
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_unknown_layout_is_held_degraded_and_loaded_only_after_release(settings):
    (res,) = pipeline.replay(settings, "lambda", DAY.isoformat())
    assert res.status == "degraded" and res.rows == 0
    assert res.quarantined >= len(EXPECTED)
    assert res.quarantine_reasons == {"unknown layout": res.quarantined}
    assert "unknown layout" in res.degraded and URL in res.degraded
    q = lake.read_quarantine(settings.lake_root, DAY, "lambda").to_pylist()
    assert all(r["reason"].startswith("unknown layout: candidate row") for r in q)
    summary = loading.load(settings, [res], "r1").read_text()
    assert "## Degraded" in summary and "unknown layout" in summary
    alert = alerts.alert_message("r1", [res])
    assert any(line.startswith("DEGRADED lambda 2023-09-09: held, ")
               and "unknown layout" in line for line in alert.lines)
    # Nothing loaded on its own: the day is no "latest" snapshot in the status table.
    assert _offers(settings) == [(0,)]
    console = Console(record=True, width=250)
    console.print(status_table([res], 14))
    (line,) = [x for x in console.export_text().splitlines() if x.startswith("│ lambda")]
    assert [c.strip() for c in line.split("│")[1:6]] == ["lambda", "1", "-", "-", "degraded"]
    # A person checked the rows against the page: release loads them.
    released, left = ops_cli.release_rows(settings, DAY, "lambda", "unknown layout")
    assert (released, left) == (res.quarantined, 0)
    sql = ("SELECT price_per_hour FROM offers WHERE provider = 'lambda' AND "
           "sku = '8x NVIDIA H100 SXM New' AND snapshot_date = DATE '2023-09-09'")
    assert _offers(settings, sql) == [(20.72,)]
    # A later reparse of the day keeps the released rows instead of holding them again.
    (again,) = pipeline.replay(settings, "lambda", DAY.isoformat())
    assert again.rows == res.quarantined and again.quarantined == 0 and again.status == "ok"


def test_cards_are_read_one_card_at_a_time():
    """Cards outside tables (Crusoe's real 2025-12-15 Webflow page, read here only for its
    markup): each card's heading with its own price, never a neighbour's; a card that says
    "Contact sales" gives no row."""
    page = (FIXTURES / "raw" / "crusoe"
            / "crusoe_ai_cloud_pricing_wayback_20251215002446_excerpt.html")
    meta = CaptureMeta(provider="crusoe", url="https://www.crusoe.ai/cloud/pricing",
                       captured_at=dt.datetime(2025, 12, 15, tzinfo=dt.UTC))
    rows = generic.candidates(page.read_bytes(), meta)
    # '<h4>NVIDIA H200</h4> … <div class="pricing-tag">141GB</div> … $4.29/GPU-hr'
    firsts = {(o.gpu_model, o.price_per_gpu_hour, o.extra["unit"]) for o in rows}
    assert ("H200-141GB", 4.29, "GPU-hour") in firsts
    assert ("H100-SXM-80GB", 3.90, "GPU-hour") in firsts
    assert "GB200" not in {o.gpu_model for o in rows}  # GB200: "Contact sales"
