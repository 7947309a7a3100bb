"""The warehouse views on a small multi-date history built through the real load path.

History (synthetic offers via make_offer; storage and SQL are under test, not parsing):

  day          D1   D2   D3   D4
  runpod  H100 community      2.69 2.69 2.69 2.39   <- price change D3 -> D4
  runpod  A100 on_demand      1.64 1.64 1.64 1.64   <- one unchanged run
  runpod  4090 community      0.44  --  0.34 0.34   <- withdrawn on D2, back at another price
  lambda  8x H100 on_demand   23.92 (2.99/GPU) D1-D3, lambda not read on D4
  nebius  H100 on_demand      2.95 every day; from D3 an announced 2.00 effective D4+30
  nebius  L40S on_demand      1.00 1.20 1.00 1.00   <- A-B-A: three runs, not two
  aws     8x H100 on_demand   160 CNY (20 CNY/GPU) on D1 only (a China region)
  aws     A100 spot           12 CNY on D1 only (a group with no USD price without rates)
"""

import dataclasses
import datetime as dt

import pyarrow as pa
import pytest

from gpuprices.flows.pipeline import gates
from gpuprices.warehouse import db, lake
from gpuprices.warehouse.contract import CaptureMeta, make_offer, offers_to_table
from tests.conftest import to_old_layout

D1, D2, D3, D4 = (dt.date(2025, 1, 6) + dt.timedelta(days=i) for i in range(4))
FUTURE = D4 + dt.timedelta(days=30)

# (provider, sku, gpu_model, gpu_count, pricing_model, currency, {day: price}, effective_from)
SERIES = [
    ("runpod", "H100 SXM", "H100-SXM-80GB", 1, "community", "USD",
     {D1: 2.69, D2: 2.69, D3: 2.69, D4: 2.39}, None),
    ("runpod", "A100 SXM", "A100-SXM-80GB", 1, "on_demand", "USD",
     {D1: 1.64, D2: 1.64, D3: 1.64, D4: 1.64}, None),
    ("runpod", "RTX 4090", "RTX4090-24GB", 1, "community", "USD",
     {D1: 0.44, D3: 0.34, D4: 0.34}, None),
    ("lambda", "gpu_8x_h100_sxm5", "H100-SXM-80GB", 8, "on_demand", "USD",
     {D1: 23.92, D2: 23.92, D3: 23.92}, None),
    ("nebius", "h100-1gpu", "H100-SXM-80GB", 1, "on_demand", "USD",
     {D1: 2.95, D2: 2.95, D3: 2.95, D4: 2.95}, None),
    ("nebius", "h100-1gpu", "H100-SXM-80GB", 1, "on_demand", "USD",
     {D3: 2.00, D4: 2.00}, FUTURE),
    ("nebius", "l40s-1gpu", "L40S-48GB", 1, "on_demand", "USD",
     {D1: 1.00, D2: 1.20, D3: 1.00, D4: 1.00}, None),
    ("aws", "p5.48xlarge", "H100-SXM-80GB", 8, "on_demand", "CNY", {D1: 160.0}, None),
    ("aws", "p4de.24xlarge", "A100-SXM-80GB", 1, "spot", "CNY", {D1: 12.0}, None),
]

# ECB style: EUR base. No rate is published on D1 (a Monday here): D1 must use Friday's.
RATES = [
    (D1 - dt.timedelta(days=3), "USD", 1.05),
    (D1 - dt.timedelta(days=3), "CNY", 7.8),
    (D2, "USD", 1.04),
    (D2, "CNY", 7.6),
]


def _write_lake(root):
    by_partition: dict[tuple[dt.date, str], list] = {}
    for provider, sku, model, count, pricing, currency, prices, eff in SERIES:
        for day, price in prices.items():
            meta = CaptureMeta(
                provider=provider, url=f"https://example.test/{provider}",
                captured_at=dt.datetime.combine(day, dt.time(3), tzinfo=dt.UTC),
            )
            by_partition.setdefault((day, provider), []).append(make_offer(
                meta, sku=sku, gpu_model=model, gpu_count=count, price_per_hour=price,
                pricing_model=pricing, currency=currency, effective_from=eff,
                region="cn-north-1" if provider == "aws" else None,
            ))
    for (day, provider), offers in by_partition.items():
        lake.write_partition(root, day, provider, offers_to_table(offers))
    return root


