"""Load time of the same lake from local disk and from an S3-compatible store, in one run.

    .venv/bin/python bench/load_from_store.py [--store s3://bucket/prefix] [--repeat 3]

1. Every bundled snapshot (snapshots/) is parsed into a lake on local disk
(gpuprices.flows.pipeline.steps.reparse,
   no load).
2. The lake's partitions are copied to the store as the pipeline writes them (one object each,
   its SHA-256 in its metadata). Without --store a SeaweedFS server is started on loopback ports
   (tests/s3_server.py) and stopped at the end; with --store, the AWS variables say where.
3. Timed (best of --repeat): `db.load_lake` into a fresh warehouse from each lake, the path
   `gpuprices load` takes. Both warehouses must hold the same rows.

`measure()` returns the figures (bench/scale_out.py reports them with the worker figures).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuprices.flows.config import Settings  # noqa: E402
from gpuprices.flows.pipeline import steps as pipeline  # noqa: E402
from gpuprices.warehouse import db, lake, objstore  # noqa: E402
from tests.s3_server import BUCKET, S3Server  # noqa: E402


def _build_lake(work: Path) -> Settings:
    settings = Settings(data_dir=work / "data", archive_root=ROOT / "snapshots").ensure()
    for provider in sorted({p for _d, p, _ in pipeline.archives(settings)}):
        pipeline.reparse(settings, provider)
    return settings


def _upload(local_root: Path, remote_root: str) -> tuple[int, int]:
    """Copy every partition; returns (partitions, bytes)."""
    n = size = 0
    for day, provider, path in lake.list_partitions(local_root):
        data = path.read_bytes()
        size += len(data)
        digest = hashlib.sha256(data).hexdigest()
        lake.partition_path(remote_root, day, provider).put(
            data, expect=False, metadata={lake.CHECKSUM_METADATA: digest})
        n += 1
    return n, size


def _timed_load(lake_root, db_path: Path) -> tuple[float, int]:
    db_path.unlink(missing_ok=True)
    con = db.connect(db_path)
    try:
        db.init_schema(con)
        start = time.perf_counter()
        counts = db.load_lake(con, lake_root)
        return time.perf_counter() - start, sum(counts.values())
    finally:
        con.close()


def measure(store: str | None = None, repeat: int = 3) -> dict:
    """Seconds to load the bundled snapshots' lake from local disk and from the store."""
    with tempfile.TemporaryDirectory(prefix="load-from-store-") as tmp:
        work = Path(tmp)
        server = None
        if store is None:
            server = S3Server(work / "s3").start()
            os.environ.update(server.env())
            store = f"s3://{BUCKET}/bench"
        try:
            settings = _build_lake(work)
            remote = f"{store.rstrip('/')}/lake-{os.getpid()}"
            partitions, lake_bytes = _upload(settings.lake_root, remote)
            local_s, store_s = [], []
            for _ in range(repeat):
                t, local_rows = _timed_load(settings.lake_root, work / "local.duckdb")
                local_s.append(t)
                t, store_rows = _timed_load(objstore.location(remote), work / "store.duckdb")
                store_s.append(t)
            if local_rows != store_rows:
                raise SystemExit(f"the store's lake loaded {store_rows} rows, local disk "
                                 f"{local_rows}")
        finally:
            if server is not None:
                server.stop()
    return {"partitions": partitions, "rows": local_rows, "lake_mb": round(lake_bytes / 1e6, 2),
            "load_local_s": round(min(local_s), 3), "load_store_s": round(min(store_s), 3),
            "store_over_local": round(min(store_s) / min(local_s), 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", help="s3://bucket/prefix (default: a SeaweedFS started here)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print_figures(measure(args.store, args.repeat))


def print_figures(figures: dict) -> None:
    print(f"load of {figures['partitions']} partitions, {figures['rows']:,} rows "
          f"({figures['lake_mb']} MB of Parquet): "
          f"local disk {figures['load_local_s']:.2f} s, object store "
          f"{figures['load_store_s']:.2f} s, ratio store/local {figures['store_over_local']:.2f}")


if __name__ == "__main__":
    main()
