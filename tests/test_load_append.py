"""A load keeps what the warehouse already holds (warehouse/store.py `_known_snapshots`): an
hourly provider's day file one crawl later appends only its new snapshot, the same file loaded
again changes nothing, and anything else (an earlier snapshot changed, a snapshot inserted
before the latest) replaces the day as before. Each outcome is compared with a fresh warehouse
loading the same lake file whole.

Replays Hyperbolic's real rental-options answer (a marketplace, crawled hourly) as crawls of the
day it was captured: at its real capture time, then an hour later with one price changed (the
only synthetic part: the real answer was captured once), as tests/test_intraday.py does."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import provider_classes
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import Capture, append_captures
from gpuprices.warehouse import db, lake, store
from tests.conftest import FIXTURES, manifest_rows
from tests.warehouse_rows import STORED_TABLES

ROW = next(r for r in manifest_rows("hyperbolic") if "rental_options" in r["file"])
BODY = (FIXTURES / "raw" / "hyperbolic" / "cgi_hyperbolic_rental_options.json").read_bytes()
FIRST = dt.datetime.fromisoformat(ROW["captured_at"].replace("Z", "+00:00"))  # the real time
SECOND = FIRST + dt.timedelta(hours=1)
THIRD = FIRST + dt.timedelta(hours=2)
DAY = FIRST.date()

# Every stored table, numbers included, and the main views.
STORED = STORED_TABLES
VIEWS = {
    name: f"SELECT * EXCLUDE (extra), extra::VARCHAR FROM {name} ORDER BY ALL"  # noqa: S608
    for name in ("offers", "latest_offers")
} | {name: f"SELECT * FROM {name} ORDER BY ALL"  # noqa: S608
     for name in ("price_changes", "offer_history", "cheapest_daily", "provider_snapshots")}


def _changed_body(cents: int) -> bytes:
    """The real answer with its first enabled option's price lowered by `cents`."""
    doc = json.loads(BODY)
    option = next(o for o in doc if o.get("enabled"))
    option["costPerHourCents"] -= cents
    return json.dumps(doc).encode()


def _capture(body: bytes, at: dt.datetime) -> Capture:
    return Capture(provider="hyperbolic", url=ROW["url"], method="GET", body=body, captured_at=at,
                   headers=[("Content-Type", "application/json")])


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", archive_root=tmp_path / "snap").ensure()


def _crawl(settings: Settings, body: bytes, at: dt.datetime, run_id: str) -> None:
    """One hourly run: the crawl archived, the day replayed into the lake and loaded."""
    append_captures(settings.archive_root, [_capture(body, at)])
    results = pipeline.replay(settings, "hyperbolic", DAY.isoformat())
    assert [r.status for r in results] == ["ok"], [r.errors for r in results]
    loading.load(settings, results, run_id)


def _read(con, queries):
    return {name: con.execute(sql).fetchall() for name, sql in queries.items()}


def _fresh(tmp_path, table: pa.Table, name: str):
    """A fresh warehouse holding `table` loaded whole."""
    con = db.connect(tmp_path / name)
    db.init_schema(con)
    provider_classes.store(con)  # as every run's load does (latest_offers.supply)
    db.load_partition(con, DAY, "hyperbolic", table)
    return con