@pytest.fixture(scope="module")
def views_lake(tmp_path_factory):
    """The history's lake, written once for the module: every test loads it into a warehouse
    of its own (load_lake only reads it; the tests change their warehouse, never the lake)."""
    return _write_lake(tmp_path_factory.mktemp("views") / "lake")


def _build(root, with_rates=True):
    con = db.connect(":memory:")
    db.init_schema(con)
    db.load_lake(con, root)
    if with_rates:
        db.load_fx_rates(con, pa.table({
            "date": [r[0] for r in RATES],
            "currency": [r[1] for r in RATES],
            "rate_per_eur": [r[2] for r in RATES],
            "source": ["test"] * len(RATES),
        }))
    return con


@pytest.fixture
def con(views_lake):
    connection = _build(views_lake)
    yield connection
    connection.close()


def _rows(con, sql, params=()):
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def test_every_sql_file_is_a_created_view():
    files = [p.relative_to(db.SQL_DIR).with_suffix("").as_posix()
             for p in db.SQL_DIR.rglob("*.sql")]
    assert sorted(files) == sorted(db.VIEWS)
    # Staging building blocks are created before the questions (marts) that read them.
    folders = [v.split("/")[0] for v in db.VIEWS]
    assert folders == sorted(folders, key=["staging", "marts"].index)


def test_every_sql_file_says_its_question():
    """Each file starts with a comment naming what it creates and the question it answers."""
    for view in db.VIEWS:
        name = view.split("/")[-1]
        text = (db.SQL_DIR / f"{view}.sql").read_text()
        first = text.splitlines()[0]
        assert first.startswith(f"-- {name}"), view
        assert f"CREATE OR REPLACE VIEW {name} AS" in text or (
            f"CREATE OR REPLACE MACRO {name}(" in text), view


def test_latest_offers_keeps_each_providers_last_good_day(con):
    rows = _rows(con, "SELECT provider, sku, snapshot_date, age_days, is_announced, "
                      "price_per_hour FROM latest_offers ORDER BY provider, sku, price_per_hour")
    latest = {(r["provider"], r["snapshot_date"]) for r in rows}
    # lambda was not read on D4: its D3 offers stay, marked older.
    assert latest == {("aws", D1), ("lambda", D3), ("nebius", D4), ("runpod", D4)}
    # "Today" is the warehouse's newest snapshot day (D4), not the machine's clock: a replayed
    # history is read as of its own last day.
    for r in rows:
        assert r["age_days"] == (D4 - r["snapshot_date"]).days
    runpod = [(r["sku"], r["price_per_hour"]) for r in rows if r["provider"] == "runpod"]
    assert runpod == [("A100 SXM", 1.64), ("H100 SXM", 2.39), ("RTX 4090", 0.34)]
    nebius = [(r["sku"], r["price_per_hour"], r["is_announced"])
              for r in rows if r["provider"] == "nebius"]
    assert nebius == [("h100-1gpu", 2.00, True), ("h100-1gpu", 2.95, False),
                      ("l40s-1gpu", 1.00, False)]


def test_offer_history_collapses_unchanged_runs(con):
    rows = _rows(con, "SELECT provider, sku, effective_from, price_per_hour, valid_from, "
                      "valid_to, n_snapshots, is_current FROM offer_history "
                      "ORDER BY provider, sku, effective_from NULLS FIRST, valid_from")
    got = [(r["provider"], r["sku"], r["price_per_hour"], r["valid_from"], r["valid_to"],
            r["n_snapshots"], r["is_current"]) for r in rows]
    assert got == [
        ("aws", "p4de.24xlarge", 12.0, D1, D1, 1, True),
        ("aws", "p5.48xlarge", 160.0, D1, D1, 1, True),
        ("lambda", "gpu_8x_h100_sxm5", 23.92, D1, D3, 3, True),
        ("nebius", "h100-1gpu", 2.95, D1, D4, 4, True),
        # The announced price is its own identity (effective_from), not a change of 2.95.
        ("nebius", "h100-1gpu", 2.00, D3, D4, 2, True),
        ("nebius", "l40s-1gpu", 1.00, D1, D1, 1, False),
        ("nebius", "l40s-1gpu", 1.20, D2, D2, 1, False),
        ("nebius", "l40s-1gpu", 1.00, D3, D4, 2, True),
        ("runpod", "A100 SXM", 1.64, D1, D4, 4, True),
        ("runpod", "H100 SXM", 2.69, D1, D3, 3, False),
        ("runpod", "H100 SXM", 2.39, D4, D4, 1, True),
        ("runpod", "RTX 4090", 0.44, D1, D1, 1, False),
        ("runpod", "RTX 4090", 0.34, D3, D4, 2, True),
    ]
    lambda_row = _rows(con, "SELECT price_per_gpu_hour, gpu_count FROM offer_history "
                            "WHERE provider = ?", ["lambda"])
    assert lambda_row == [{"price_per_gpu_hour": pytest.approx(2.99), "gpu_count": 8.0}]


