"""The one "as of" rule with its age limit, and the one firm-price rule, on the small history of
tests/test_views.py (synthetic offers through the real load path: the views are under test).

  as of D4 (the warehouse's newest day): aws D1 (3 days old), lambda D3, nebius D4, runpod D4.
"""

import datetime as dt

import pytest

from gpuprices.warehouse import db
from gpuprices.warehouse.contract import CaptureMeta, make_offer, offers_to_table
from gpuprices.warehouse.schema import DAY_CHEAPEST_VERSION
from tests.conftest import to_old_layout
from tests.test_views import D1, D3, D4, _build, _rows, _write_lake


@pytest.fixture
def con(tmp_path):
    connection = _build(_write_lake(tmp_path / "lake"))
    yield connection
    connection.close()


def _load(con, day, provider, *offers):
    meta = CaptureMeta(provider=provider, url=f"https://example.test/{provider}",
                       captured_at=dt.datetime.combine(day, dt.time(3), tzinfo=dt.UTC))
    db.load_partition(con, day, provider, offers_to_table(
        [make_offer(meta, **o) for o in offers]))


def _stale(con, day, *limit):
    # With and without the limit argument: the macro's default must hold when it is left out.
    call = "offers_as_of(?::DATE, ?)" if limit else "offers_as_of(?::DATE)"
    sql = f"SELECT DISTINCT provider, age_days, is_stale FROM {call}"  # noqa: S608 (ours)
    return {(r["provider"], r["age_days"], r["is_stale"]) for r in _rows(con, sql,
                                                                         [day, *limit])}


def test_offers_older_than_the_limit_are_stale(con):
    # The default limit is 14 days: nothing of D1..D4 is stale on D4, everything is 15 days on.
    assert con.execute("SELECT default_max_age_days()").fetchone()[0] == 14
    assert _stale(con, D4) == {("aws", 3, False), ("lambda", 1, False), ("nebius", 0, False),
                               ("runpod", 0, False)}
    assert {s for _, _, s in _stale(con, D4 + dt.timedelta(days=15))} == {True}
    # A limit of 2 days makes aws' D1 snapshot (3 days old) stale; the age itself is unchanged.
    assert _stale(con, D4, 2) == {("aws", 3, True), ("lambda", 1, False),
                                  ("nebius", 0, False), ("runpod", 0, False)}
    priced = _rows(con, "SELECT DISTINCT provider, is_stale, snapshot_date, age_days, firm_price "
                        "FROM offers_priced_as_of(?::DATE, 'USD', max_age_days := 2)", [D4])
    assert {r["provider"] for r in priced if r["is_stale"]} == {"aws"}


def test_latest_offers_is_read_as_of_the_warehouses_newest_day(con):
    assert con.execute("SELECT snapshot_date, as_of FROM latest_snapshot").fetchone() == (D4, D4)
    assert {r["age_days"] for r in _rows(con, "SELECT age_days FROM latest_offers "
                                              "WHERE provider = 'lambda'")} == {(D4 - D3).days}


def test_cheapest_now_names_no_stale_and_no_placeholder_offer(con):
    later = D4 + dt.timedelta(days=20)
    # Only crusoe is read 20 days later: every other provider is then over the 14-day limit.
    _load(con, later, "crusoe", dict(sku="h100", gpu_model="H100-SXM-80GB", gpu_count=1,
                                     price_per_hour=3.90, pricing_model="on_demand"),
          dict(sku="h100 floor", gpu_model="H100-SXM-80GB", gpu_count=1, price_per_hour=0.10,
               pricing_model="on_demand", extra={"price_kind": "from"}))
    rows = _rows(con, "SELECT provider, sku, snapshot_date, age_days FROM cheapest_now")
    # Lambda (2.99) and nebius (2.95) are cheaper but 21 and 20 days old; the floor is no quote.
    assert rows == [{"provider": "crusoe", "sku": "h100", "snapshot_date": later,
                     "age_days": 0}]
    stale = _rows(con, "SELECT * FROM stale_providers")
    assert [(r["provider"], r["last_snapshot"], r["age_days"]) for r in stale] == [
        ("aws", D1, 23), ("lambda", D3, 21), ("nebius", D4, 20), ("runpod", D4, 20)]