def _no_replace(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("the provider-day was replaced, not appended to")

    monkeypatch.setattr(store, "_store_partition", refuse)


def test_the_next_crawl_appends_only_its_snapshot(settings, tmp_path, monkeypatch):
    _crawl(settings, BODY, FIRST, "first")
    con = db.connect(settings.db_path)
    first_captures = _read(con, {"c": STORED["offer_captures"]})["c"]
    con.close()

    _no_replace(monkeypatch)  # the second crawl must take the append path
    doc_old = next(o for o in json.loads(BODY) if o.get("enabled"))["costPerHourCents"]
    _crawl(settings, _changed_body(30), SECOND, "second")
    monkeypatch.undo()

    table = lake.read_partition(settings.lake_root, DAY, "hyperbolic")
    assert sorted(set(table.column("snapshot_at").to_pylist())) == [FIRST, SECOND]
    con = db.connect(settings.db_path)
    got = _read(con, STORED | VIEWS)
    # The move within the day is a change, between the two hourly snapshots.
    assert {(r[0], r[1]) for r in con.execute(
        "SELECT old_at, new_at FROM price_changes WHERE provider = 'hyperbolic'").fetchall()} \
        == {(FIRST, SECOND)}
    assert {r[0] for r in con.execute(
        "SELECT old_price_per_hour FROM price_changes WHERE provider = 'hyperbolic'"
    ).fetchall()} == {doc_old / 100}
    # The first crawl's rows were kept, not stored again: its captures keep their numbers.
    assert got["offer_captures"][:len(first_captures)] == first_captures
    con.close()

    # The same warehouse as loading the day's two-snapshot file whole (numbers aside: offers,
    # details and captures are numbered in load order).
    ref = _fresh(tmp_path, table, "ref.duckdb")
    expected = _read(ref, STORED | VIEWS)
    ref.close()
    for name in VIEWS:
        assert got[name] == expected[name], name
    assert got["snapshot_dates"] == expected["snapshot_dates"]
    for name in STORED:
        assert len(got[name]) == len(expected[name]), name


def test_loading_the_same_hour_twice_changes_nothing(settings, monkeypatch):
    _crawl(settings, BODY, FIRST, "first")
    _crawl(settings, _changed_body(30), SECOND, "second")
    con = db.connect(settings.db_path)
    before = _read(con, STORED | VIEWS)
    table = lake.read_partition(settings.lake_root, DAY, "hyperbolic")
    _no_replace(monkeypatch)
    for _ in range(2):  # by the store, and by `gpuprices load`'s path
        assert db.load_partition(con, DAY, "hyperbolic", table) == table.num_rows
        assert db.load_lake(con, settings.lake_root) == {(DAY, "hyperbolic"): table.num_rows}
    assert _read(con, STORED | VIEWS) == before
    con.close()
    monkeypatch.undo()
    _crawl(settings, _changed_body(30), SECOND, "again")  # the whole run, the same hour again
    con = db.connect(settings.db_path)
    assert _read(con, STORED | VIEWS) == before
    con.close()


def _with_price(table: pa.Table, at: dt.datetime, factor: float) -> pa.Table:
    """`table` with the prices of the snapshot taken `at` multiplied by `factor`."""
    hit = pc.equal(table.column("snapshot_at"), pa.scalar(at, table.schema.field(
        "snapshot_at").type))
    for name in ("price_per_hour", "price_per_gpu_hour"):
        col = table.column(name)
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pc.if_else(hit, pc.multiply(col, factor), col))
    return table


@pytest.mark.parametrize("change", ["earlier snapshot changed", "snapshot before the latest"])
def test_a_day_that_is_no_append_is_replaced_whole(settings, tmp_path, change):
    _crawl(settings, BODY, FIRST, "first")
    _crawl(settings, _changed_body(30), THIRD, "third")
    table = lake.read_partition(settings.lake_root, DAY, "hyperbolic")
    if change == "earlier snapshot changed":  # a reparse that reads the first crawl anew
        table = _with_price(table, FIRST, 0.5)
    else:  # a crawl between the two, archived late
        middle = _with_price(table.filter(pc.equal(
            table.column("snapshot_at"), pa.scalar(FIRST, table.schema.field(
                "snapshot_at").type))), FIRST, 0.9)
        at = pa.repeat(pa.scalar(SECOND, table.schema.field("snapshot_at").type),
                       middle.num_rows)
        for name in ("captured_at", "snapshot_at"):
            middle = middle.set_column(middle.schema.get_field_index(name), name, at)
        table = pa.concat_tables([table, middle.cast(table.schema)])
    con = db.connect(settings.db_path)
    db.load_partition(con, DAY, "hyperbolic", table)
    got = _read(con, VIEWS | {"snapshot_dates": STORED["snapshot_dates"]})
    con.close()
    ref = _fresh(tmp_path, table, "ref.duckdb")
    expected = _read(ref, VIEWS | {"snapshot_dates": STORED["snapshot_dates"]})
    ref.close()
    assert got == expected
    assert len(got["snapshot_dates"]) == (2 if change == "earlier snapshot changed" else 3)


def test_a_later_day_stored_makes_a_grown_day_a_replacement(settings, tmp_path):
    """An earlier day gaining a snapshot after the provider's next day is stored is no append:
    the next day's first points must follow the new snapshot (replaced, history relinked)."""
    _crawl(settings, BODY, FIRST, "first")
    later = lake.read_partition(settings.lake_root, DAY, "hyperbolic")
    next_day = DAY + dt.timedelta(days=1)
    at = dt.datetime.combine(next_day, FIRST.timetz())
    moved = later
    for name, value in (("snapshot_date", next_day), ("captured_at", at), ("snapshot_at", at)):
        moved = moved.set_column(moved.schema.get_field_index(name), name, pa.repeat(
            pa.scalar(value, moved.schema.field(name).type), moved.num_rows))
    con = db.connect(settings.db_path)
    db.load_partition(con, next_day, "hyperbolic", moved)
    _crawl(settings, _changed_body(30), SECOND, "second")
    got = _read(con := db.connect(settings.db_path), VIEWS)
    con.close()
    ref = db.connect(tmp_path / "ref.duckdb")
    db.init_schema(ref)
    provider_classes.store(ref)
    db.load_partition(ref, DAY, "hyperbolic", lake.read_partition(settings.lake_root, DAY,
                                                                   "hyperbolic"))
    db.load_partition(ref, next_day, "hyperbolic", moved)
    assert got == _read(ref, VIEWS)
    ref.close()
