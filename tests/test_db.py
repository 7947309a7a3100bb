"""The DuckDB warehouse: schema, idempotent one-transaction loads, FX rates, runs."""

import datetime as dt

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from gpuprices.warehouse import db, gpus, lake
from gpuprices.warehouse.contract import (
    OFFER_SCHEMA,
    CaptureMeta,
    ContractError,
    make_offer,
    offers_to_table,
)
from tests.conftest import to_old_layout

DAY1 = dt.date(2025, 3, 4)
DAY2 = dt.date(2025, 3, 5)


def _offers(provider="runpod", day=DAY1, prices=(2.69, 1.64)):
    meta = CaptureMeta(
        provider=provider,
        url=f"https://example.test/{provider}",
        captured_at=dt.datetime.combine(day, dt.time(2, 30), tzinfo=dt.UTC),
    )
    return offers_to_table(
        [
            make_offer(meta, sku=f"sku-{i}", gpu_model="H100-SXM-80GB", gpu_count=1,
                       price_per_hour=p, pricing_model="on_demand")
            for i, p in enumerate(prices)
        ]
    )


@pytest.fixture
def con(tmp_path):
    connection = db.connect(tmp_path / "sub" / "warehouse.duckdb")
    db.init_schema(connection)
    yield connection
    connection.close()


def _count(con, where="true", params=()):
    return con.execute(f"SELECT count(*) FROM offers WHERE {where}", list(params)).fetchone()[0]  # noqa: S608


def test_schema_tables_and_reference_data(con):
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                        "WHERE table_type = 'BASE TABLE'").fetchall()}
    assert {"offer_points", "gpu_models", "fx_rates", "runs"} <= tables
    # `offers` is a view that gives back exactly the contract's columns, order and types.
    schema = con.sql("SELECT * FROM offers LIMIT 0").to_arrow_table().schema

    def kind(t):  # the session's time zone names UTC its own way (Etc/UTC)
        return ("timestamptz", t.unit) if pa.types.is_timestamp(t) and t.tz else t

    assert [(f.name, kind(f.type)) for f in schema] == [
        (f.name, kind(f.type)) for f in OFFER_SCHEMA]
    assert con.execute("SELECT count(*) FROM gpu_models").fetchone()[0] == len(gpus.gpu_models())
    mem = con.execute("SELECT memory_gb FROM gpu_models WHERE gpu_model = ?",
                      ["H100-SXM-80GB"]).fetchone()[0]
    assert mem == 80
    # A second init (every start calls it) keeps the data.
    db.load_partition(con, DAY1, "runpod", _offers())
    db.init_schema(con)
    assert _count(con) == 2


def test_load_twice_same_counts_and_rerun_replaces(con):
    assert db.load_partition(con, DAY1, "runpod", _offers()) == 2
    db.load_partition(con, DAY1, "lambda", _offers("lambda", prices=(2.49,)))
    db.load_partition(con, DAY1, "runpod", _offers())
    assert _count(con) == 3
    db.load_partition(con, "2025-03-04", "runpod", _offers(prices=(2.39,)))
    assert con.execute("SELECT provider, price_per_hour FROM offers ORDER BY provider"
                       ).fetchall() == [("lambda", 2.49), ("runpod", 2.39)]


def test_failed_load_changes_nothing(con):
    db.load_partition(con, DAY1, "runpod", _offers(prices=(2.69, 1.64)))
    bad = _offers(prices=(1.0, 2.0, 3.0))
    # The third row breaks NOT NULL: the DELETE of the old day has already run when the INSERT
    # fails, so only the transaction keeps the old rows.
    prices = bad.column("price_per_hour").to_pylist()
    prices[2] = None
    bad = bad.set_column(bad.schema.get_field_index("price_per_hour"), "price_per_hour",
                         pa.array(prices, pa.float64()))
    with pytest.raises(duckdb.ConstraintException):
        db.load_partition(con, DAY1, "runpod", bad)
    assert sorted(r[0] for r in con.execute("SELECT price_per_hour FROM offers").fetchall()) == [
        1.64, 2.69,
    ]
    with pytest.raises(ContractError, match="another provider"):
        db.load_partition(con, DAY1, "lambda", _offers("runpod"))
    assert _count(con) == 2


