"""`gpuprices api` under load: requests per second and latency percentiles for GET /offers/now
(and the other read endpoints with --path), with N concurrent keep-alive clients, on this
machine (2 cores, shared by the server and the clients).

    .venv/bin/python bench/api_load.py --data-dir DATA [--seconds 20] [--clients 8]
        [--path '/offers/now?gpu_model=H100-SXM-80GB'] [--path /offers/now?limit=1000]

DATA holds the warehouse (`GPUPRICES_HOME=DATA gpuprices nightly --replay all`). The server is
`gpuprices api` in its own process on a free 127.0.0.1 port; the clients are threads of this
process using http.client. Each path is measured twice: plain requests (the query runs every
time) and with If-None-Match (the 304 that a polling client gets between loads).
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.api_server import free_port  # noqa: E402


def start(data_dir: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gpuprices", "api", "--port", str(port),
                             "--data-dir", str(data_dir), "--max-rows", "10000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).close()
            return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("gpuprices api did not start")


def load(port: int, path: str, seconds: float, clients: int, etag: str | None
         ) -> tuple[int, list[float], int]:
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop_at = time.perf_counter() + seconds
    headers = {"If-None-Match": etag} if etag else {}

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine = []
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            conn.request("GET", path, headers=headers)
            r = conn.getresponse()
            r.read()
            mine.append(time.perf_counter() - t0)
            if r.status not in (200, 304):
                with lock:
                    errors[0] += 1
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(latencies), latencies, errors[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get(
        "GPUPRICES_HOME", ROOT / "data")))
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--path", action="append")
    a = ap.parse_args()
    paths = a.path or ["/offers/now?gpu_model=H100-SXM-80GB", "/offers/now?limit=1000"]
    proc, port = start(a.data_dir)
    try:
        print(f"gpuprices api on 127.0.0.1:{port}, {os.cpu_count()} cores, "
              f"{a.clients} clients, {a.seconds:g} s per line")
        print(f"{'request':48} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}")
        for path in paths:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}") as r:
                etag, size = r.headers["ETag"], len(r.read())
            runs = ((f"GET {path} ({size:,} B)", None), ("  same, If-None-Match", etag))
            for label, tag in runs:
                n, lat, errors = load(port, path, a.seconds, a.clients, tag)
                q = statistics.quantiles(lat, n=100)
                print(f"{label:48} {n / a.seconds:8.1f} {q[49] * 1e3:8.1f} "
                      f"{q[98] * 1e3:8.1f} {errors:6}")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