def test_price_changes(con):
    rows = _rows(con, "SELECT provider, sku, old_date, new_date, old_price_per_hour, "
                      "new_price_per_hour, abs_change, pct_change, missed_snapshots "
                      "FROM price_changes ORDER BY provider, sku, new_date")
    got = [(r["provider"], r["sku"], r["old_date"], r["new_date"], r["old_price_per_hour"],
            r["new_price_per_hour"], r["missed_snapshots"]) for r in rows]
    assert got == [
        ("nebius", "l40s-1gpu", D1, D2, 1.00, 1.20, 0),
        ("nebius", "l40s-1gpu", D2, D3, 1.20, 1.00, 0),
        ("runpod", "H100 SXM", D3, D4, 2.69, 2.39, 0),
        # Absent on D2, back on D3 at another price: shown, with the gap counted.
        ("runpod", "RTX 4090", D1, D3, 0.44, 0.34, 1),
    ]
    h100 = rows[2]
    assert h100["abs_change"] == pytest.approx(-0.30)
    assert h100["pct_change"] == pytest.approx(100 * (2.39 - 2.69) / 2.69)


def _cheapest(con, model, pricing, day):
    rows = _rows(con, "SELECT * FROM cheapest_daily WHERE gpu_model = ? AND pricing_model = ? "
                      "AND day = ?", [model, pricing, day])
    assert len(rows) == 1
    return rows[0]


def test_cheapest_daily_converts_with_latest_rate_on_or_before_day(con):
    # D1: the CNY offer (20 CNY/GPU-h) converts through EUR with Friday's rates and wins.
    d1 = _cheapest(con, "H100-SXM-80GB", "on_demand", D1)
    assert (d1["provider"], d1["sku"], d1["currency"], d1["region"]) == (
        "aws", "p5.48xlarge", "CNY", "cn-north-1")
    assert d1["price_per_gpu_hour"] == pytest.approx(20.0)
    assert d1["price_per_gpu_hour_eur"] == pytest.approx(20.0 / 7.8)
    assert d1["price_per_gpu_hour_usd"] == pytest.approx(20.0 / 7.8 * 1.05)
    assert (d1["n_offers"], d1["n_without_usd"]) == (3, 0)
    # D3: no rate dated D3, so D2's rates apply; the announced 2.00 is not purchasable yet.
    d3 = _cheapest(con, "H100-SXM-80GB", "on_demand", D3)
    assert (d3["provider"], d3["sku"]) == ("nebius", "h100-1gpu")
    assert d3["price_per_gpu_hour_usd"] == pytest.approx(2.95)
    assert d3["price_per_gpu_hour_eur"] == pytest.approx(2.95 / 1.04)
    assert d3["n_offers"] == 2
    # D4: lambda is gone (not read), runpod community is another pricing model.
    d4 = _cheapest(con, "H100-SXM-80GB", "community", D4)
    assert (d4["provider"], d4["price_per_gpu_hour_usd"]) == ("runpod", pytest.approx(2.39))
    per_gpu = _cheapest(con, "H100-SXM-80GB", "on_demand", D2)
    assert (per_gpu["provider"], per_gpu["gpu_count"]) == ("nebius", 1.0)