def test_load_lake_is_idempotent_and_filterable(con, tmp_path):
    root = tmp_path / "lake"
    lake.write_partition(root, DAY1, "runpod", _offers())
    lake.write_partition(root, DAY2, "runpod", _offers(day=DAY2, prices=(2.39,)))
    lake.write_partition(root, DAY2, "lambda", _offers("lambda", DAY2, prices=(2.49, 1.29, 0.5)))
    first = db.load_lake(con, root)
    assert first == {(DAY1, "runpod"): 2, (DAY2, "lambda"): 3, (DAY2, "runpod"): 1}
    assert db.load_lake(con, root) == first
    assert _count(con) == 6
    assert db.load_lake(con, root, dates=["2025-03-05"], providers=["runpod"]) == {
        (DAY2, "runpod"): 1
    }
    assert _count(con) == 6


def test_load_lake_is_one_transaction(con, tmp_path):
    root = tmp_path / "lake"
    lake.write_partition(root, DAY1, "runpod", _offers())
    db.load_lake(con, root)
    lake.write_partition(root, DAY1, "runpod", _offers(prices=(9.0, 9.5, 9.9)))
    lake.write_partition(root, DAY2, "runpod", _offers(day=DAY2))
    seen = []

    def reader(path):
        seen.append(path)
        if len(seen) == 2:
            raise OSError("lost the disk half way")
        return lake.read_offers_file(path)

    with pytest.raises(OSError, match="half way"):
        db.load_lake(con, root, read=reader)
    # The first partition had been replaced inside the transaction; it is rolled back too.
    assert len(seen) == 2
    assert sorted(r[0] for r in con.execute("SELECT price_per_hour FROM offers").fetchall()) == [
        1.64, 2.69,
    ]


def test_old_schema_partition_loads(con, tmp_path):
    import pyarrow.parquet as pq

    root = tmp_path / "lake"
    path = lake.partition_path(root, DAY1, "runpod")
    path.parent.mkdir(parents=True)
    pq.write_table(_offers().drop_columns(["available", "extra", "interconnect"]), path)
    assert db.load_lake(con, root) == {(DAY1, "runpod"): 2}
    assert con.execute("SELECT count(*) FROM offers WHERE extra IS NULL AND available IS NULL"
                       ).fetchone()[0] == 2


def test_fx_rates_upsert(con):
    rates = pa.table({
        "date": [DAY1, DAY1],
        "currency": ["usd", "CNY"],
        "rate_per_eur": [1.05, 7.6],
        "source": ["ecb eurofxref-daily", "ecb eurofxref-daily"],
    })
    assert db.load_fx_rates(con, rates) == 2
    db.load_fx_rates(con, pa.table({"date": [DAY1], "currency": ["USD"], "rate_per_eur": [1.06]}))
    assert con.execute("SELECT currency, rate_per_eur FROM fx_rates ORDER BY currency"
                       ).fetchall() == [("CNY", 7.6), ("USD", 1.06)]


def test_record_run(con):
    start = dt.datetime(2025, 3, 4, 2, 0, tzinfo=dt.UTC)
    db.record_run(con, run_id="r1", provider="runpod", snapshot_date=DAY1, status="failed",
                  started_at=start, error="ParseError: runpod https://x: no prices")
    db.record_run(con, run_id="r1", provider="runpod", snapshot_date=DAY1, status="ok",
                  started_at=start, finished_at=start + dt.timedelta(minutes=1), rows=40,
                  quarantined=2)
    db.record_run(con, run_id="r1", provider="lambda", status="skipped", message="no network")
    rows = con.execute("SELECT provider, status, rows, quarantined, error FROM runs "
                       "ORDER BY provider").fetchall()
    assert rows == [("lambda", "skipped", None, None, None), ("runpod", "ok", 40, 2, None)]
    with pytest.raises(ValueError, match="unknown run status"):
        db.record_run(con, run_id="r1", provider="runpod", status="great")
    for status in db.RUN_STATUSES:  # the table's CHECK admits each
        db.record_run(con, run_id="each", provider=status, status=status)


def test_values_are_parameters_not_sql(con):
    db.load_partition(con, DAY1, "runpod", _offers())
    hostile = "x'); DROP TABLE offers; --"
    db.record_run(con, run_id=hostile, provider=hostile, status="failed", error=hostile)
    assert con.execute("SELECT run_id FROM runs").fetchone()[0] == hostile
    assert _count(con) == 2


