"""Team mode scale-out: the wall time from submitting every provider's crawl deployment (replay
of the bundled snapshots) to the last lake partition written, with 1 and then 2 `gpuprices
worker` processes (one flow run at a time each) on one real Prefect server, as a ratio.

    .venv/bin/python bench/scale_out.py [--providers lambda,runpod,...] [--replay all]

On one machine both workers share its cores, so the ratio shows what the orchestration costs
and hides; on two machines each worker has its own. The load from object storage versus local
disk is measured in the same run (bench/load_from_store.py).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import load_from_store  # noqa: E402

from gpuprices.flows.ops.service import local_server, wait_for_line  # noqa: E402
from gpuprices.warehouse import lake  # noqa: E402
from gpuprices.warehouse.contract import PROVIDERS  # noqa: E402

GPUPRICES = str(Path(sys.executable).with_name("gpuprices"))
POOL = "bench-pool"


def _env(api_url: str, tmp: Path, name: str, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GPUPRICES_"))}
    return env | {"PREFECT_API_URL": api_url, "PREFECT_HOME": str(tmp / f"prefect-{name}"),
                  "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
                  "PREFECT_WORKER_QUERY_SECONDS": "2", "PREFECT_LOGGING_LEVEL": "WARNING",
                  "GPUPRICES_HOME": str(data)}


def _workers(api_url: str, tmp: Path, n: int, data: Path) -> list[subprocess.Popen]:
    procs = []
    for i in range(n):
        name = f"bench-{n}-{i}"
        log = tmp / f"{name}.log"
        proc = subprocess.Popen(
            [GPUPRICES, "worker", "--pool", POOL, "--name", name, "--limit", "1",
             "--archive", str(ROOT / "snapshots"), *(["--no-register"] if i else [])],
            stdout=log.open("w"), stderr=subprocess.STDOUT,
            env=_env(api_url, tmp, name, data), start_new_session=True)
        wait_for_line(proc, log, f"Worker '{name}' started", 600)
        procs.append(proc)
    return procs


def replay_to_lake(client, api_url: str, tmp: Path, n: int, providers: list[str],
                   replay: str) -> tuple[float, int]:
    """Seconds from submitting the crawls to the last one final, with n workers; partitions."""
    data = tmp / f"data-{n}"
    procs = _workers(api_url, tmp, n, data)
    try:
        params = {"data_dir": str(data), "archive_root": str(ROOT / "snapshots"),
                  "replay": replay}
        t0 = time.perf_counter()
        ids = [client.create_flow_run_from_deployment(
                   client.read_deployment_by_name(f"gpuprices-crawl/{p}").id,
                   parameters={"provider": p, **params}).id for p in providers]
        pending = set(ids)
        while pending:
            for run_id in list(pending):
                state = client.read_flow_run(run_id).state
                if state is not None and state.is_final():
                    pending.discard(run_id)
                    if not state.is_completed():
                        print(f"  a crawl ended {state.type.value}: {state.message}")
            time.sleep(0.5)
        seconds = time.perf_counter() - t0
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=120)
    return seconds, len(lake.list_partitions(data / "lake"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--providers", default=",".join(p for p in PROVIDERS if p != "aws"),
                    help="comma-separated providers (default: all but aws, whose 488 archived "
                         "days make one crawl the whole run)")
    ap.add_argument("--replay", default="all", help="a date YYYY-MM-DD or 'all'")
    ap.add_argument("--store", help="s3://bucket/prefix for the load figures (default: a "
                                    "SeaweedFS server started here)")
    ap.add_argument("--repeat", type=int, default=3, help="loads timed per lake (best kept)")
    args = ap.parse_args()
    providers = [p for p in args.providers.split(",") if p]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        t0 = time.perf_counter()
        with local_server(tmp / "server", ui=False) as api_url:
            print(f"Prefect server up in {time.perf_counter() - t0:.1f} s")
            from prefect.client.orchestration import get_client
            from prefect.settings import PREFECT_API_URL, temporary_settings

            with temporary_settings({PREFECT_API_URL: api_url}), \
                    get_client(sync_client=True) as client:
                figures = {n: replay_to_lake(client, api_url, tmp, n, providers, args.replay)
                           for n in (1, 2)}
    print(f"replay to lake, {len(providers)} providers, replay {args.replay}:")
    for n, (seconds, parts) in figures.items():
        print(f"  {n} worker{'s' if n > 1 else ' '}: {seconds:7.1f} s ({parts} partitions)")
    print(f"  ratio 1 worker / 2 workers: {figures[1][0] / figures[2][0]:.2f}x")
    # The load from an s3:// lake versus local disk, in the same run (bench/load_from_store.py:
    # a SeaweedFS server on loopback unless --store names one).
    load_from_store.print_figures(load_from_store.measure(args.store, args.repeat))


if __name__ == "__main__":
    main()