def test_cheapest_daily_never_picks_future_prices(con):
    prices = [r[0] for r in con.execute(
        "SELECT price_per_gpu_hour FROM cheapest_daily WHERE provider = ?", ["nebius"]
    ).fetchall()]
    assert 2.00 not in prices
    assert con.execute("SELECT count(*) FROM cheapest_daily").fetchone()[0] == len({
        (d, s[2], s[4]) for s in SERIES for d in s[6]
    })


def test_cheapest_daily_without_fx_rates(views_lake):
    con = _build(views_lake, with_rates=False)
    d1 = _cheapest(con, "H100-SXM-80GB", "on_demand", D1)
    # The CNY offer cannot be ranked in USD: nebius wins, EUR is unknown, the skip is counted.
    assert (d1["provider"], d1["price_per_gpu_hour_usd"]) == ("nebius", pytest.approx(2.95))
    assert d1["price_per_gpu_hour_eur"] is None
    assert (d1["n_offers"], d1["n_without_usd"]) == (3, 1)
    # A group with only unconvertible offers still shows, with no winner.
    only_cny = _cheapest(con, "A100-SXM-80GB", "spot", D1)
    assert only_cny["provider"] is None and only_cny["price_per_gpu_hour_usd"] is None
    assert (only_cny["n_offers"], only_cny["n_without_usd"]) == (1, 1)
    con.close()


def test_one_offer_whatever_source_its_price_was_read_from(tmp_path):
    """Runpod's page then its API list one GPU: one offer (identity VERSION 3; it used to be
    one offer per source, so the move 2.69 -> 2.49 was no change at all). On the day that lists
    it from both, the API's price stands and the page's is quarantined, so the warehouse never
    holds the offer at two prices on one day."""
    con = db.connect(":memory:")
    db.init_schema(con)
    for day, sources in ((D1, {"page": 2.69}), (D2, {"api": 2.49, "page": 2.69})):
        meta = CaptureMeta(provider="runpod", url="https://example.test",
                           captured_at=dt.datetime.combine(day, dt.time(3), tzinfo=dt.UTC))
        day_offers = [make_offer(dataclasses.replace(meta, url=f"https://example.test/{src}"),
                                 sku="H100 SXM", gpu_model="H100-SXM-80GB", gpu_count=1,
                                 price_per_hour=price, pricing_model="community",
                                 extra={"source": src})
                      for src, price in sorted(sources.items(), reverse=True)]
        out = gates.run_gates(day_offers)
        if day == D2:
            assert [r for _, r in out.bad] == [
                "superseded: same offer read from the api at 2.49; page said 2.69"]
        db.load_partition(con, day, "runpod", offers_to_table(out.good))
    changes = _rows(con, "SELECT variant, old_date, old_price_per_hour, new_price_per_hour "
                         "FROM price_changes")
    assert changes == [{"variant": "", "old_date": D1, "old_price_per_hour": 2.69,
                        "new_price_per_hour": 2.49}]
    history = con.execute("SELECT count(DISTINCT offer_id), count(*) FROM offer_history"
                          ).fetchall()
    assert history == [(1, 2)]
    con.close()


def test_documented_example_queries_run(con):
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "warehouse.md").read_text()
    statements = [
        s for block in re.findall(r"```sql\n(.*?)```", doc, re.S)
        for s in block.split(";") if s.strip()
    ]
    assert len(statements) >= 6
    for sql in statements:
        con.execute(sql).fetchall()


def test_cheapest_now_ranks_each_providers_latest_prices_in_usd(con):
    rows = {(r["gpu_model"], r["pricing_model"]): r
            for r in _rows(con, "SELECT * FROM cheapest_now")}
    h100 = rows[("H100-SXM-80GB", "on_demand")]
    # aws' only (D1) snapshot: 20 CNY/GPU at Friday's rates = 20 * 1.05 / 7.8 USD, cheaper than
    # nebius 2.95 (its announced 2.00 is not in force) and lambda 2.99 (its D3 snapshot).
    assert (h100["provider"], h100["currency"]) == ("aws", "CNY")
    assert h100["price_per_gpu_hour_usd"] == pytest.approx(20 * 1.05 / 7.8)
    assert h100["price_per_gpu_hour_eur"] == pytest.approx(20 / 7.8)
    assert h100["n_offers"] == 3 and h100["firm_price"]
    assert rows[("H100-SXM-80GB", "community")]["price_per_gpu_hour"] == 2.39