def test_read_only_connection(tmp_path):
    path = tmp_path / "w.duckdb"
    con = db.connect(path)
    db.init_schema(con)
    db.load_partition(con, DAY1, "runpod", _offers())
    con.close()
    ro = db.connect(path, read_only=True)
    table = db.query(ro, "SELECT price_per_hour FROM offers WHERE provider = ?", ["runpod"])
    assert pc.sum(table.column(0)).as_py() == pytest.approx(2.69 + 1.64)
    with pytest.raises(duckdb.Error):
        ro.execute("DELETE FROM offers")
    ro.close()


def _old_layout(con):
    """Turn `con` into the layout warehouses had before the normalised store: a table `offers`
    (without `available`, to stand for a contract column added later) and history tables that
    still stored prices per GPU-hour."""
    to_old_layout(con, without=("available",))
    con.execute("CREATE TABLE offer_points (snapshot_date DATE, provider VARCHAR, "
                "gpu_model VARCHAR, offer_no INTEGER, price_per_hour DOUBLE, "
                "price_per_gpu_hour DOUBLE, prev_date DATE, old_price_per_hour DOUBLE, "
                "old_price_per_gpu_hour DOUBLE)")
    con.execute("CREATE TABLE offer_ids (offer_no INTEGER, last_price_per_gpu_hour DOUBLE)")


def test_a_warehouse_of_the_old_layout_is_moved_into_the_store(con):
    db.load_partition(con, DAY1, "runpod", _offers(prices=(2.69, 1.64)))
    db.load_partition(con, DAY2, "runpod", _offers(day=DAY2, prices=(2.49, 1.64)))
    db.load_partition(con, DAY2, "lambda", _offers("lambda", DAY2, prices=(2.49,)))
    rows = "SELECT * EXCLUDE (available) FROM offers ORDER BY ALL"
    changes = "SELECT * FROM price_changes ORDER BY ALL"
    before_rows, before_changes = con.execute(rows).fetchall(), con.execute(changes).fetchall()
    _old_layout(con)
    db.init_schema(con)
    assert db._table_type(con, "offers") == "VIEW"
    assert con.execute(rows).fetchall() == before_rows
    assert con.execute("SELECT count(*) FROM offers WHERE available IS NULL").fetchone()[0] == 5
    assert con.execute(changes).fetchall() == before_changes
    cols = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_name IN ('offer_points', 'offer_ids')").fetchall()}
    assert not {c for c in cols if "gpu_hour" in c}
    assert not {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                          "WHERE table_name LIKE '\\_%' ESCAPE '\\'"
                                          ).fetchall()}
    row = con.execute("SELECT sku, old_price_per_gpu_hour, new_price_per_gpu_hour "
                      "FROM price_changes").fetchall()
    assert row == [("sku-0", 2.69, 2.49)]
    # A load after the migration still works and the derived price equals the contract's.
    db.load_partition(con, DAY2, "runpod", _offers(day=DAY2, prices=(2.39, 1.64)))
    assert con.execute(
        "SELECT count(*) FROM offer_observations AS v JOIN offers AS o USING "
        "(snapshot_date, provider, sku, price_per_hour) "
        "WHERE v.price_per_gpu_hour <> o.price_per_gpu_hour").fetchone()[0] == 0
    assert con.execute("SELECT old_price_per_hour, new_price_per_hour FROM price_changes "
                       "WHERE provider = 'runpod'").fetchall() == [(2.69, 2.39)]


