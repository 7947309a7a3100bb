"""Loading many provider-days in one bulk transaction (warehouse/bulk_append.py) stores exactly
what loading them one by one stores, on the real bundled captures, and keeps the per-day
guarantees: a bad provider-day loads nothing of itself and the others still load."""

import pyarrow as pa
import pytest

from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import load_steps
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.warehouse import bulk_append, db, lake, lake_sync, store
from tests.warehouse_rows import STORED_TABLES

PROVIDERS = ("runpod", "nebius", "crusoe")

# Every stored table of the warehouse, plus the offers view and the load log.
STORED = STORED_TABLES | {
    "offers": "SELECT * EXCLUDE (extra), extra::VARCHAR FROM offers ORDER BY ALL",
    "lake_loads": "SELECT * EXCLUDE (loaded_at) FROM lake_loads ORDER BY ALL",
}


@pytest.fixture
def settings(tmp_path, manifest_archive):
    s = Settings(data_dir=tmp_path / "data",
                 archive_root=manifest_archive(*PROVIDERS)).ensure()
    for provider in PROVIDERS:
        pipeline.reparse(s, provider)
    return s


def _keys(settings):
    # The order a replay loads them in: provider by provider, each in date order.
    by_provider = sorted(lake.list_partitions(settings.lake_root),
                         key=lambda k: (PROVIDERS.index(k[1]), k[0]))
    return [(day, provider) for day, provider, _path in by_provider]


def _stored(con):
    return {name: con.execute(sql).fetchall() for name, sql in STORED.items()}


def _warehouse(settings, name):
    con = db.connect(settings.data_dir / name)
    db.init_schema(con)
    return con


def _parts(settings, keys):
    return [(d, p, lake.read_partition(settings.lake_root, d, p),
             lake_sync.stamp_of(lake.partition_path(settings.lake_root, d, p))) for d, p in keys]


def test_bulk_load_stores_what_per_day_loads_store(settings):
    keys = _keys(settings)
    assert len(keys) >= 10 and {p for _, p in keys} == set(PROVIDERS)
    # Two batches: each provider's first two days, then the rest, whose first points follow
    # the stored last_* of the first batch.
    first = [k for k in keys if sum(d < k[0] for d, p in keys if p == k[1]) < 2]
    batches = [first, [k for k in keys if k not in first]]
    one_by_one = _warehouse(settings, "per_day.duckdb")
    for day, provider in batches[0] + batches[1]:
        load_steps.load_day(settings, one_by_one, day, provider)
    bulk = _warehouse(settings, "bulk.duckdb")
    counts = {}
    for batch in batches:
        counts |= lake_sync.append_stamped(bulk, _parts(settings, batch))
    assert list(counts) == batches[0] + batches[1] and sum(counts.values()) > 300
    expected, got = _stored(one_by_one), _stored(bulk)
    assert len(got["offer_points"]) == sum(counts.values())
    assert any(old is not None for *_, old, _dup, _d, _c, _a in got["offer_points"])
    for name in STORED:
        assert got[name] == expected[name], name
    assert lake_sync.pending(bulk, settings.lake_root) == []


def test_a_batch_that_is_no_append_is_refused_untouched_and_loaded_day_by_day(settings):
    keys = _keys(settings)
    con = _warehouse(settings, "w.duckdb")
    load_steps.load_day(settings, con, *keys[-1])
    before = _stored(con)
    with pytest.raises(bulk_append.NotAppend):
        lake_sync.append_stamped(con, _parts(settings, keys))
    assert _stored(con) == before
    assert load_steps.load_days(settings, con, keys)[1] == {}
    reference = _warehouse(settings, "ref.duckdb")
    assert load_steps.load_days(settings, reference, keys)[1] == {}
    got, expected = _stored(con), _stored(reference)
    # Offer numbers follow load order, which differs here: compare what they number.
    for name in ("offers", "snapshot_dates", "lake_loads"):
        assert got[name] == expected[name], name
    assert len(got["offer_points"]) == len(expected["offer_points"])


