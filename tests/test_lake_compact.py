"""Compacting closed months of the lake (warehouse/lake_compact.py), on real replayed captures:
every row kept, the warehouse answering the same without reloading, and a compaction killed
after any of its steps leaving a lake that reads the same, which a rerun finishes: on disk and
on a real S3 server (SeaweedFS, tests/s3_server.py)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil

import pyarrow as pa
import pytest

from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import list_archives
from gpuprices.warehouse import db, lake, lake_compact, lake_sync, objstore
from tests.conftest import ROOT
from tests.objstore_cli import gp
from tests.test_bulk_load import STORED

TODAY = dt.date(2026, 12, 4)  # every bundled month below is closed by then
# AWS's bundled captures are daily over May and June 2026; the lake here takes the days across
# the month boundary: two closed months of several day files each, as all 60 days gave, for
# 12 s of this module's CPU instead of 17 (every test copies, uploads or reads the lake).
AWS_FROM, AWS_TO = dt.date(2026, 5, 20), dt.date(2026, 6, 12)
# The archived AWS days in that span (2026-05-26 was never captured): 23, 12 of them in June.
AWS_DAYS = sorted(d for d, p, _ in list_archives(ROOT / "snapshots")
                  if p == "aws" and AWS_FROM <= d <= AWS_TO)
JUNE_DAYS = len([d for d in AWS_DAYS if d.month == 6])
STEPS = ("written", "verified", "switched", "deleted")
# The warehouse's answers; lake_loads stamps included: compaction must not change them.
ANSWERS = STORED


def replayed_lake(base, providers, keep) -> Settings:
    """The real bundled captures of `providers` on the days `keep(provider, day)` takes, parsed,
    checked and written into a lake under `base`."""
    s = Settings(base / "data", ROOT / "snapshots").ensure()
    for p in providers:
        days = [d for d, _, _ in pipeline.archives(s, [p]) if keep(p, d)]
        results = pipeline.reparse(s, p, days)
        assert results and all(r.status != "failed" for r in results), results
    return s


@pytest.fixture(scope="module")
def built_lake(tmp_path_factory):
    """The real bundled captures of AWS (daily: AWS_FROM to AWS_TO, across May and June
    2026), Nebius and Runpod (a few days spread over years) replayed into a lake."""
    return replayed_lake(tmp_path_factory.mktemp("compact"), ("aws", "nebius", "runpod"),
                         lambda p, d: p != "aws" or AWS_FROM <= d <= AWS_TO).lake_root


@pytest.fixture
def lake_root(built_lake, tmp_path):
    root = tmp_path / "lake"
    shutil.copytree(built_lake, root)
    return root


def _contents(root) -> dict:
    """What a reader of the lake sees: every (day, provider) with its rows."""
    parts = lake.list_partitions(root)
    keys = [(d, p) for d, p, _ in parts]
    assert len(keys) == len(set(keys)), "a day listed twice"
    return {(d, p): lake.read_offers_file(path).to_pylist() for d, p, path in parts}


def _files(root) -> list:
    if objstore.is_remote(root):
        return sorted(str(p) for p, _ in objstore.location(root).walk())
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _answers(db_path, lake_root) -> dict:
    con = db.connect(db_path)
    try:
        db.init_schema(con)
        if not con.execute("SELECT count(*) FROM lake_loads").fetchone()[0]:
            counts = db.load_lake(con, lake_root)
            lake_sync.record_loaded(con, lake_root, list(counts))
        assert lake_sync.pending(con, lake_root) == []
        return {name: con.execute(sql).fetchall() for name, sql in ANSWERS.items()}
    finally:
        con.close()


def test_compaction_keeps_every_row_and_the_warehouse_answers_the_same(lake_root, tmp_path):
    before, files_before = _contents(lake_root), _files(lake_root)
    answers = _answers(tmp_path / "w.duckdb", lake_root)

    done = lake_compact.compact_lake(lake_root, today=TODAY)

    folded = {(r.provider, r.month) for r in done if not r.skipped}
    assert {("aws", "2026-05"), ("aws", "2026-06")} <= folded
    assert _contents(lake_root) == before
    day_files = [f for f in _files(lake_root) if f.startswith("offers/snapshot_date=2026-0")]
    assert not [f for f in day_files if "provider=aws" in f]
    # A day file and its checksum per AWS day -> a file, its checksum and a manifest a month.
    assert len(_files(lake_root)) < len(files_before) - len(AWS_DAYS)
    # The warehouse loaded before compaction sees nothing to reload (pending() is asserted
    # empty), and one rebuilt from the compacted lake answers the same, stamps included.
    assert _answers(tmp_path / "w.duckdb", lake_root) == answers
    assert _answers(tmp_path / "rebuilt.duckdb", lake_root) == answers
    # A second run has nothing left to do and changes nothing.
    files = _files(lake_root)
    assert [r for r in lake_compact.compact_lake(lake_root, today=TODAY) if not r.skipped] == []
    assert _files(lake_root) == files


def test_the_manifest_keeps_each_day_file_checksum(lake_root):
    day = dt.date(2026, 6, 3)
    own = lake.partition_path(lake_root, day, "aws")
    digest = hashlib.sha256(own.read_bytes()).hexdigest()
    lake_compact.compact_lake(lake_root, months=["2026-06"], today=TODAY)
    manifest, file = lake.read_manifest(lake_root, "aws", "2026-06")
    assert manifest["days"][day.isoformat()]["sha256"] == digest
    assert manifest["sha256"] == hashlib.sha256(file.read_bytes()).hexdigest()
    assert lake.checksum_path(file).read_text().split()[0] == manifest["sha256"]
    assert len(manifest["days"]) == JUNE_DAYS and manifest["rows"] == sum(
        d["rows"] for d in manifest["days"].values())


@pytest.mark.parametrize("step", STEPS)
def test_killed_after_each_step_the_lake_reads_the_same_and_a_rerun_finishes(lake_root, step):
    before = _contents(lake_root)

    def kill(done: str) -> None:
        if done == step:
            raise KeyboardInterrupt(f"killed after {done}")

    with pytest.raises(KeyboardInterrupt):
        lake_compact.compact_lake(lake_root, today=TODAY, hook=kill)
    assert _contents(lake_root) == before  # no day twice, none missing

    lake_compact.compact_lake(lake_root, today=TODAY)
    assert _contents(lake_root) == before
    # Finished: June's day files gone, one compacted file named by the manifest, no leftover.
    folder = lake.month_folder(lake_root, "aws", "2026-06")
    manifest, file = lake.read_manifest(lake_root, "aws", "2026-06")
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [lake.MANIFEST, file.name, lake.checksum_path(file).name])
    assert not list((lake_root / "offers").glob("snapshot_date=2026-06-*"))


def test_a_day_rewritten_after_compaction_is_read_from_its_own_file_then_folded_in(lake_root):
    lake_compact.compact_lake(lake_root, months=["2026-06"], today=TODAY)
    day = dt.date(2026, 6, 10)
    rows = lake.read_partition(lake_root, day, "aws")
    assert rows.num_rows >= 1
    cheaper = rows.to_pylist()
    for r in cheaper:  # a parser fix changing a price (synthetic: the change itself)
        r["price_per_hour"] /= 2
        r["price_per_gpu_hour"] /= 2
    table = pa.Table.from_pylist(cheaper, schema=rows.schema)
    lake.write_partition(lake_root, day, "aws", table)

    seen = _contents(lake_root)
    assert seen[(day, "aws")] == table.to_pylist()  # the newer file, and only it
    lake_compact.compact_lake(lake_root, months=["2026-06"], today=TODAY)
    assert _contents(lake_root) == seen
    assert not lake.partition_path(lake_root, day, "aws").exists()


def test_a_damaged_compacted_file_is_refused(lake_root):
    lake_compact.compact_lake(lake_root, months=["2026-05"], today=TODAY)
    _, file = lake.read_manifest(lake_root, "aws", "2026-05")
    data = bytearray(file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    file.write_bytes(bytes(data))
    with pytest.raises(lake.ChecksumError, match="manifest"):
        lake.read_partition(lake_root, dt.date(2026, 5, 27), "aws")


def test_an_open_month_is_not_compacted(lake_root):
    with pytest.raises(ValueError, match="not over"):
        lake_compact.compact_lake(lake_root, months=["2026-06"], today=dt.date(2026, 6, 30))
    done = lake_compact.compact_lake(lake_root, today=dt.date(2026, 6, 30))
    assert ("aws", "2026-05") in {(r.provider, r.month) for r in done}
    assert "2026-06" not in {r.month for r in done}
    assert lake.partition_path(lake_root, dt.date(2026, 6, 1), "aws").exists()


def test_compact_lake_command(lake_root, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.move(lake_root, data / "lake")
    # In this process (tests/objstore_cli.py): the command's answer is what is checked.
    cmd = ["compact-lake", "--data-dir", str(data), "--month", "2026-05", "--month", "2026-06"]
    first = gp(*cmd, env={})
    assert first.returncode == 0, first.stderr
    assert f"2 provider-months compacted, {len(AWS_DAYS)} day files folded in" in first.stdout
    again = gp(*cmd, env={})
    assert "0 provider-months compacted" in again.stdout
    manifest = json.loads((data / "lake/offers/snapshot_month=2026-06/provider=aws"
                           / lake.MANIFEST).read_text())
    assert len(manifest["days"]) == JUNE_DAYS


# -- on object storage -------------------------------------------------------------------------

def _upload(local_root, remote_root: str) -> None:
    """AWS's June day files into the store, each with its checksum, as the pipeline writes."""
    for day, provider, path in lake.list_partitions(local_root):
        if provider == "aws" and day.month == 6:
            data = path.read_bytes()
            lake.partition_path(remote_root, day, provider).put(
                data, expect=None,
                metadata={lake.CHECKSUM_METADATA: hashlib.sha256(data).hexdigest()})


