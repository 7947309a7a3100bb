"""E2E Networks parser on the real excerpt of e2enetworks.com/pricing?region=us (values as in
../shared/PROVIDERS_MORE2.md), its INR cross-check at the bundled ECB rates, and bad input
derived from the capture."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders import fx
from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.e2e import source
from gpuprices.spiders.providers.e2e.inr_check import inr_cross_check
from gpuprices.spiders.providers.e2e.parser import parse
from gpuprices.warehouse.contract import CaptureMeta

HERE = Path(__file__).parent
CAPTURE = HERE / "fixtures" / "raw" / "e2e" / "cgi_e2e_pricing_us.html"
URL = "https://www.e2enetworks.com/pricing?region=us"
SNAPSHOTS = HERE.parent / "snapshots"


def meta() -> CaptureMeta:
    return CaptureMeta(provider="e2e", url=URL,
                       captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def offers():
    return parse_body(CAPTURE.read_bytes(), meta())


@pytest.fixture(scope="module")
def rates():
    book, errors = fx.archived_rates(SNAPSHOTS)
    assert not errors
    return book


@pytest.fixture(scope="module")
def rows(offers):
    return {(o.sku, o.commitment_months): o for o in offers}


def test_ten_gpus_three_terms_in_usd(rows):
    assert len({sku for sku, _ in rows}) == 10 and len(rows) == 30
    assert all(o.currency == "USD" and o.gpu_count == 1 for o in rows.values())
    b200 = rows[("NVIDIA B200 192GB", None)]
    assert (b200.price_per_hour, b200.pricing_model, b200.gpu_model) == (6.99, "on_demand",
                                                                          "B200-180GB")
    assert (b200.vcpus, b200.ram_gb, b200.gpu_memory_gb) == (32, 400, 192)
    assert rows[("NVIDIA H100 80GB", None)].price_per_hour == 3.77
    assert rows[("NVIDIA L4 24GB", None)].price_per_hour == 0.57


def test_monthly_and_annual_terms(rows):
    month, year = rows[("NVIDIA B200 192GB", 1)], rows[("NVIDIA B200 192GB", 12)]
    assert month.pricing_model == year.pricing_model == "committed"
    assert month.extra["price_per_month"] == 4983.16
    assert month.price_per_hour == pytest.approx(4983.16 / 730)
    assert year.extra["price_per_year"] == 55089.45
    assert year.price_per_hour == pytest.approx(55089.45 / 8760)
    assert rows[("NVIDIA H100 80GB", 1)].extra["price_per_month"] == 2363.01
    assert rows[("NVIDIA H100 80GB", 12)].extra["price_per_year"] == 23914.80


def test_two_a100s_told_apart_by_vram(rows):
    a80, a40 = rows[("NVIDIA A100 80GB", None)], rows[("NVIDIA A100 40GB", None)]
    assert (a80.price_per_hour, a80.gpu_model) == (2.10, "A100-SXM-80GB")
    assert (a40.price_per_hour, a40.gpu_model) == (1.98, "A100-40GB")
    # Their INR list prices follow the same VRAM match.
    assert (a80.extra["inr_price_per_hour"], a40.extra["inr_price_per_hour"]) == (189, 179)


def test_inr_list_price_is_kept_not_a_row(rows, offers):
    assert rows[("NVIDIA B200 192GB", None)].extra["inr_price_per_hour"] == 671
    assert rows[("NVIDIA H100 80GB", None)].extra["inr_price_per_hour"] == 362
    assert "inr_price_per_hour" not in rows[("NVIDIA B200 192GB", 1)].extra
    # The CPU offer C3.8GB (INR 4.7) and the truncated flight OfferCatalog give nothing.
    text = CAPTURE.read_text()
    assert '"price":4.7' in text and '\\"price\\":671' in text
    assert all("C3" not in o.sku for o in offers)
    assert {o.currency for o in offers} == {"USD"}


def test_inr_converts_at_the_ecb_rate_of_the_day(offers, rates):
    # The snapshot is a Saturday: the rate in force is Friday 2026-08-21's.
    assert fx.rate_in_force(rates, "INR", dt.date(2026, 8, 22)) == (111.9595,
                                                                    dt.date(2026, 8, 21))
    checks = {c.sku: c for c in inr_cross_check(offers, rates)}
    assert len(checks) == 10
    b200 = checks["NVIDIA B200 192GB"]
    assert b200.usd_at_ecb == pytest.approx(671 / 111.9595 * 1.1699)
    assert b200.usd_at_ecb == pytest.approx(7.0115, abs=1e-4)
    assert b200.deviation_pct == pytest.approx(-0.31, abs=0.01)
    # Two lists, not one converted: the older chips are far dearer in USD.
    assert checks["NVIDIA A40 48GB"].deviation_pct == pytest.approx(43.55, abs=0.01)


def test_a_currency_without_ecb_rate_is_a_clear_error(offers, rates):
    no_inr = {k: v for k, v in rates.items() if k[1] != "INR"}
    with pytest.raises(fx.FxRateMissing, match="no INR rate on or before 2026-08-22"):
        inr_cross_check(offers, no_inr)
    # ...and never 1:1: a rate only after the day is no rate for it.
    later = {(dt.date(2026, 8, 24), "INR"): (111.6875, "test")} | no_inr
    with pytest.raises(fx.FxRateMissing):
        fx.convert(671, "INR", "USD", dt.date(2026, 8, 22), later)
    assert fx.convert(5.0, "USD", "USD", dt.date(2026, 8, 22), {}) == 5.0


def test_missing_footnote_is_an_error():
    body = CAPTURE.read_text().replace("Prices are per GPU-hour", "Prices are per hour")
    with pytest.raises(ParseError, match="e2e.*region=us.*per GPU-hour"):
        parse(body.encode(), meta())


def test_no_usd_table_is_an_error():
    body = CAPTURE.read_text().replace(">Hourly/On-Demand</th>", ">Hourly</th>")
    with pytest.raises(ParseError, match="unknown layout"):
        parse(body.encode(), meta())


def test_fetch_plan():
    assert [r.url for r in source.start_requests({})] == [URL]


def test_python_check_and_warehouse_fx_factor_agree(offers, rates):
    """The cross-check's conversion is the warehouse's: fx_factor over the loaded E2E rows and
    the bundled ECB rates gives the same dollars as inr_check."""
    from gpuprices.warehouse import db
    from gpuprices.warehouse.contract import offers_to_table

    con = db.connect(":memory:")
    db.init_schema(con)
    fx.load_fx_from_archive(SNAPSHOTS, con)
    db.load_partition(con, dt.date(2026, 8, 22), "e2e", offers_to_table(offers))
    sql = ("SELECT sku, CAST(json_extract(extra, '$.inr_price_per_hour') AS DOUBLE) "
           "* fx_factor('INR', 'USD', snapshot_date) FROM latest_offers "
           "WHERE provider = 'e2e' AND pricing_model = 'on_demand'")
    in_sql = dict(con.execute(sql).fetchall())
    checks = {c.sku: c.usd_at_ecb for c in inr_cross_check(offers, rates)}
    assert in_sql.keys() == checks.keys()
    assert all(in_sql[k] == pytest.approx(checks[k], rel=1e-12) for k in checks)
    assert in_sql["NVIDIA H100 80GB"] == pytest.approx(3.7827, abs=1e-4)