def test_a_bad_day_in_a_bulk_load_fails_alone(settings, monkeypatch):
    keys = _keys(settings)
    bad_day, bad_provider = keys[3]
    # Fault injection: the bad day reads back as another provider's rows (the lake's own
    # writer refuses to write such a file), so the contract check refuses it inside the bulk
    # transaction, after other days were staged.
    other = next(k for k in keys if k[1] != bad_provider)
    read = lake.read_partition

    def reader(root, day, provider):
        if (day, provider) == (bad_day, bad_provider):
            table = read(root, *other)
            return table.set_column(table.schema.get_field_index("snapshot_date"),
                                    "snapshot_date", pa.array([bad_day] * table.num_rows,
                                                              pa.date32()))
        return read(root, day, provider)

    monkeypatch.setattr(lake, "read_partition", reader)
    con = _warehouse(settings, "w.duckdb")
    loaded, failed = load_steps.load_days(settings, con, keys)
    assert list(failed) == [(bad_day, bad_provider)]
    assert "rows carry another provider" in str(failed[(bad_day, bad_provider)])
    assert set(loaded) == set(keys) - {(bad_day, bad_provider)}
    held = set(con.execute("SELECT snapshot_date, provider FROM snapshot_dates").fetchall())
    stamped = set(con.execute("SELECT snapshot_date, provider FROM lake_loads").fetchall())
    assert held == stamped == set(keys) - {(bad_day, bad_provider)}
    # The bad day stays pending: the next run tries it again.
    assert [(d, p) for d, p, _, _ in lake_sync.pending(con, settings.lake_root)] == [
        (bad_day, bad_provider)]


# The views a reader sees (numbers left out: offers are numbered in load order).
VIEWS = {
    "offers": STORED["offers"],
    "snapshot_dates": STORED["snapshot_dates"],
    "price_changes": "SELECT * FROM price_changes ORDER BY ALL",
    "offer_history": "SELECT * FROM offer_history ORDER BY ALL",
    "cheapest_daily": "SELECT * FROM cheapest_daily ORDER BY ALL",
    "provider_snapshots": "SELECT * FROM provider_snapshots ORDER BY ALL",
}


def test_gpuprices_load_rebuilds_in_bulk_what_incremental_loads_build(settings, monkeypatch):
    keys = sorted(_keys(settings))  # the nights in date order
    assert len({d.replace(day=1) for d, _ in keys}) >= 2  # batches of a month: several
    incremental = _warehouse(settings, "incremental.duckdb")
    for day, provider in keys:
        load_steps.load_day(settings, incremental, day, provider)
    day_by_day = []
    real = store._insert_offers

    def insert(con, day, provider, table):
        day_by_day.append((day, provider))
        return real(con, day, provider, table)

    monkeypatch.setattr(store, "_insert_offers", insert)
    bulk = _warehouse(settings, "bulk.duckdb")
    counts = db.load_lake(bulk, settings.lake_root)  # `gpuprices load`'s path
    assert day_by_day == [] and sorted(counts) == keys
    expected = {name: incremental.execute(sql).fetchall() for name, sql in VIEWS.items()}
    got = {name: bulk.execute(sql).fetchall() for name, sql in VIEWS.items()}
    assert any(got["price_changes"]) and len(got["offers"]) == sum(counts.values())
    for name in VIEWS:
        assert got[name] == expected[name], name

    # The unchanged lake loaded again: nothing stored again, nothing day by day.
    before = _stored(bulk)
    assert db.load_lake(bulk, settings.lake_root) == counts
    assert day_by_day == [] and _stored(bulk) == before

    # A day in the middle rewritten (a reparse that drops a row): that month day by day, and
    # the result is what a fresh bulk rebuild of the rewritten lake gives.
    day, provider = next(k for k in keys[len(keys) // 2:] if counts[k] > 1)
    table = lake.read_partition(settings.lake_root, day, provider)
    lake.write_partition(settings.lake_root, day, provider, table.slice(1))
    db.load_lake(bulk, settings.lake_root)
    assert (day, provider) in day_by_day
    fresh = _warehouse(settings, "fresh.duckdb")
    db.load_lake(fresh, settings.lake_root)
    for name, sql in VIEWS.items():
        assert bulk.execute(sql).fetchall() == fresh.execute(sql).fetchall(), name