@pytest.mark.parametrize("step", STEPS)
def test_on_the_store_killed_after_each_step_then_rerun_same_data(built_lake, s3, step,
                                                                 tmp_path):
    root = f"{s3}/lake"
    _upload(built_lake, root)
    before = _contents(root)
    assert len(before) == JUNE_DAYS
    answers = _answers(tmp_path / "w.duckdb", root)

    def kill(done: str) -> None:
        if done == step:
            raise KeyboardInterrupt(f"killed after {done}")

    with pytest.raises(KeyboardInterrupt):
        lake_compact.compact_lake(root, today=TODAY, hook=kill)
    assert _contents(root) == before

    lake_compact.compact_lake(root, today=TODAY)
    assert _contents(root) == before
    manifest, file = lake.read_manifest(root, "aws", "2026-06")
    prefix = f"{root}/offers/"
    assert [f.removeprefix(prefix) for f in _files(root)] == sorted(
        [f"snapshot_month=2026-06/provider=aws/{lake.MANIFEST}",
         f"snapshot_month=2026-06/provider=aws/{file.name}"])
    # The warehouse loaded from the day objects has nothing to reload; a rebuild from the
    # compacted store answers the same.
    assert _answers(tmp_path / "w.duckdb", root) == answers
    assert _answers(tmp_path / "rebuilt.duckdb", root) == answers


