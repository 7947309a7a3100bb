"""Seconds per pipeline stage for a replay of every bundled snapshot, and the wall time of
`gpuprices nightly --replay all` with Prefect's start-up shown apart.

    .venv/bin/python bench/pipeline.py [--archive snapshots] [--skip-nightly]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuprices.flows.config import Settings, prefect_env  # noqa: E402
from gpuprices.flows.pipeline import load_steps  # noqa: E402
from gpuprices.flows.pipeline import steps as pipeline  # noqa: E402
from gpuprices.warehouse import db, lake  # noqa: E402
from gpuprices.warehouse.contract import offers_to_table  # noqa: E402

PREFECT_NOOP = """
from prefect import flow
@flow
def noop():
    return 1
noop()
"""


def stages(archive: Path, data: Path) -> dict[str, float]:
    """parse, check and write every archive file, then load the lake partitions twice: one
    transaction per provider-day (`load per day`, what every night did before bulk loads) and
    as `gpuprices crawl --replay all` loads them now (`load`, flows/load_steps.load_days)."""
    settings = Settings(data_dir=data, archive_root=archive).ensure()
    t = {"parse": 0.0, "check": 0.0, "write": 0.0}
    files = pipeline.archives(settings)
    rows, keys = 0, []
    for day, provider, path in files:
        t0 = time.perf_counter()
        parsed = pipeline.parse_archive(path, provider)
        t1 = time.perf_counter()
        good, _bad = pipeline.check(parsed.offers)
        t2 = time.perf_counter()
        if good:
            table = offers_to_table(good)
            lake.write_partition(settings.lake_root, day, provider, table)
            rows += len(good)
            keys.append((day, provider))
        t3 = time.perf_counter()
        t["parse"] += t1 - t0
        t["check"] += t2 - t1
        t["write"] += t3 - t2
    con = db.connect(data / "per_day.duckdb")
    db.init_schema(con)
    t0 = time.perf_counter()
    for day, provider in keys:
        db.load_partition(con, day, provider, lake.read_partition(settings.lake_root, day,
                                                                  provider))
    t["load per day"] = time.perf_counter() - t0
    con.close()
    con = db.connect(settings.db_path)
    db.init_schema(con)
    t0 = time.perf_counter()
    _loaded, failed = load_steps.load_days(settings, con, keys)
    t["load"] = time.perf_counter() - t0
    con.close()
    assert not failed, failed
    t["files"] = len(files)
    t["rows"] = rows
    return t


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    return time.perf_counter() - t0, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--archive", type=Path, default=ROOT / "snapshots")
    ap.add_argument("--skip-nightly", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = stages(args.archive, Path(tmp) / "stages")
        print(f"replay of {t['files']} archive files (provider-days), {t['rows']} offers loaded")
        for k in ("parse", "check", "write", "load"):
            print(f"  {k:<6} {t[k]:7.2f} s")
        print(f"  total  {sum(t[k] for k in ('parse', 'check', 'write', 'load')):7.2f} s")
        print(f"  (baseline: the same load, one transaction per provider-day: "
              f"{t['load per day']:.2f} s, x{t['load per day'] / t['load']:.1f})")
        if args.skip_nightly:
            return
        import os

        data = Path(tmp) / "nightly"
        settings = Settings(data_dir=data, archive_root=args.archive).ensure()
        env = os.environ | prefect_env(settings)
        startup, rc0 = timed([sys.executable, "-c", PREFECT_NOOP], env)
        wall, rc = timed([sys.executable, "-m", "gpuprices", "nightly", "--replay", "all",
                          "--data-dir", str(data), "--archive", str(args.archive)], env)
        print(f"gpuprices nightly --replay all: {wall:.1f} s wall (exit {rc})")
        print(f"  of which Prefect start-up (a no-op flow, same environment): {startup:.1f} s"
              f" (exit {rc0})")
        print(f"  pipeline work under Prefect: {wall - startup:.1f} s")


if __name__ == "__main__":
    main()
