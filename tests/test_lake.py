"""The Parquet lake: atomic partition writes, replacement, old schemas, quarantine.

Synthetic offers (built with make_offer) are fine here: this tests storage, not parsing."""

import datetime as dt
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpuprices.warehouse import lake
from gpuprices.warehouse.contract import (
    OFFER_COLUMNS,
    CaptureMeta,
    ContractError,
    make_offer,
    offers_to_table,
)

DAY = dt.date(2025, 3, 4)


def _offers(provider="runpod", day=DAY, prices=(2.69, 1.64), gpu_models=None):
    meta = CaptureMeta(
        provider=provider,
        url=f"https://example.test/{provider}",
        captured_at=dt.datetime.combine(day, dt.time(2, 30), tzinfo=dt.UTC),
        sha256="ab" * 32,
    )
    models = gpu_models or ["H100-SXM-80GB"] * len(prices)
    return offers_to_table(
        [
            make_offer(
                meta, sku=f"sku-{i}", gpu_model=model, gpu_count=1, price_per_hour=price,
                pricing_model="on_demand", extra={"gpu_wording": "H100 SXM"},
            )
            for i, (price, model) in enumerate(zip(prices, models, strict=True))
        ]
    )


def _leftovers(root):
    return sorted(p.name for p in root.rglob("*") if p.name.endswith(".part"))


def test_round_trip(tmp_path):
    table = _offers()
    path = lake.write_partition(tmp_path, DAY, "runpod", table)
    assert path == tmp_path / "offers/snapshot_date=2025-03-04/provider=runpod/part-0.parquet"
    back = lake.read_partition(tmp_path, "2025-03-04", "runpod")
    assert back.column_names == list(OFFER_COLUMNS)
    assert back.equals(table)
    assert lake.list_partitions(tmp_path) == [(DAY, "runpod", path)]
    assert _leftovers(tmp_path) == []


def test_list_partitions_sorted_and_empty(tmp_path):
    assert lake.list_partitions(tmp_path) == []
    later = DAY + dt.timedelta(days=1)
    lake.write_partition(tmp_path, later, "lambda", _offers("lambda", later))
    lake.write_partition(tmp_path, DAY, "runpod", _offers())
    lake.write_partition(tmp_path, DAY, "lambda", _offers("lambda"))
    assert [(d, p) for d, p, _ in lake.list_partitions(tmp_path)] == [
        (DAY, "lambda"), (DAY, "runpod"), (later, "lambda"),
    ]


def test_rerun_replaces_partition(tmp_path):
    lake.write_partition(tmp_path, DAY, "runpod", _offers(prices=(2.69, 1.64, 0.44)))
    lake.write_partition(tmp_path, DAY, "runpod", _offers(prices=(2.49,)))
    back = lake.read_partition(tmp_path, DAY, "runpod")
    assert back.column("price_per_hour").to_pylist() == [2.49]
    assert len(lake.list_partitions(tmp_path)) == 1
    assert _leftovers(tmp_path) == []