def test_a_warehouse_from_before_snapshot_times_gains_them_from_its_captures(con):
    """A store without snapshot_at / prev_at / last_at (one snapshot per provider-day then):
    the columns are added on start, filled with each provider-day's earliest captured_at, and
    the history views and later loads go on as before."""
    db.load_partition(con, DAY1, "runpod", _offers(prices=(2.69, 1.64)))
    db.load_partition(con, DAY2, "runpod", _offers(day=DAY2, prices=(2.49, 1.64)))
    changes = "SELECT * FROM price_changes ORDER BY ALL"
    history = "SELECT * FROM offer_history ORDER BY ALL"
    before = con.execute(changes).fetchall(), con.execute(history).fetchall()
    for view in reversed(db.VIEWS):
        con.execute(f"DROP VIEW IF EXISTS {view.split('/')[-1]}")  # noqa: S608 (our names)
    for table, column in (("offer_points", "snapshot_at"), ("offer_points", "prev_at"),
                          ("offer_ids", "last_at"), ("snapshot_dates", "snapshot_at")):
        con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")  # noqa: S608 (our names)
    db.init_schema(con)
    assert (con.execute(changes).fetchall(), con.execute(history).fetchall()) == before
    first = dt.datetime.combine(DAY2, dt.time(2, 30), tzinfo=dt.UTC)
    assert con.execute("SELECT DISTINCT old_at, new_at FROM price_changes").fetchall() == [
        (first - dt.timedelta(days=1), first)]
    db.load_partition(con, DAY2, "runpod", _offers(day=DAY2, prices=(2.39, 1.64)))
    assert con.execute("SELECT old_price_per_hour, new_price_per_hour FROM price_changes"
                       ).fetchall() == [(2.69, 2.39)]


def test_fx_rates_of_an_old_warehouse_lose_their_key_and_keep_their_rows(con):
    rates = pa.table({"date": [DAY1, DAY2], "currency": ["USD", "USD"],
                      "rate_per_eur": [1.05, 1.07]})
    db.load_fx_rates(con, rates)
    # The shape fx_rates had with a primary key.
    con.execute("DROP TABLE fx_rates")
    con.execute("CREATE TABLE fx_rates (date DATE NOT NULL, currency VARCHAR NOT NULL, "
                "rate_per_eur DOUBLE NOT NULL, source VARCHAR, PRIMARY KEY (date, currency))")
    db.load_fx_rates(con, rates)
    db.init_schema(con)
    assert con.execute("SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'fx_rates' "
                       "AND constraint_type = 'PRIMARY KEY'").fetchall() == [(0,)]
    db.load_fx_rates(con, pa.table({"date": [DAY2], "currency": ["usd"], "rate_per_eur": [1.08]}))
    assert con.execute("SELECT date, rate_per_eur FROM fx_rates ORDER BY date").fetchall() == [
        (DAY1, 1.05), (DAY2, 1.08)]


def test_fx_rates_given_twice_are_refused_and_change_nothing(con):
    db.load_fx_rates(con, pa.table({"date": [DAY1], "currency": ["USD"], "rate_per_eur": [1.05]}))
    twice = pa.table({"date": [DAY1, DAY1], "currency": ["USD", "usd"],
                      "rate_per_eur": [1.06, 1.07]})
    with pytest.raises(ValueError, match="USD"):
        db.load_fx_rates(con, twice)
    assert con.execute("SELECT rate_per_eur FROM fx_rates").fetchall() == [(1.05,)]