def test_cheapest_now_puts_placeholder_prices_after_firm_ones(views_lake):
    con = _build(views_lake)
    meta = CaptureMeta(provider="runpod", url="https://example.test/runpod",
                       captured_at=dt.datetime.combine(D4, dt.time(3), tzinfo=dt.UTC))
    table = offers_to_table([
        make_offer(meta, sku="A100 SXM", gpu_model="A100-SXM-80GB", gpu_count=1,
                   price_per_hour=1.64, pricing_model="on_demand"),
        make_offer(meta, sku="A100 placeholder", gpu_model="A100-SXM-80GB", gpu_count=1,
                   price_per_hour=0.5, pricing_model="on_demand",
                   extra={"suspect_placeholder": True}),
    ])
    db.load_partition(con, D4, "runpod", table)
    (row,) = _rows(con, "SELECT sku, firm_price FROM cheapest_now "
                        "WHERE gpu_model = 'A100-SXM-80GB' AND pricing_model = 'on_demand'")
    assert row == {"sku": "A100 SXM", "firm_price": True}


# --- offer history maintained at load time ------------------------------------------------

HISTORY_VIEWS = {
    "offer_observations": "offer_id, snapshot_date, price_per_hour",
    "price_changes": "offer_id, new_date, new_price_per_hour",
    "offer_history": "offer_id, valid_from, price_per_hour",
    # Not a history view, but its per provider-day minima are kept by the loads too.
    "cheapest_daily": "day, gpu_model, pricing_model",
}


def _views(con):
    return {v: con.execute(f"SELECT * FROM {v} ORDER BY {order}").fetchall()  # noqa: S608
            for v, order in HISTORY_VIEWS.items()}


def _assert_matches_rebuild(con):
    """The tables maintained load by load give the same views as deriving them afresh."""
    incremental = _views(con)
    db.rebuild_offer_points(con)
    assert _views(con) == incremental


def _table(provider, day, prices, extra=None):
    """One partition: {sku: price or [prices]} for a provider-day (a list = same-day duplicate)."""
    meta = CaptureMeta(provider=provider, url=f"https://example.test/{provider}",
                       captured_at=dt.datetime.combine(day, dt.time(3), tzinfo=dt.UTC))
    offers = []
    for sku, price in prices.items():
        for p in price if isinstance(price, list) else [price]:
            offers.append(make_offer(meta, sku=sku, gpu_model="H100-SXM-80GB", gpu_count=1,
                                     price_per_hour=p, pricing_model="on_demand",
                                     extra=extra or {}))
    return offers_to_table(offers)


def test_history_tables_follow_every_load(con):
    _assert_matches_rebuild(con)


def test_reloading_a_middle_partition_recomputes_the_next_observation(con):
    # runpod D2 reloaded with H100 at 2.50 (was 2.69) and the RTX 4090 now present at 0.44.
    db.load_partition(con, D2, "runpod", _table("runpod", D2, {}))  # emptied first
    meta = CaptureMeta(provider="runpod", url="https://example.test/runpod",
                       captured_at=dt.datetime.combine(D2, dt.time(3), tzinfo=dt.UTC))
    db.load_partition(con, D2, "runpod", offers_to_table([
        make_offer(meta, sku="H100 SXM", gpu_model="H100-SXM-80GB", gpu_count=1,
                   price_per_hour=2.50, pricing_model="community"),
        make_offer(meta, sku="A100 SXM", gpu_model="A100-SXM-80GB", gpu_count=1,
                   price_per_hour=1.64, pricing_model="on_demand"),
        make_offer(meta, sku="RTX 4090", gpu_model="RTX4090-24GB", gpu_count=1,
                   price_per_hour=0.44, pricing_model="community"),
    ]))
    rows = _rows(con, "SELECT sku, old_date, new_date, old_price_per_hour, new_price_per_hour, "
                      "missed_snapshots FROM price_changes WHERE provider = 'runpod' "
                      "ORDER BY sku, new_date")
    assert [tuple(r.values()) for r in rows] == [
        ("H100 SXM", D1, D2, 2.69, 2.50, 0),
        ("H100 SXM", D2, D3, 2.50, 2.69, 0),
        ("H100 SXM", D3, D4, 2.69, 2.39, 0),
        # The 4090 is no longer absent on D2: its change now follows D2, back to back.
        ("RTX 4090", D2, D3, 0.44, 0.34, 0),
    ]
    hist = con.execute("SELECT sku, price_per_hour, valid_from, valid_to, n_snapshots "
                       "FROM offer_history WHERE provider = 'runpod' AND sku = 'RTX 4090' "
                       "ORDER BY valid_from").fetchall()
    assert hist == [("RTX 4090", 0.44, D1, D2, 2), ("RTX 4090", 0.34, D3, D4, 2)]
    _assert_matches_rebuild(con)


