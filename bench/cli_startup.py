"""How long the `gpuprices` command line takes to start, now and at an earlier revision.

Every command (and `--help`) imports gpuprices.flows.cli.main first; the suite starts the CLI as
a subprocess about 80 times, and a user on every command. Printed, each as the median of
several fresh processes:
* `import gpuprices.flows.cli.main` alone, and the heavy libraries it pulled in;
* `gpuprices --help`, `gpuprices rank --help`, `gpuprices sql --help`, and
  `gpuprices sql "select 1"` against an empty data folder (no warehouse: exit 2 after saying so).
With `--rev REV` (default 74f4cd7, int3 before the command line imported lazily) the same
figures for that revision's code, read from git into a temporary folder laid out as the
installed package (setup.py), side by side. Wall-clock times on a shared machine are noisy:
compare medians.

    .venv/bin/python bench/cli_startup.py [--rev 74f4cd7] [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("gpuprices", "flows", "warehouse", "spiders", "sizing", "reports")  # setup.py
HEAVY = ("prefect", "duckdb", "pyarrow", "numpy", "pandas", "jinja2", "fastapi", "apprise",
         "scrapy", "warcio", "lxml")
MAIN = "gpuprices.flows.cli.main"


def _checkout(rev: str, into: Path) -> Path:
    """`rev`'s package folders under into/src, and into/pkg/gpuprices laid out as installed."""
    src, pkg = into / "src", into / "pkg"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *FOLDERS],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    (pkg / "gpuprices").mkdir(parents=True)
    for f in (src / "gpuprices").iterdir():
        (pkg / "gpuprices" / f.name).symlink_to(f)
    for folder in FOLDERS[1:]:
        (pkg / "gpuprices" / folder).symlink_to(src / folder)
    return pkg


def _env(pythonpath: Path | None, data: Path) -> dict[str, str]:
    env = {**os.environ, "GPUPRICES_HOME": str(data)}
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def _median_s(argv: list[str], env: dict[str, str], runs: int, cwd: Path) -> tuple[float, int]:
    """The median wall time of `runs` fresh processes, and the exit status of the last."""
    times, rc = [], 0
    for _ in range(runs):
        t = time.perf_counter()
        rc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True).returncode
        times.append(time.perf_counter() - t)
    return statistics.median(times), rc


def _heavy_loaded(env: dict[str, str], cwd: Path) -> list[str]:
    code = (f"import sys, {MAIN}; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def measure(pythonpath: Path | None, runs: int, data: Path, cwd: Path) -> dict[str, object]:
    env = _env(pythonpath, data)
    # `-m gpuprices` is the same entry point as the `gpuprices` script (gpuprices/__main__.py),
    # and follows PYTHONPATH for the earlier revision.
    cli = [sys.executable, "-m", "gpuprices"]
    rows: dict[str, object] = {
        "import cli.main": _median_s([sys.executable, "-c", f"import {MAIN}"], env, runs, cwd),
        "gpuprices --help": _median_s([*cli, "--help"], env, runs, cwd),
        "gpuprices rank --help": _median_s([*cli, "rank", "--help"], env, runs, cwd),
        "gpuprices sql --help": _median_s([*cli, "sql", "--help"], env, runs, cwd),
        'gpuprices sql "select 1"': _median_s([*cli, "sql", "select 1"], env, runs, cwd),
    }
    rows["heavy modules at import"] = _heavy_loaded(env, cwd)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="74f4cd7", help="the earlier revision to compare with "
                                                  "('' for none)")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli_startup_") as tmp:
        tmp_path = Path(tmp)
        data = tmp_path / "data"  # empty: `sql` says there is no warehouse, exit 2
        data.mkdir()
        # Not the repository: its top folder `gpuprices/` would shadow the earlier revision's.
        cwd = tmp_path
        before = (measure(_checkout(args.rev, tmp_path / "rev"), args.runs, data, cwd)
                  if args.rev else None)
        now = measure(None, args.runs, data, cwd)
    print(f"CLI start-up, median of {args.runs} fresh processes (wall seconds; exit status)")
    head = f"{'':28} {('at ' + args.rev) if before else '':>22} {'now':>22}"
    print(head)
    for key, value in now.items():
        if key == "heavy modules at import":
            continue
        t_now, rc_now = value  # type: ignore[misc]
        if before:
            t_b, rc_b = before[key]  # type: ignore[misc]
            was = f"{t_b:7.3f} s (exit {rc_b})"
            gain = f"  {t_b / t_now:4.1f}x" if t_now else ""
        else:
            was, gain = "", ""
        print(f"{key:28} {was:>22} {f'{t_now:7.3f} s (exit {rc_now})':>22}{gain}")
    if before:
        print(f"heavy modules at import, at {args.rev}: "
              f"{' '.join(before['heavy modules at import']) or 'none'}")  # type: ignore[arg-type]
    print(f"heavy modules at import, now: {' '.join(now['heavy modules at import']) or 'none'}")


if __name__ == "__main__":
    main()
