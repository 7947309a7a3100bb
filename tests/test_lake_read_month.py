"""A compacted month's days read together (lake.read_offers_files, what `gpuprices load` reads
the lake with) are the days read one by one, and a damaged month file is refused for each of
its days while the rest loads."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

from gpuprices.warehouse import db, lake, lake_compact
from tests.test_lake_compact import replayed_lake

TODAY = dt.date(2026, 12, 4)  # May 2026 is closed


@pytest.fixture(scope="module")
def compacted(tmp_path_factory):
    """Real AWS days (1-10 May and 1-5 June 2026) and every Nebius capture replayed, then
    compacted."""
    s = replayed_lake(tmp_path_factory.mktemp("readmonth"), ("aws", "nebius"),
                      lambda p, d: p != "aws" or dt.date(2026, 5, 1) <= d <= dt.date(2026, 5, 10)
                      or dt.date(2026, 6, 1) <= d <= dt.date(2026, 6, 5))
    done = lake_compact.compact_lake(s.lake_root, today=TODAY)
    assert any(not r.skipped for r in done)
    return s.lake_root


@pytest.fixture
def lake_root(compacted, tmp_path):
    root = tmp_path / "lake"
    shutil.copytree(compacted, root)
    return root


def test_days_of_a_compacted_file_read_together_equal_each_day_read_alone(compacted):
    parts = lake.list_partitions(compacted)
    held = [path for *_, path in parts if isinstance(path, lake.CompactedDay)]
    assert len({str(p.file) for p in held}) >= 2 and len(held) >= 10
    together = lake.read_offers_files([path for *_, path in parts])
    assert len(together) == len(parts)
    for (day, provider, path), table in zip(parts, together, strict=True):
        alone = lake.read_offers_file(path)
        assert table.schema.equals(alone.schema), (day, provider)
        assert table.to_pylist() == alone.to_pylist(), (day, provider)
        assert set(table.column("snapshot_date").to_pylist()) <= {day}


def test_a_damaged_compacted_file_is_refused_for_each_of_its_days(lake_root, tmp_path):
    _, file = lake.read_manifest(lake_root, "aws", "2026-05")
    data = bytearray(file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    file.write_bytes(bytes(data))
    parts = lake.list_partitions(lake_root)
    aws_may = {d for d, p, path in parts if p == "aws" and isinstance(path, lake.CompactedDay)
               and d.strftime("%Y-%m") == "2026-05"}
    assert len(aws_may) == 10
    got = lake.read_offers_files([path for *_, path in parts])
    for (day, provider, _), table in zip(parts, got, strict=True):
        damaged = (day, provider) in {(d, "aws") for d in aws_may}
        assert isinstance(table, lake.ChecksumError) == damaged, (day, provider)

    con = db.connect(tmp_path / "w.duckdb")
    db.init_schema(con)
    refused: list = []
    loaded = db.load_lake(con, lake_root, refused=refused)
    assert sorted(str(p) for p, _ in refused) == sorted(
        str(path) for d, p, path in parts if p == "aws" and d in aws_may)
    assert all("manifest" in why for _, why in refused)
    assert {(d, p) for d, p in loaded} == {(d, p) for d, p, _ in parts} - {
        (d, "aws") for d in aws_may}
    with pytest.raises(lake.ChecksumError, match="manifest"):
        db.load_lake(con, lake_root)
    con.close()


def test_a_table_named_like_a_bulk_stage_does_not_shadow_the_batch(compacted, tmp_path):
    """The bulk path reads its staging rows (_batch, _in, _rows) from Python by name: a table
    of that name left in the connection must not be read instead, and the scan setting it
    turns on for the batch is back off afterwards."""
    plain = db.connect(":memory:")
    db.init_schema(plain)
    db.load_lake(plain, compacted)
    con = db.connect(tmp_path / "w.duckdb")
    db.init_schema(con)
    for name in ("_batch", "_in", "_rows"):
        con.execute(f"CREATE TEMP TABLE {name} AS SELECT 1 AS x")
    loaded = db.load_lake(con, compacted)
    assert sum(loaded.values()) > 0
    for sql in ("SELECT count(*), sum(price_per_hour) FROM offer_points",
                "SELECT * FROM provider_day_cheapest ORDER BY ALL",
                "SELECT * FROM snapshot_dates ORDER BY ALL"):
        assert con.execute(sql).fetchall() == plain.execute(sql).fetchall(), sql
    assert con.execute("SELECT current_setting('python_scan_all_frames')").fetchall() == [
        (False,)]
    con.close()
    plain.close()