def test_interrupted_rename_keeps_old_partition(tmp_path, monkeypatch):
    lake.write_partition(tmp_path, DAY, "runpod", _offers(prices=(2.69, 1.64)))

    def crash(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(lake.os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        lake.write_partition(tmp_path, DAY, "runpod", _offers(prices=(9.99,)))
    monkeypatch.undo()
    assert lake.read_partition(tmp_path, DAY, "runpod").column("price_per_hour").to_pylist() == [
        2.69, 1.64,
    ]
    assert _leftovers(tmp_path) == []


def test_writer_dying_mid_file_leaves_no_partial_partition(tmp_path, monkeypatch):
    lake.write_partition(tmp_path, DAY, "runpod", _offers(prices=(2.69,)))
    real_write = pq.write_table

    def half_write(table, where, **kwargs):
        # Write the first half for real, then die as a killed process would.
        real_write(table.slice(0, table.num_rows // 2), where, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(lake.pq, "write_table", half_write)
    other_day = DAY + dt.timedelta(days=1)
    with pytest.raises(KeyboardInterrupt):
        lake.write_partition(tmp_path, DAY, "runpod", _offers(prices=(1.0, 2.0, 3.0, 4.0)))
    with pytest.raises(KeyboardInterrupt):
        lake.write_partition(tmp_path, other_day, "runpod", _offers(day=other_day))
    monkeypatch.undo()
    # The old partition is whole, the new day never became visible, no temp files remain.
    assert lake.read_partition(tmp_path, DAY, "runpod").column("price_per_hour").to_pylist() == [
        2.69,
    ]
    assert [(d, p) for d, p, _ in lake.list_partitions(tmp_path)] == [(DAY, "runpod")]
    assert _leftovers(tmp_path) == []


def test_stale_part_file_from_killed_writer_is_invisible_then_swept(tmp_path):
    folder = lake.partition_path(tmp_path, DAY, "runpod").parent
    folder.mkdir(parents=True)
    stale = folder / ".part-0.parquet.deadbeef.part"
    stale.write_bytes(b"PAR1 half a file")
    assert lake.list_partitions(tmp_path) == []
    lake.write_partition(tmp_path, DAY, "runpod", _offers())
    assert not stale.exists()
    assert len(lake.list_partitions(tmp_path)) == 1


def test_contract_breaking_rows_are_refused_before_writing(tmp_path):
    unmapped = _offers(prices=(2.69, 1.64), gpu_models=["H100-SXM-80GB", None])
    with pytest.raises(ContractError, match="gpu_model null"):
        lake.write_partition(tmp_path, DAY, "runpod", unmapped)
    with pytest.raises(ContractError, match="another provider"):
        lake.write_partition(tmp_path, DAY, "lambda", _offers("runpod"))
    with pytest.raises(ContractError, match="another snapshot_date"):
        lake.write_partition(tmp_path, DAY + dt.timedelta(days=1), "runpod", _offers())
    with pytest.raises(ContractError, match="unknown provider"):
        lake.write_partition(tmp_path, DAY, "../etc", _offers())
    assert lake.list_partitions(tmp_path) == []


def test_old_schema_file_still_loads(tmp_path):
    table = _offers()
    old = table.drop_columns(["available", "extra", "min_billing_s"])
    path = lake.partition_path(tmp_path, DAY, "runpod")
    path.parent.mkdir(parents=True)
    pq.write_table(old, path)
    back = lake.read_partition(tmp_path, DAY, "runpod")
    assert back.column_names == list(OFFER_COLUMNS)
    assert back.column("extra").to_pylist() == [None, None]
    assert back.column("price_per_hour").to_pylist() == [2.69, 1.64]


def test_quarantine_round_trip_with_unmapped_gpu(tmp_path):
    parsed = _offers(prices=(2.69, 0.79), gpu_models=["H100-SXM-80GB", None])
    good, bad = lake.split_unmapped(parsed)
    assert good.num_rows == 1 and bad.num_rows == 1
    lake.write_partition(tmp_path, DAY, "runpod", good)
    path = lake.write_quarantine(tmp_path, DAY, "runpod", bad)
    assert path == tmp_path / "quarantine/snapshot_date=2025-03-04/provider=runpod/part-0.parquet"
    back = lake.read_quarantine(tmp_path, DAY, "runpod")
    assert back.column("reason").to_pylist() == ["unmapped gpu wording"]
    assert back.column("gpu_model").to_pylist() == [None]
    assert back.column("price_per_hour").to_pylist() == [0.79]
    assert lake.list_quarantine(tmp_path) == [(DAY, "runpod", path)]
    # Quarantine never shows up as offers.
    assert [p for _, _, p in lake.list_partitions(tmp_path)] == [
        lake.partition_path(tmp_path, DAY, "runpod")
    ]
    # A clean rerun clears the day's quarantine.
    lake.write_quarantine(tmp_path, DAY, "runpod", bad.slice(0, 0))
    assert lake.read_quarantine(tmp_path, DAY, "runpod").num_rows == 0


def test_quarantine_needs_reasons(tmp_path):
    table = _offers(prices=(2.69, 1.0))
    with pytest.raises(ContractError, match="reason"):
        lake.write_quarantine(tmp_path, DAY, "runpod", table)
    with pytest.raises(ValueError, match="1 reasons for 2 rows"):
        lake.with_reason(table, ["price below cost"])
    partial = pa.table({"sku": ["x"], "reason": ["no price column at all"]})
    lake.write_quarantine(tmp_path, DAY, "runpod", partial)
    back = lake.read_quarantine(tmp_path, DAY, "runpod")
    assert back.column("sku").to_pylist() == ["x"]
    assert back.column("price_per_hour").to_pylist() == [None]


def test_fsync_is_called_on_file_and_folder(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(lake.os, "fsync", lambda fd: synced.append(fd) or real(fd))
    lake.write_partition(tmp_path, DAY, "runpod", _offers())
    assert len(synced) == 3  # the file, its recorded checksum, the folder
