"""`pull` trusts nothing it cannot check (issue 30, item 9), against the real S3 server the suite
uses (SeaweedFS on loopback, tests/s3_server.py): a pointer outside the published prefix, an
older copy, a size or digest that is not the bytes fetched, a file that is not a warehouse, and
every malformed pointer are refused with a clear error and the local file is left as it was."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpuprices.warehouse import db, objstore, publish
from gpuprices.warehouse.contract import CaptureMeta, make_offer, offers_to_table
from tests.objstore_cli import gp

T1 = dt.datetime(2026, 10, 1, 6, tzinfo=dt.UTC)
T2 = dt.datetime(2026, 10, 2, 6, tzinfo=dt.UTC)


# The command line in this process (tests/objstore_cli.py): its answers are what is checked.
_gp = gp


def _warehouse(path: Path, day: dt.date) -> Path:
    """A closed warehouse holding one synthetic offer on `day`."""
    con = db.connect(str(path))
    db.init_schema(con)
    meta = CaptureMeta("runpod", "https://example.test/runpod",
                       dt.datetime.combine(day, dt.time(3), tzinfo=dt.UTC))
    db.load_partition(con, day, "runpod", offers_to_table([make_offer(
        meta, sku="H100 SXM", gpu_model="H100-SXM-80GB", gpu_count=1, price_per_hour=2.69,
        pricing_model="on_demand")]))
    con.close()
    return path


def _newest(path: Path) -> dt.date:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT max(snapshot_date) FROM snapshot_dates").fetchone()[0]
    finally:
        con.close()


@pytest.fixture
def published(s3, tmp_path):
    """Two publications under <s3>/shared: A (2026-09-29 data, T1) and B (2026-09-30, T2, the
    latest); returns (where, pointer A, pointer B)."""
    where = objstore.location(f"{s3}/shared")
    a = publish.publish(_warehouse(tmp_path / "a.duckdb", dt.date(2026, 9, 29)), where, now=T1)
    b = publish.publish(_warehouse(tmp_path / "b.duckdb", dt.date(2026, 9, 30)), where, now=T2)
    return where, a, b


def _point(where, pointer) -> None:
    raw = pointer if isinstance(pointer, bytes) else json.dumps(pointer).encode()
    (where / publish.POINTER).put_replacing(raw, what="test pointer")


def _fields(p: dict) -> dict:
    return {k: p[k] for k in ("key", "sha256", "size", "published_at")}


def test_pull_never_goes_back_without_allow_older(published, tmp_path):
    where, a, b = published
    local = tmp_path / "pulled.duckdb"
    assert publish.pull(where, local)["key"] == b["key"]
    assert _newest(local) == dt.date(2026, 9, 30)
    # The pointer rewritten to the older copy, with its own (true) digest and size: refused.
    _point(where, _fields(a))
    with pytest.raises(publish.PublishError, match="not going backwards without --allow-older"):
        publish.pull(where, local)
    assert _newest(local) == dt.date(2026, 9, 30)
    # Without the pull record, the local warehouse's own newest snapshot still guards it.
    publish.pulled_record(local).unlink()
    with pytest.raises(publish.PublishError, match=r"older than the warehouse .* \(2026-09-30\)"):
        publish.pull(where, local)
    # Asked for, it goes back.
    assert publish.pull(where, local, allow_older=True)["key"] == a["key"]
    assert _newest(local) == dt.date(2026, 9, 29)


def test_pull_cli_refuses_a_rollback_and_says_so(published, tmp_path, s3):
    where, a, _b = published
    env = {"GPUPRICES_PUBLISH": f"{s3}/shared"}
    local = tmp_path / "pulled.duckdb"
    r = _gp("pull", "--to", str(local), env=env)
    assert r.returncode == 0 and "fetched" in r.stdout and "opened as a warehouse" in r.stdout
    before = local.read_bytes()
    _point(where, _fields(a))
    r = _gp("pull", "--to", str(local), env=env)
    assert r.returncode == 1 and "--allow-older" in r.stderr and "Traceback" not in r.stderr
    assert local.read_bytes() == before
    r = _gp("pull", "--to", str(local), "--allow-older", env=env)
    assert r.returncode == 0, r.stderr
    assert hashlib.sha256(local.read_bytes()).hexdigest() == a["sha256"]


def _parquet_bytes(tmp_path) -> bytes:
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"price": [2.69] * 500}), path)
    return path.read_bytes()


def test_pull_refuses_every_malformed_or_hostile_pointer(published, tmp_path, s3):
    """Each case through the command line: exit 1, one clear line, no traceback, the local
    warehouse untouched."""
    where, _a, b = published
    env = {"GPUPRICES_PUBLISH": f"{s3}/shared"}
    local = tmp_path / "pulled.duckdb"
    assert _gp("pull", "--to", str(local), env=env).returncode == 0
    before = local.read_bytes()
    # A lake Parquet object outside shared/warehouse/, with its true digest and size.
    data = _parquet_bytes(tmp_path)
    lake_key = objstore.location(f"{s3}/lake/2026-09-30/runpod.parquet")
    lake_key.put(data, expect=None)
    digest = hashlib.sha256(data).hexdigest()
    # The same bytes under a well-formed copy name inside the prefix: not a DuckDB file.
    f_at = T2 + dt.timedelta(hours=1)
    fake = where / publish.COPIES / f"{f_at:%Y%m%dT%H%M%S}Z-{digest[:12]}.duckdb"
    fake.put(data, expect=None)
    # A DuckDB file that is not a warehouse (no tables), named and digested as a copy.
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    e_data = empty.read_bytes()
    e_digest = hashlib.sha256(e_data).hexdigest()
    e_at = T2 + dt.timedelta(hours=2)
    e_copy = where / publish.COPIES / f"{e_at:%Y%m%dT%H%M%S}Z-{e_digest[:12]}.duckdb"
    e_copy.put(e_data, expect=None)
    good = _fields(b)
    cases = {
        "outside the prefix": (good | {"key": lake_key.key, "sha256": digest,
                                       "size": len(data)}, "is not a copy directly under"),
        "no key": ({k: v for k, v in good.items() if k != "key"}, "no `key`"),
        "a list": ([good], "a JSON object is expected, not list"),
        "sha256 null": (good | {"sha256": None}, "sha256 None is not 64 hexadecimal"),
        "dot-dot": (good | {"key": b["key"].replace("/warehouse/", "/warehouse/../warehouse/")},
                    "is not a copy directly under"),
        "no size": ({k: v for k, v in good.items() if k != "size"}, "size None is not"),
        "size not the object's": (good | {"size": 5_000_000}, "bytes where"),
        "digest not the bytes'": (good | {"sha256": b["sha256"][:12] + "0" * 52},
                                  "differs from"),
        "not json": (b"{not json", "not a pointer"),
        "published_at not the name's": (good | {"published_at": "2030-01-01T00:00:00+00:00"},
                                        "is not the time in the copy's name"),
        "parquet as a copy": ({"key": fake.key, "sha256": digest, "size": len(data),
                               "published_at": (T2 + dt.timedelta(hours=1)).isoformat()},
                              "not a DuckDB warehouse"),
        "an empty database": ({"key": e_copy.key, "sha256": e_digest, "size": len(e_data),
                               "published_at": e_at.isoformat()},
                              "not a gpuprices warehouse of this version: no table"),
    }
    for name, (pointer, says) in cases.items():
        _point(where, pointer)
        r = _gp("pull", "--to", str(local), env=env)
        assert r.returncode == 1, (name, r.stdout)
        assert says in r.stderr and "Traceback" not in r.stderr, (name, r.stderr)
        assert local.read_bytes() == before, name
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")], name
