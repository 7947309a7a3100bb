"""Child processes for the SIGKILL cases: run one pipeline step with a monkeypatched inner step
that announces itself (a marker file) and then waits to be killed mid-way.

    python -m tests.faults.kill parquet|duckdb DATA_DIR ARCHIVE_ROOT MARKER

`parquet`: store_day of the Runpod API night writes its partition; the Parquet writer has
written part of the file when the marker appears.
`duckdb`: load of that night runs inside its transaction (old rows deleted, new rows inserted,
not committed) when the marker appears.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.warehouse import store

DAY = dt.date(2026, 9, 29)  # the Runpod API capture's night


def _hold(marker: Path) -> None:
    marker.write_text(str(os.getpid()))
    time.sleep(120)  # the parent kills us here
    raise SystemExit("not killed")


def main(mode: str, data_dir: str, archive: str, marker: str) -> None:
    settings = Settings(data_dir=Path(data_dir), archive_root=Path(archive)).ensure()
    (path,) = [p for d, _, p in pipeline.archives(settings, ["runpod"], [DAY])]
    if mode == "parquet":
        real = pq.write_table

        def slow_write(table, where, **kw):
            half = table.slice(0, max(1, table.num_rows // 2))
            real(half, where, **kw)  # bytes of an incomplete file are on disk
            if hasattr(where, "flush"):
                where.flush()
            _hold(Path(marker))

        pq.write_table = slow_write
        pipeline.store_day(settings, "runpod", DAY, pipeline.parse_archive(path, "runpod"))
    elif mode == "duckdb":
        res = pipeline.store_day(settings, "runpod", DAY, pipeline.parse_archive(path, "runpod"))
        real_insert = store._insert_offers

        def insert_then_hold(con, day, provider, table):
            n = real_insert(con, day, provider, table)
            _hold(Path(marker))
            return n

        store._insert_offers = insert_then_hold
        loading.load(settings, [res], "killed-run")
    else:
        raise SystemExit(f"unknown mode {mode}")


def run_killed(mode: str, data_dir: Path, archive: Path, timeout: float = 60) -> int:
    """Start the child, wait for its marker, SIGKILL it. Returns the child's exit status."""
    marker = data_dir.parent / f"kill-{mode}.marker"
    marker.unlink(missing_ok=True)
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen([sys.executable, "-m", "tests.faults.kill", mode, str(data_dir),
                              str(archive), str(marker)], cwd=root,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if child.poll() is not None:
            raise RuntimeError(f"child ended before the kill point: {child.stderr.read()[-800:]}")
        if time.monotonic() > deadline:
            child.kill()
            raise RuntimeError("child never reached the kill point")
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    rc = child.wait()
    child.stderr.close()
    return rc


if __name__ == "__main__":
    main(*sys.argv[1:5])
