"""The query layer (warehouse/queries/) over the bundled warehouse: each function gives the rows
of its named view under its filters, read-only, in Arrow or pandas, and a question past its time
limit is stopped."""

from __future__ import annotations

import datetime as dt

import duckdb
import pyarrow as pa
import pytest

from gpuprices.warehouse import db, queries
from gpuprices.warehouse.regions import country_of
from tests.bundled_warehouse import GROUP, warehouse_path

pytestmark = GROUP  # one bundled warehouse per run (tests/bundled_warehouse.py)

H100 = "H100-SXM-80GB"
LAMBDA_8X = "8x NVIDIA H100 SXM 80 GB"


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    return warehouse_path(tmp_path_factory)


def _sql(path, sql, params=()):
    con = db.connect(path, read_only=True, config=db.QUERY_ONLY)
    try:
        cur = con.execute(sql, list(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    finally:
        con.close()


def test_cheapest_now_is_the_view_under_its_filters(wh):
    got = queries.cheapest_now(wh, gpu_model=H100, pricing_model="on_demand")
    assert isinstance(got, pa.Table)
    want = _sql(wh, "SELECT * FROM cheapest_now WHERE gpu_model = ? AND pricing_model = ?",
                [H100, "on_demand"])
    assert got.to_pylist() == want and len(want) == 1
    everything = queries.cheapest_now(wh)
    assert everything.num_rows == _sql(wh, "SELECT count(*) AS n FROM cheapest_now")[0]["n"]
    usd = everything["price_per_gpu_hour_usd"].to_pylist()
    assert usd == sorted(usd, key=lambda x: (x is None, x))  # cheapest first
    assert queries.cheapest_now(wh, limit=3).num_rows == 3


def test_offers_now_filters_by_provider_model_region_and_country(wh):
    lam = queries.offers_now(wh, provider="lambda", gpu_model=H100)
    n = _sql(wh, "SELECT count(*) AS n FROM latest_offers WHERE provider = 'lambda' AND "
                 "gpu_model = ?", [H100])[0]["n"]
    assert lam.num_rows == n > 0
    assert set(lam["provider"].to_pylist()) == {"lambda"}
    # Lambda's 8x H100 went from 2.99 to 3.99 per GPU-hour on 2026-08-22 (tests/
    # test_lambda_history.py): now is the new price.
    row = [r for r in lam.to_pylist() if r["sku"] == LAMBDA_8X
           and r["pricing_model"] == "on_demand"]
    assert [r["price_per_gpu_hour"] for r in row] == [3.99]
    assert row[0]["price_per_gpu_hour_usd"] == 3.99

    every = queries.offers_now(wh)
    us = queries.offers_now(wh, country="us")
    want = [r for r in every.to_pylist()
            if country_of(r["provider"], r["region"], r["extra"])[0] == "US"]
    assert us.to_pylist() == want and 0 < len(want) < every.num_rows
    assert queries.offers_now(wh, country="US", limit=2).to_pylist() == want[:2]
    east = queries.offers_now(wh, region="us-east-1")
    assert east.num_rows and set(east["region"].to_pylist()) == {"us-east-1"}


def test_offer_history_and_price_changes_show_lambdas_move(wh):
    hist = queries.offer_history(wh, provider="lambda", sku=LAMBDA_8X,
                                 pricing_model="on_demand")
    runs = [(r["valid_from"], r["valid_to"], r["price_per_gpu_hour"]) for r in hist.to_pylist()]
    assert runs == [(dt.date(2024, 11, 3), dt.date(2026, 1, 9), 2.99),
                    (dt.date(2026, 8, 22), dt.date(2026, 8, 22), 3.99)]
    by_id = queries.offer_history(wh, offer_id=hist["offer_id"][0].as_py())
    assert by_id.to_pylist() == hist.to_pylist()

    every = queries.price_changes(wh, days=None, provider="lambda")
    move = [r for r in every.to_pylist() if r["sku"] == LAMBDA_8X
            and r["pricing_model"] == "on_demand"]
    assert [(r["old_price_per_gpu_hour"], r["new_price_per_gpu_hour"], r["new_date"])
            for r in move] == [(2.99, 3.99, dt.date(2026, 8, 22))]
    # The warehouse's today is 2026-10-05: 44 days after the move, so the last 45 days hold it
    # (2026-08-22 .. 2026-10-05) and the last 44 do not.
    assert not [r for r in queries.price_changes(wh, days=44, provider="lambda").to_pylist()
                if r["sku"] == LAMBDA_8X]
    recent = queries.price_changes(wh, days=45, provider="lambda").to_pylist()
    assert any(r["sku"] == LAMBDA_8X for r in recent)
    week = queries.price_changes(wh, days=7).to_pylist()
    assert week and all(dt.date(2026, 9, 28) < r["new_date"] <= dt.date(2026, 10, 5)
                        for r in week)


def test_price_index_gives_the_published_value(wh):
    # tests/test_index.py derives this day's H100 on-demand value by hand: 3.646770 USD.
    t = queries.price_index(wh, gpu_model=H100, start=dt.date(2026, 8, 22),
                            end=dt.date(2026, 8, 22))
    # Converted (x 1.0 for USD) and rounded to 6 places, as `gpuprices index` prints it.
    assert [(r["value"], r["panel"]) for r in t.to_pylist()] == [(3.64677, 19)]
    eur = queries.price_index(wh, gpu_model=H100, start=dt.date(2026, 8, 22),
                              end=dt.date(2026, 8, 22), currency="eur").to_pylist()
    assert eur[0]["value"] < 3.64677


def test_stale_providers_in_pandas(wh):
    import pandas as pd  # here: ~0.4 s to import, for the one test that uses it

    df = queries.stale_providers(wh, pandas=True)
    assert isinstance(df, pd.DataFrame)
    assert df.to_dict("records") == _sql(wh, "SELECT * FROM stale_providers ORDER BY provider")
    assert len(df) > 0 and (df["age_days"] > 14).all()


def test_last_load_names_the_run(wh):
    info = queries.last_load(wh)
    assert info["snapshot_date"] == dt.date(2026, 10, 5) and info["runs"] == 1
    assert info["partitions"] > 500 and info["last_run_finished_at"] is not None


def test_a_path_is_opened_read_only_without_file_access(wh):
    with queries.reading(wh) as con:
        with pytest.raises(duckdb.Error):
            con.execute("CREATE TABLE t (a INT)")
        with pytest.raises(duckdb.Error):
            con.execute("SELECT * FROM read_text('/etc/hostname')")


def test_a_question_past_its_time_limit_is_stopped(wh):
    with pytest.raises(queries.QueryTimeout):
        with queries.reading(wh, timeout_s=0.2) as con:
            con.execute("SELECT count(*) FROM range(1000000000000) a")
    with queries.reading(wh, timeout_s=30) as con:  # a quick one is untouched
        assert con.execute("SELECT count(*) FROM cheapest_now").fetchone()[0] > 0


def test_the_optional_filters_take_column_names_only():
    from gpuprices.warehouse.queries.source import unless_none

    assert unless_none("sku", "region") == ("($sku IS NULL OR sku = $sku)"
                                            " AND ($region IS NULL OR region = $region)")
    for bad in [("sku; DROP TABLE offers",), ("region) OR (1=1",), ()]:
        with pytest.raises(ValueError):
            unless_none(*bad)