def test_on_the_store_a_second_compaction_racing_the_switch_is_told(built_lake, s3,
                                                                   monkeypatch):
    root = f"{s3}/lake"
    _upload(built_lake, root)
    before = _contents(root)
    real_put = objstore.StorePath.put

    def other_compaction_first(self, data, **kwargs):
        if self.name == lake.MANIFEST:
            real_put(self, b'{"days": {}, "file": "x", "sha256": ""}', expect=False)
        return real_put(self, data, **kwargs)

    with monkeypatch.context() as m, pytest.raises(objstore.ConflictError):
        m.setattr(objstore.StorePath, "put", other_compaction_first)
        lake_compact.compact_month(root, "aws", "2026-06")
    # The day objects were not deleted by the loser.
    assert all(lake.partition_path(root, d, "aws").exists() for d, _ in before)


def test_on_the_store_the_partitions_come_from_one_listing(built_lake, s3, monkeypatch):
    # The day objects and the compacted months' manifests are found by one LIST of the offers
    # area (each request costs 20-50 ms on S3), a day with its own object still shadowing its
    # row group in the compacted month.
    root = f"{s3}/lake"
    _upload(built_lake, root)
    lake_compact.compact_lake(root, today=TODAY)
    rewritten = dt.date(2026, 6, 10)
    data = lake.partition_path(built_lake, rewritten, "aws").read_bytes()
    lake.partition_path(root, rewritten, "aws").put(
        data, expect=None, metadata={lake.CHECKSUM_METADATA: hashlib.sha256(data).hexdigest()})
    listed = []
    real_list = objstore.obstore.list

    def counted(store, *args, **kwargs):
        listed.append(kwargs.get("prefix"))
        return real_list(store, *args, **kwargs)

    monkeypatch.setattr(objstore.obstore, "list", counted)
    parts = lake.list_partitions(root)
    assert len(listed) == 1 and listed[0].endswith("lake/offers/")
    assert [(d, p) for d, p, _ in parts] == [(dt.date(2026, 6, n), "aws")
                                             for n in range(1, JUNE_DAYS + 1)]
    assert [d for d, _, path in parts if not isinstance(path, lake.CompactedDay)] == [rewritten]
    listed.clear()
    objects = lake.partition_objects(root)
    assert len(listed) == 1
    assert [(d, p, path) for d, p, path, _ in objects] == parts
    assert [d for d, _, _, info in objects if info is not None] == [rewritten]