def test_removing_a_middle_snapshot_renumbers_missed_snapshots(con):
    # runpod's D2 snapshot replaced by an empty one: runpod was not read that day after all,
    # so the 4090's absence on D2 is no longer a missed snapshot.
    db.load_partition(con, D2, "runpod", _table("runpod", D2, {}))
    (row,) = _rows(con, "SELECT old_date, new_date, missed_snapshots FROM price_changes "
                        "WHERE sku = 'RTX 4090'")
    assert row == {"old_date": D1, "new_date": D3, "missed_snapshots": 0}
    assert con.execute("SELECT valid_from, valid_to, n_snapshots FROM offer_history "
                       "WHERE sku = 'H100 SXM' AND provider = 'runpod' ORDER BY valid_from"
                       ).fetchall() == [(D1, D3, 2), (D4, D4, 1)]
    _assert_matches_rebuild(con)


def test_any_load_order_gives_the_in_order_history(tmp_path):
    """Random nights loaded in shuffled order, with middle partitions replaced and put back,
    end with the same views as the same nights loaded in date order."""
    import random

    rng = random.Random(7)
    days = [D1 + dt.timedelta(days=i) for i in range(8)]
    skus = [f"s{i}" for i in range(6)]
    nights = {}
    for day in days:
        for provider in ("runpod", "lambda"):
            prices = {}
            for sku in skus:
                r = rng.random()
                if r < 0.15:
                    continue  # absent that night
                price = rng.choice([1.0, 1.0, 1.0, 1.5, 2.0])
                prices[sku] = [price, price + 0.25] if r > 0.95 else price
            nights[(day, provider)] = prices
    nights[(days[3], "lambda")] = {}  # a provider not read one night

    def load_all(con, order):
        for key in order:
            db.load_partition(con, key[0], key[1], _table(key[1], key[0], nights[key]))

    in_order = db.connect(":memory:")
    db.init_schema(in_order)
    load_all(in_order, sorted(nights))
    expected = _views(in_order)
    assert expected["price_changes"] and expected["offer_history"]

    shuffled = db.connect(":memory:")
    db.init_schema(shuffled)
    order = list(nights)
    rng.shuffle(order)
    load_all(shuffled, order)
    # Replace two middle partitions with other prices, then reload them as they were.
    for key in ((days[4], "runpod"), (days[2], "lambda")):
        db.load_partition(shuffled, key[0], key[1],
                          _table(key[1], key[0], {s: 9.0 for s in skus[:3]}))
        _assert_matches_rebuild(shuffled)
    load_all(shuffled, [(days[4], "runpod"), (days[2], "lambda")])
    assert _views(shuffled) == expected
    # A rerun of every partition changes nothing.
    load_all(shuffled, order)
    assert _views(shuffled) == expected
    _assert_matches_rebuild(shuffled)
    in_order.close()
    shuffled.close()


def test_failed_load_leaves_history_tables_unchanged(con):
    before = _views(con)
    bad = _table("runpod", D2, {"H100 SXM": 9.0})
    with pytest.raises(Exception, match="another provider"):
        db.load_partition(con, D2, "lambda", bad)
    assert _views(con) == before


def test_existing_warehouse_of_the_old_layout_is_migrated(con):
    # Before the normalised store, offers were a table and the history tables were derived
    # from it: init_schema moves such a warehouse into the store with the same answers.
    expected = _views(con)
    rows = con.execute("SELECT * FROM offers ORDER BY ALL").fetchall()
    to_old_layout(con)
    db.init_schema(con)
    assert _views(con) == expected
    assert con.execute("SELECT * FROM offers ORDER BY ALL").fetchall() == rows


