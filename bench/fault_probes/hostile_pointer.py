"""Probes of issue 30 item 9, the "hostile latest.json" class: whoever can write the bucket can
write the pointer `gpuprices pull` follows. On a real S3 server (SeaweedFS on loopback,
tests/s3_server.py), the warehouse of the real Runpod captures (security._warehouse) is
published twice; the analyst pulls the latest, then the pointer is rewritten: to the older copy,
to a lake Parquet object outside the prefix, malformed in each way the issue lists, or naming
bytes that are not what it says. Survived: `pull` exits 1 with one line (no traceback) and the
local warehouse is byte for byte the one pulled before. A pull that replaced it counts as a
wrong warehouse loaded (wrong_loaded = 1)."""

from __future__ import annotations

import atexit
import datetime as dt
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

from bench.fault_probes import Probe, ProbeResult
from tests.conftest import ROOT, manifest_rows
from tests.s3_server import BUCKET, S3Server

T1 = dt.datetime(2026, 10, 1, 6, tzinfo=dt.UTC)
T2 = dt.datetime(2026, 10, 2, 6, tzinfo=dt.UTC)


@functools.cache
def _warehouse() -> Path:
    """A data folder whose warehouse holds the real Runpod captures (snapshots/manifest.csv),
    replayed and loaded in this process, once for every probe here."""
    from gpuprices.flows import loading
    from gpuprices.flows.config import Settings
    from gpuprices.flows.pipeline import steps as pipeline
    from gpuprices.spiders.importer import import_capture, parse_timestamp

    root = Path(tempfile.mkdtemp(prefix="probe-pull-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    for r in manifest_rows("runpod"):
        import_capture(root / "snap", ROOT / r["file"], "runpod", r["url"],
                       parse_timestamp(r["captured_at"]), method=r["method"],
                       origin=r["origin"])
    settings = Settings(data_dir=root / "data", archive_root=root / "snap").ensure()
    with open(os.devnull, "w") as quiet:
        old, sys.stdout = sys.stdout, quiet
        try:
            loading.load(settings, pipeline.replay(settings, "runpod", "all"),
                         pipeline.new_run_id())
        finally:
            sys.stdout = old
    return settings.data_dir


@functools.cache
def _server() -> S3Server:
    root = Path(tempfile.mkdtemp(prefix="probe-s3-"))
    server = S3Server(root).start()
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    atexit.register(server.stop)
    return server


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL_S3")}
    return env | _server().env()


def _gp(*args: object, prefix: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpuprices", *map(str, args)],
                          capture_output=True, text=True, timeout=300,
                          env=_env() | {"GPUPRICES_PUBLISH": prefix})


def _in_process_env():
    """The server's variables in this process too (publish() and the pointer writes)."""
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL_S3"):
        os.environ.pop(name, None)
    os.environ.update(_server().env())


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _copy_name(at: dt.datetime, digest: str) -> str:
    return f"{at:%Y%m%dT%H%M%S}Z-{digest[:12]}.duckdb"


def _hostile(make_pointer):
    """A probe: publish, pull, rewrite the pointer with make_pointer(where, a, b, tmp), pull."""
    def run(tmp: Path) -> ProbeResult:
        from gpuprices.warehouse import objstore, publish
        _in_process_env()
        prefix = f"s3://{BUCKET}/{tmp.name}/shared"
        where = objstore.location(prefix)
        real = _warehouse() / "warehouse.duckdb"
        a = publish.publish(real, where, now=T1)
        b = publish.publish(real, where, now=T2)
        local = tmp / "local.duckdb"
        first = _gp("pull", "--to", local, prefix=prefix)
        if first.returncode != 0:
            return ProbeResult(False, detail=f"the good pull failed: {first.stderr[:80]}")
        before = _sha(local)
        pointer = make_pointer(where, a, b, tmp)
        raw = pointer if isinstance(pointer, bytes) else json.dumps(pointer).encode()
        (where / publish.POINTER).put_replacing(raw, what="probe pointer")
        r = _gp("pull", "--to", local, prefix=prefix)
        same = _sha(local) == before
        ok = r.returncode == 1 and "Traceback" not in r.stderr and same
        line = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
        return ProbeResult(ok, wrong_loaded=0 if same else 1, detail=line[-90:])
    return run


def _fields(p: dict) -> dict:
    return {k: p[k] for k in ("key", "sha256", "size", "published_at")}


def _put(where, name: str, data: bytes):
    from gpuprices.warehouse import publish
    obj = where / publish.COPIES / name
    obj.put(data, expect=None)
    return obj


def _lake_object(where, a, b, tmp):
    """A Parquet object of the lake, outside shared/warehouse/, with its true digest and size."""
    from gpuprices.warehouse import objstore
    data = next((_warehouse() / "lake").rglob("*.parquet")).read_bytes()
    obj = objstore.location(f"s3://{BUCKET}/{tmp.name}/lake/2026-09-30/runpod.parquet")
    obj.put(data, expect=None)
    return _fields(b) | {"key": obj.key, "sha256": hashlib.sha256(data).hexdigest(),
                         "size": len(data)}


def _parquet_as_copy(where, a, b, tmp):
    data = next((_warehouse() / "lake").rglob("*.parquet")).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    at = T2 + dt.timedelta(hours=1)
    obj = _put(where, _copy_name(at, digest), data)
    return {"key": obj.key, "sha256": digest, "size": len(data), "published_at": at.isoformat()}


def _empty_database(where, a, b, tmp):
    path = tmp / "empty.duckdb"
    duckdb.connect(str(path)).close()
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    at = T2 + dt.timedelta(hours=2)
    obj = _put(where, _copy_name(at, digest), data)
    return {"key": obj.key, "sha256": digest, "size": len(data), "published_at": at.isoformat()}


def _bytes_not_the_digest(where, a, b, tmp):
    """A copy-named object whose bytes are not the ones its name and pointer claim."""
    real = (_warehouse() / "warehouse.duckdb").read_bytes()
    claimed = hashlib.sha256(real + b"x").hexdigest()
    at = T2 + dt.timedelta(hours=3)
    obj = _put(where, _copy_name(at, claimed), real)
    return {"key": obj.key, "sha256": claimed, "size": len(real), "published_at": at.isoformat()}


PROBES = [
    Probe("9", "pointer to the older copy (rollback)", _hostile(lambda w, a, b, t: _fields(a))),
    Probe("9", "pointer to a lake Parquet outside shared/", _hostile(_lake_object)),
    Probe("9", "pointer without key",
          _hostile(lambda w, a, b, t: {k: v for k, v in _fields(b).items() if k != "key"})),
    Probe("9", "pointer is a list", _hostile(lambda w, a, b, t: [_fields(b)])),
    Probe("9", "pointer sha256 null", _hostile(lambda w, a, b, t: _fields(b) | {"sha256": None})),
    Probe("9", "pointer key with ..", _hostile(lambda w, a, b, t: _fields(b) | {
        "key": b["key"].replace("/warehouse/", "/warehouse/../warehouse/")})),
    Probe("9", "pointer without size",
          _hostile(lambda w, a, b, t: {k: v for k, v in _fields(b).items() if k != "size"})),
    Probe("9", "pointer size 5 MB (not the object's)",
          _hostile(lambda w, a, b, t: _fields(b) | {"size": 5_000_000})),
    Probe("9", "pointer published_at not the copy's",
          _hostile(lambda w, a, b, t: _fields(a) | {"published_at": "2030-01-01T00:00:00+00:00"})),
    Probe("9", "pointer not JSON", _hostile(lambda w, a, b, t: b"{not json")),
    Probe("9", "copy's bytes not its SHA-256", _hostile(_bytes_not_the_digest)),
    Probe("9", "Parquet bytes under a copy name", _hostile(_parquet_as_copy)),
    Probe("9", "empty DuckDB file under a copy name", _hostile(_empty_database)),
]
