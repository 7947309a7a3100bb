"""`gpuprices rank` on a very long workload file: time, peak memory, output size and when the
first output byte arrives (issue 30, item 12: 10,000 workloads ran past 300 s at 1.9 GB).

    .venv/bin/python bench/rank_many.py --data-dir DATA [--n 1000 --n 10000] [--json]

Each run is `gpuprices rank FILE [--json]` in its own process on the warehouse of DATA (build
it with `GPUPRICES_HOME=DATA gpuprices nightly --replay all`). FILE holds N workloads: the 5
shipped in sizing/workloads.toml, repeated under new names (synthetic, for scale only), written
to a temporary folder. Peak memory is the child's maximum resident set (getrusage); output is
read as it comes and thrown away, counting bytes and timing the first one.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "sizing" / "workloads.toml"


def workload_file(n: int, folder: Path) -> Path:
    """N workloads: the shipped ones cycled, each copy renamed `<name>-<i>`."""
    text = WORKLOADS.read_text()
    blocks = ["[[workload]]" + b for b in text.split("[[workload]]")[1:]]
    out = []
    for i in range(n):
        block = blocks[i % len(blocks)]
        out.append(re.sub(r'^name = "([^"]+)"', lambda m, i=i: f'name = "{m.group(1)}-{i}"',
                          block, count=1, flags=re.M))
    path = folder / f"workloads-{n}.toml"
    path.write_text("\n".join(out))
    return path


def run_one(n: int, data_dir: str, as_json: bool, timeout: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = workload_file(n, Path(tmp))
        exe = Path(sys.executable).with_name("gpuprices")
        cmd = [str(exe), "rank", str(path), "--data-dir", data_dir] + (["--json"] if as_json
                                                                       else [])
        start = time.perf_counter()
        first = None
        size = 0
        progress = 0
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=os.environ | {"COLUMNS": "160"})
        timed_out = False
        while True:
            if time.perf_counter() - start > timeout:
                proc.kill()
                timed_out = True
                break
            chunk = proc.stdout.read1(1 << 16)
            if not chunk:
                break
            if first is None:
                first = time.perf_counter() - start
            size += len(chunk)
        err = proc.stderr.read().decode(errors="replace")
        proc.wait()
        progress = err.count("ranked ")
        total = time.perf_counter() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"n={n:>6} json={as_json!s:5} {'TIMED OUT ' if timed_out else ''}exit="
              f"{proc.returncode} time={total:7.1f} s first_byte={first or 0:6.1f} s "
              f"peak={peak_mb:7.0f} MB output={size / 1e6:8.1f} MB progress_lines={progress}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("GPUPRICES_HOME", "data"))
    ap.add_argument("--n", type=int, action="append")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    sizes = args.n or [1000, 10000]
    if args.one:
        run_one(sizes[0], args.data_dir, args.json, args.timeout)
        return
    for n in sizes:  # one process per size: the peak memory is that run's alone
        subprocess.run([sys.executable, __file__, "--one", "--n", str(n), "--data-dir",
                        args.data_dir, "--timeout", str(args.timeout)]
                       + (["--json"] if args.json else []), check=False)


if __name__ == "__main__":
    main()