def test_a_day_lowest_is_a_firm_price(con):
    _load(con, D4, "runpod",
          dict(sku="A100 SXM", gpu_model="A100-SXM-80GB", gpu_count=1, price_per_hour=1.64,
               pricing_model="on_demand"),
          dict(sku="A100 placeholder", gpu_model="A100-SXM-80GB", gpu_count=1,
               price_per_hour=0.5, pricing_model="on_demand",
               extra={"suspect_placeholder": True}))
    lowest = _rows(con, "SELECT lowest_price_per_gpu_hour AS p, n_offers FROM "
                        "provider_day_lowest WHERE provider = 'runpod' AND snapshot_date = ? "
                        "AND gpu_model = 'A100-SXM-80GB'", [D4])
    assert lowest == [{"p": 1.64, "n_offers": 1}]
    (daily,) = _rows(con, "SELECT sku FROM cheapest_daily WHERE day = ? "
                          "AND gpu_model = 'A100-SXM-80GB' AND pricing_model = 'on_demand'", [D4])
    assert daily["sku"] == "A100 SXM"
    apart = _rows(con, "SELECT kind, provider, sku, why FROM offers_set_apart(?::DATE, 'USD')",
                  [D4])
    assert [(r["kind"], r["sku"]) for r in apart] == [("not firm", "A100 placeholder")]
    assert "placeholder" in apart[0]["why"]


def test_a_warehouse_of_the_older_rule_gets_its_day_minima_recomputed(con):
    _load(con, D4, "runpod", dict(sku="A100 placeholder", gpu_model="A100-SXM-80GB",
                                  gpu_count=1, price_per_hour=0.5, pricing_model="on_demand",
                                  extra={"suspect_placeholder": True}))
    expected = con.execute("SELECT * FROM provider_day_cheapest ORDER BY ALL").fetchall()
    # What the older rule stored: the placeholder as the day's lowest, and no version record.
    con.execute("""INSERT INTO provider_day_cheapest
                   SELECT snapshot_date, provider, gpu_model, pricing_model, currency, 0.5, 1,
                          offer_no, 0.5, NULL
                   FROM provider_day_cheapest WHERE provider = 'runpod' LIMIT 1""")
    con.execute("DELETE FROM warehouse_meta WHERE key = 'day_cheapest_version'")
    db.init_schema(con)
    assert con.execute("SELECT * FROM provider_day_cheapest ORDER BY ALL").fetchall() == expected
    assert con.execute("SELECT value FROM warehouse_meta WHERE key = 'day_cheapest_version'"
                       ).fetchall() == [(str(DAY_CHEAPEST_VERSION),)]


_MINIMA = ("SELECT * EXCLUDE (offer_no) FROM provider_day_cheapest ORDER BY ALL")


def test_the_firm_rule_exists_before_an_old_layout_is_migrated(con):
    _load(con, D4, "runpod", dict(sku="A100 placeholder", gpu_model="A100-SXM-80GB",
                                  gpu_count=1, price_per_hour=0.5, pricing_model="on_demand",
                                  extra={"suspect_placeholder": True}))
    expected = con.execute(_MINIMA).fetchall()
    to_old_layout(con)
    # A warehouse from before the rule has no price_caveat: the migration's load creates it.
    con.execute("DROP MACRO price_caveat")
    db.init_schema(con)
    assert con.execute(_MINIMA).fetchall() == expected
    assert 0.5 not in {r[5] for r in expected}


def test_a_weekly_point_counts_only_offers_within_the_limit(con):
    def week(limit):
        return {r["gpu_model"]: (r["provider"], r["providers"]) for r in _rows(
            con, "SELECT * FROM gpu_weekly_lowest(?::DATE, 2, 'USD', ?) WHERE week_end = ?",
            [D4, limit, D4])}

    # aws' D1 price (20 CNY = 2.69 USD per GPU) is the lowest H100 while it is within the limit.
    assert week(14)["H100-SXM-80GB"] == ("aws", ["aws", "lambda", "nebius"])
    # With a 2-day limit it is out: the point stands for lambda and nebius only.
    assert week(2)["H100-SXM-80GB"] == ("nebius", ["lambda", "nebius"])
    # A week before D1 has no snapshot at all: no point rather than an old one.
    assert not _rows(con, "SELECT * FROM gpu_weekly_lowest(?::DATE, 2, 'USD') "
                          "WHERE week_end < ?", [D4, D1])