def test_compact_rewrites_the_file_with_the_same_answers(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    con = db.connect(path)
    db.init_schema(con)
    # A big partition (random prices do not compress) replaced by a small one after another
    # day was loaded: its blocks are freed inside the file, which keeps them.
    n = 300_000
    big = _offers(prices=(2.0,)).take([0] * n)
    price = pa.array(np.random.default_rng(7).uniform(1, 9, n))
    for name in ("price_per_hour", "price_per_gpu_hour"):
        big = big.set_column(big.schema.get_field_index(name), name, price)
    db.load_partition(con, DAY1, "runpod", big)
    db.load_partition(con, DAY2, "runpod", _offers(day=DAY2, prices=(2.49, 1.64)))
    db.load_partition(con, DAY1, "runpod", _offers(prices=(2.69, 1.64)))
    views = {v: con.execute(f"SELECT * FROM {v} ORDER BY ALL").fetchall()  # noqa: S608
             for v in ("offers", "price_changes", "offer_history", "cheapest_daily")}
    con.close()
    before, after = db.compact(path)
    assert after < before and after == path.stat().st_size
    con = db.connect(path)
    db.init_schema(con)
    assert {v: con.execute(f"SELECT * FROM {v} ORDER BY ALL").fetchall()  # noqa: S608
            for v in views} == views
    db.load_partition(con, DAY2, "lambda", _offers("lambda", DAY2, prices=(2.49,)))
    assert _count(con) == 5
    con.close()
    assert [p.name for p in tmp_path.iterdir()] == ["warehouse.duckdb"]


# How the store built `variant` before warehouse/identity.py (identity definition 1): extra
# offer_key, source and provider_term, nulls skipped.
_STAGE_SQL_V1 = """
    CREATE OR REPLACE TEMP TABLE _in AS
    SELECT *, coalesce(concat_ws('|', v[1], v[2], v[3]), '') AS variant,
           hash(gpu_memory_gb, vcpus, ram_gb, interconnect, billing_increment_s, min_billing_s,
                extra) AS detail_hash
    FROM (
        SELECT *, json_extract_string(
            extra, ['$.offer_key', '$.source', '$.provider_term']) AS v
        FROM {src}
    )
"""


def _tiered(day, prices):
    """Nebius-like rows: one SKU's price, its "from" price, and a Lambda-like tiered row."""
    meta = CaptureMeta("nebius", "https://example.test/prices",
                       dt.datetime.combine(day, dt.time(2, 30), tzinfo=dt.UTC))
    extras = ({"source": "page"}, {"source": "page", "price_kind": "from"},
              {"source": "page", "tier": "On-demand"})
    return offers_to_table([
        make_offer(meta, sku=sku, gpu_model="H100-SXM-80GB", gpu_count=1, price_per_hour=p,
                   pricing_model="on_demand", extra=extra)
        for sku, p, extra in zip(("gpu-h100", "gpu-h100", "gpu-h100-t"), prices, extras,
                                 strict=True)])


def test_a_warehouse_of_the_old_identity_definition_is_restored_without_splitting_history(
        con, monkeypatch):
    from gpuprices.warehouse import identity, store

    # Day 1 stored under the first definition: the "from" price shares the SKU's identity.
    with monkeypatch.context() as m:
        m.setattr(store, "_STAGE_SQL", _STAGE_SQL_V1)
        db.load_partition(con, DAY1, "nebius", _tiered(DAY1, (3.85, 1.55, 2.99)))
    con.execute("DROP TABLE warehouse_meta")  # what such a warehouse has: no record at all
    assert sorted(r[0] for r in con.execute("SELECT variant FROM offer_ids").fetchall()) == [
        "page", "page"]
    db.init_schema(con)
    assert con.execute("SELECT value FROM warehouse_meta WHERE key = 'identity_version'"
                       ).fetchall() == [(str(identity.VERSION),)]
    assert sorted(r[0] for r in con.execute("SELECT variant FROM offer_ids").fetchall()) == [
        "", "|On-demand", "||from"]
    numbers = con.execute("SELECT * FROM offer_ids ORDER BY offer_no").fetchall()
    db.init_schema(con)  # the record now matches: nothing is stored again
    assert con.execute("SELECT * FROM offer_ids ORDER BY offer_no").fetchall() == numbers
    # Day 2 under the current definition continues each offer's history.
    db.load_partition(con, DAY2, "nebius", _tiered(DAY2, (3.85, 1.45, 2.79)))
    assert con.execute("SELECT count(*) FROM offer_ids").fetchone()[0] == 3
    assert sorted(con.execute("SELECT variant, old_price_per_hour, new_price_per_hour "
                              "FROM price_changes").fetchall()) == [
        ("|On-demand", 2.99, 2.79), ("||from", 1.55, 1.45)]
    assert con.execute("SELECT count(*), min(n_snapshots) FROM offer_history "
                       "WHERE variant = ''").fetchall() == [(1, 2)]


# How the store built `variant` under identity definition 2: `source` was the first key.
_STAGE_SQL_V2 = """
    CREATE OR REPLACE TEMP TABLE _in AS
    SELECT *, rtrim(concat_ws('|', coalesce(v[1], ''), coalesce(v[2], ''), coalesce(v[3], ''),
                              coalesce(v[4], ''), coalesce(v[5], ''), coalesce(v[6], '')),
                    '|') AS variant,
           hash(gpu_memory_gb, vcpus, ram_gb, interconnect, billing_increment_s, min_billing_s,
                extra) AS detail_hash
    FROM (
        SELECT *, json_extract_string(extra, ['$.source', '$.provider_term', '$.tier',
                                              '$.price_kind', '$.gcp_model', '$.offer_key']) AS v
        FROM {src}
    )
"""


def test_a_warehouse_that_kept_sources_apart_joins_them_into_one_offer(con, monkeypatch):
    """Definition 2 kept a history export's and a page's rows of one offer apart; the restore
    under definition 3 makes them one offer, and the move between them a price change."""
    from gpuprices.warehouse import identity, store

    def gcp_spot(day, source, price):
        meta = CaptureMeta("gcp", f"https://example.test/{source}",
                           dt.datetime.combine(day, dt.time(2), tzinfo=dt.UTC))
        return offers_to_table([make_offer(
            meta, sku="a2-highgpu-1g", region="us-central1", gpu_model="A100-40GB",
            gpu_count=1, price_per_hour=price, pricing_model="spot",
            extra={"source": source, "provider_term": "Spot"})])

    with monkeypatch.context() as m:
        m.setattr(store, "_STAGE_SQL", _STAGE_SQL_V2)
        db.load_partition(con, DAY1, "gcp", gcp_spot(DAY1, "history", 1.92802))
        db.load_partition(con, DAY2, "gcp", gcp_spot(DAY2, "page", 2.20401))
    con.execute("UPDATE warehouse_meta SET value = '2' WHERE key = 'identity_version'").fetchall()
    assert con.execute("SELECT count(*) FROM price_changes").fetchall() == [(0,)]
    db.init_schema(con)
    assert con.execute("SELECT value FROM warehouse_meta WHERE key = 'identity_version'"
                       ).fetchall() == [(str(identity.VERSION),)]
    assert con.execute("SELECT variant FROM offer_ids").fetchall() == [("Spot",)]
    assert con.execute("SELECT old_date, old_price_per_hour, new_price_per_hour "
                       "FROM price_changes").fetchall() == [(DAY1, 1.92802, 2.20401)]


def test_the_identity_restore_is_one_transaction(con, monkeypatch):
    from gpuprices.warehouse import schema, store

    with monkeypatch.context() as m:
        m.setattr(store, "_STAGE_SQL", _STAGE_SQL_V1)
        db.load_partition(con, DAY1, "nebius", _tiered(DAY1, (3.85, 1.55, 2.99)))
    con.execute("DELETE FROM warehouse_meta")
    before = con.execute("SELECT * FROM offers ORDER BY ALL").fetchall()

    def broken(c):
        store.restore_all(c)
        raise OSError("disk full")

    monkeypatch.setattr(schema, "restore_all", broken)
    with pytest.raises(OSError, match="disk full"):
        db.init_schema(con)
    assert con.execute("SELECT count(*) FROM warehouse_meta").fetchone()[0] == 0
    assert sorted(r[0] for r in con.execute("SELECT variant FROM offer_ids").fetchall()) == [
        "page", "page"]
    assert con.execute("SELECT * FROM offers ORDER BY ALL").fetchall() == before


def test_init_schema_leaves_a_current_warehouse_alone_and_sets_up_a_changed_one(tmp_path,
                                                                                 monkeypatch):
    from gpuprices.warehouse import schema

    path = tmp_path / "w.duckdb"
    con = db.connect(path)
    db.init_schema(con)
    con.close()
    calls = []
    real_refresh = schema.refresh_views
    monkeypatch.setattr(schema, "refresh_views", lambda c: (calls.append(1), real_refresh(c)))

    con = db.connect(path)  # every command opens the warehouse this way
    db.init_schema(con)
    assert calls == []
    # A view dropped since (the catalog differs): set up again, the view is back.
    con.execute("DROP VIEW cheapest_now")
    db.init_schema(con)
    assert calls == [1]
    assert con.execute("SELECT count(*) FROM cheapest_now").fetchall()
    # Reference rows changed (gpus.csv of a newer release): gpu_models is refreshed.
    models = gpus.gpu_models()
    first = next(iter(models))
    monkeypatch.setattr(gpus, "gpu_models", lambda: {first: models[first]})
    db.init_schema(con)
    assert calls == [1, 1]
    assert con.execute("SELECT gpu_model FROM gpu_models").fetchall() == [(first,)]
    db.init_schema(con)
    assert calls == [1, 1]
    con.close()
