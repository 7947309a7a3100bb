"""Announced prices take effect on their day (issue 30, item 4), on the real Nebius page of
2026-09-30 (tests/fixtures/raw/nebius/gpu-price-index_nebius.html: its GPU table lists today's
on-demand price and a "GPU-hour (Effective October 1, 2026)" column). "As of a day" picks, per
offer, the price in force that day; "announced" means after the day asked about, not after the
snapshot."""

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.spiders.providers.nebius.parser import parse
from gpuprices.warehouse import db
from gpuprices.warehouse.contract import CaptureMeta, offers_to_table

PAGE = Path(__file__).parent / "fixtures" / "raw" / "nebius" / "gpu-price-index_nebius.html"
DAY = dt.date(2026, 9, 30)
ON_DEMAND = "SELECT gpu_model, price_per_gpu_hour, effective_from, is_announced FROM {} " \
            "WHERE provider = 'nebius' AND pricing_model = 'on_demand' " \
            "AND gpu_model IN ('H100-SXM-80GB', 'H200-141GB', 'B200-180GB', 'B300-288GB')"
# (model, price before 2026-10-01, price from 2026-10-01), as the page states them.
PRICES = [("H100-SXM-80GB", 3.85, 4.50), ("H200-141GB", 4.50, 5.40),
          ("B200-180GB", 7.15, 8.50), ("B300-288GB", 7.85, 9.50)]


@pytest.fixture
def con(tmp_path):
    meta = CaptureMeta(provider="nebius", url="https://nebius.com/prices",
                       captured_at=dt.datetime(2026, 9, 30, 12, tzinfo=dt.UTC))
    connection = db.connect(str(tmp_path / "w.duckdb"))
    db.init_schema(connection)
    db.load_partition(connection, DAY, "nebius", offers_to_table(parse(PAGE.read_bytes(), meta)))
    yield connection
    connection.close()


def _on_demand(con, source, day):
    rows = con.execute(ON_DEMAND.format(source), [day]).fetchall()
    return sorted((m, round(p, 2), e, a) for m, p, e, a in rows)


def test_on_the_snapshot_day_todays_price_is_served_and_octobers_is_announced(con):
    oct1 = dt.date(2026, 10, 1)
    assert _on_demand(con, "offers_as_of(?::DATE)", DAY) == sorted(
        [(m, now, None, False) for m, now, _ in PRICES]
        + [(m, later, oct1, True) for m, _, later in PRICES])
    announced = con.execute("SELECT gpu_model, round(gpu_hour, 2) FROM announced_prices("
                            "?::DATE, 'USD') WHERE gpu_model LIKE 'B300%'", [DAY]).fetchall()
    assert announced == [("B300-288GB", 9.50)]


def test_after_the_effective_day_the_announced_price_is_the_one_in_force(con):
    # 2026-10-05, still from the 2026-09-30 snapshot: the October prices, and only them.
    day = dt.date(2026, 10, 5)
    assert _on_demand(con, "offers_as_of(?::DATE)", day) == sorted(
        (m, later, dt.date(2026, 10, 1), False) for m, _, later in PRICES)
    assert _on_demand(con, "offers_priced_as_of(?::DATE, 'USD')", day) == sorted(
        (m, later, dt.date(2026, 10, 1), False) for m, _, later in PRICES)
    # Nothing is still in the future: the report's "Announced future prices" is empty.
    assert con.execute("SELECT count(*) FROM announced_prices(?::DATE, 'USD')",
                       [day]).fetchone() == (0,)
    # Spot rows (no announcement) are untouched.
    assert con.execute("SELECT count(*) FROM offers_as_of(?::DATE) WHERE pricing_model = 'spot'",
                       [day]).fetchone() == (7,)
