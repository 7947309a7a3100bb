"""How long `gpuprices nightly --replay` waits on Prefect before work, and its wall time with
and without the head start (flows/nightly.py: the providers' work begins while Prefect's
temporary API server starts).

    .venv/bin/python bench/nightly_startup.py [--providers aws,runpod,nebius] [--rounds 1]

Prints: the time from a fresh process to the first line of a trivial flow (fresh Prefect home,
then warm), i.e. the server start every nightly pays; then `gpuprices nightly --replay all` for
the chosen providers on a fresh data folder, head start off (before) and on (after). A fresh
data folder per run: a night's Prefect home starts empty the first time, as after `make run`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TRIVIAL = """
import time
t0 = time.monotonic()
from prefect import flow
@flow
def f():
    print(f"{time.monotonic() - t0:.2f}")
f()
"""


def _env(home: Path, **extra: str) -> dict:
    from gpuprices.flows.config import Settings, prefect_env

    env = os.environ.copy()
    env.update(prefect_env(Settings(home, ROOT / "snapshots")))
    env.pop("PREFECT_API_URL", None)
    env.update(extra)
    return env


def first_flow_line(home: Path) -> float:
    home.mkdir(parents=True, exist_ok=True)
    out = subprocess.run([sys.executable, "-c", TRIVIAL], env=_env(home), capture_output=True,
                         text=True, timeout=600)
    if out.returncode:
        sys.exit(f"trivial flow failed: {out.stderr[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def nightly(data: Path, providers: list[str], head_start: bool) -> float:
    cmd = [sys.executable, "-m", "gpuprices", "nightly", "--replay", "all",
           "--data-dir", str(data)]
    for p in providers:
        cmd += ["-p", p]
    env = _env(data, GPUPRICES_HEAD_START="on" if head_start else "off")
    t = time.monotonic()
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    took = time.monotonic() - t
    if run.returncode not in (0, 1):
        sys.exit(f"nightly failed ({run.returncode}): {run.stderr[-2000:]}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--providers", default="aws,runpod,nebius,lambda,vast")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    providers = [p for p in args.providers.split(",") if p]
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="nightly-startup-") as tmp:
        home = Path(tmp) / "trivial"
        fresh = first_flow_line(home)
        warm = first_flow_line(home)
        print(f"trivial flow, process start to first line: fresh Prefect home {fresh:.1f} s, "
              f"warm {warm:.1f} s")
        for r in range(args.rounds):
            before = nightly(Path(tmp) / f"off{r}", providers, head_start=False)
            after = nightly(Path(tmp) / f"on{r}", providers, head_start=True)
            print(f"nightly --replay all -p {','.join(providers)}: head start off "
                  f"{before:.1f} s, on {after:.1f} s (saved {before - after:.1f} s, "
                  f"{(before - after) / before:.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