def test_fx_factor_is_the_rate_in_force_that_day_through_eur(con):
    def f(a, b, day):
        return con.execute("SELECT fx_factor(?, ?, ?::DATE)", [a, b, day]).fetchone()[0]

    # D1 has no rate of its own: Friday's (D1 - 3) applies; D2 has its own.
    assert f("USD", "EUR", D1) == pytest.approx(1 / 1.05)
    assert f("USD", "EUR", D4) == pytest.approx(1 / 1.04)
    assert f("EUR", "CNY", D1) == pytest.approx(7.8)
    assert f("CNY", "USD", D2) == pytest.approx(1.04 / 7.6)
    assert f("USD", "USD", D1 - dt.timedelta(days=999)) == 1.0
    # Before the first rate, a price cannot be converted.
    assert f("USD", "EUR", D1 - dt.timedelta(days=4)) is None


def test_offers_as_of_takes_each_providers_latest_snapshot_on_or_before_the_day(con):
    rows = _rows(con, "SELECT provider, snapshot_date, age_days FROM offers_as_of(?::DATE)",
                 [D3])
    got = {(r["provider"], r["snapshot_date"], r["age_days"]) for r in rows}
    # D4 is after the day: everyone's D3 (aws' D1) counts, aged from the day asked about.
    assert got == {("aws", D1, 2), ("lambda", D3, 0), ("nebius", D3, 0), ("runpod", D3, 0)}
    # latest_offers is the same question as of the warehouse's newest day (D4; today, long
    # after FUTURE, nebius' announced price would be in force and replace its D4 price).
    assert con.execute("SELECT count(*) FROM latest_offers").fetchone()[0] == con.execute(
        "SELECT count(*) FROM offers_as_of((SELECT as_of FROM latest_snapshot))").fetchone()[0]
    assert con.execute("SELECT price_per_hour FROM offers_as_of(current_date) "
                       "WHERE provider = 'nebius' AND sku = 'h100-1gpu'").fetchall() == [(2.0,)]


def test_offers_priced_as_of_converts_at_each_snapshot_date(con):
    rows = _rows(con, "SELECT provider, sku, price_per_hour, price_currency, currency, fx "
                      "FROM offers_priced_as_of(?::DATE, 'EUR') ORDER BY provider, sku", [D4])
    by = {(r["provider"], r["sku"]): r for r in rows}
    # Lambda's last snapshot is D3: converted at D3's rate (D2's 1.04), not today's.
    lam = by[("lambda", "gpu_8x_h100_sxm5")]
    assert lam["price_per_hour"] == pytest.approx(23.92 / 1.04)
    assert (lam["price_currency"], lam["currency"]) == ("USD", "EUR")
    # The announced nebius price (effective after D4) is not offered yet.
    assert [r["sku"] for r in rows if r["provider"] == "nebius"] == ["h100-1gpu", "l40s-1gpu"]


def test_offer_turnover_compares_each_providers_last_snapshots_around_the_week(con):
    # A "week" of D4 alone: runpod's and nebius' D4 list the identities of their D3; lambda and
    # aws were not read in it.
    assert _rows(con, "SELECT * FROM offer_turnover(?::DATE, ?::DATE)", [D4, D4]) == []
    # D2 against D1: runpod's RTX 4090 was withdrawn, aws not read on D2.
    rows = _rows(con, "SELECT change, provider, listed_on, sku FROM offer_turnover(?::DATE, "
                      "?::DATE)", [D2, D2])
    assert rows == [{"change": "disappeared", "provider": "runpod", "listed_on": D1,
                     "sku": "RTX 4090"}]
    back = _rows(con, "SELECT change, sku, price_per_hour FROM offer_turnover(?::DATE, ?::DATE)",
                 [D3, D3])
    # Runpod's 4090 is back, at another price; Nebius announced a price (its own identity) for
    # a machine it listed the day before: a new pricing of a known SKU, not a new offer.
    assert back == [{"change": "appeared", "sku": "RTX 4090", "price_per_hour": 0.34},
                    {"change": "new_pricing", "sku": "h100-1gpu", "price_per_hour": 2.00}]
