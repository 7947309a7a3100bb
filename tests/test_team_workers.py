"""The team mode on a real Prefect server (tests/conftest.py `prefect_server`, loopback only):
a process work pool, two `gpuprices worker` processes (one flow run at a time each), two
providers' crawl deployments run at once from the bundled snapshots (replay), then the load
deployment once. Both crawls ran, on different workers; the warehouse holds both providers'
rows, loaded exactly once; a second load finds nothing to do; the workers stop cleanly on
SIGTERM."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from gpuprices.flows.ops.service import wait_for_line
from gpuprices.warehouse import lake

ROOT = Path(__file__).resolve().parents[1]
GPUPRICES = str(Path(sys.executable).with_name("gpuprices"))
POOL = "test-pool"
PROVIDERS = ("lambda", "runpod")  # several archived days each (snapshots/manifest.csv)
WAIT_S = 600  # a bound against a hang, not a speed claim
# One Prefect server for both real-server test files: `make test` runs them on one xdist
# worker (--dist loadgroup), which starts the session's server once.
pytestmark = pytest.mark.xdist_group("prefect-server")


def _one_ca_file(tmp: Path) -> Path:
    """A CA file of one certificate (certifi's first). Every Prefect client builds an SSL
    context from PREFECT_API_SSL_CERT_FILE, by default certifi's whole bundle (~150
    certificates, 40-60 ms on 2 busy cores), and a worker opens ~70 clients to register its 32
    deployments. The API here is plain http on the loopback: no certificate is ever checked."""
    import certifi

    bundle = Path(certifi.where()).read_text()
    end = "-----END CERTIFICATE-----"
    path = tmp / "one-ca.pem"
    path.write_text(bundle[bundle.index("-----BEGIN CERTIFICATE-----"):bundle.index(end)]
                    + end + "\n")
    return path


def _env(api_url: str, tmp: Path, name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GPUPRICES_"))}
    return env | {"PREFECT_API_URL": api_url, "PREFECT_HOME": str(tmp / f"prefect-{name}"),
                  "PREFECT_API_SSL_CERT_FILE": str(_one_ca_file(tmp)),
                  "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
                  # Poll often, so that both workers see the two runs while each runs one,
                  # and a run waits little for a worker to take it (each test waits on four).
                  "PREFECT_WORKER_QUERY_SECONDS": "1", "GPUPRICES_HOME": str(tmp / "data")}


def _start_worker(api_url: str, tmp: Path, name: str, *options: str
                  ) -> tuple[subprocess.Popen, Path]:
    log = tmp / f"{name}.log"
    proc = subprocess.Popen(
        [GPUPRICES, "worker", "--pool", POOL, "--name", name, "--limit", "1", "--grace", "2",
         "--archive", str(ROOT / "snapshots"), *options],
        stdout=log.open("w"), stderr=subprocess.STDOUT, env=_env(api_url, tmp, name),
        start_new_session=True)
    wait_for_line(proc, log, f"Worker '{name}' started", WAIT_S)
    return proc, log


def _wait_final(client, run_id):
    deadline = time.monotonic() + WAIT_S
    while True:
        run = client.read_flow_run(run_id)
        if run.state is not None and run.state.is_final():
            return run
        assert time.monotonic() < deadline, f"flow run {run.name} still {run.state}"
        time.sleep(0.25)  # a read of one run: polling often costs the server little


def _run(client, deployment: str, parameters: dict):
    dep = client.read_deployment_by_name(deployment)
    return client.create_flow_run_from_deployment(dep.id, parameters=parameters)


@pytest.fixture(scope="module")
def team(prefect_server, tmp_path_factory):
    """Two workers of one process pool; yields (api_url, data folder, workers and logs)."""
    tmp = tmp_path_factory.mktemp("team")
    workers = [_start_worker(prefect_server, tmp, "worker-a", "--load")]
    # Registers nothing: worker-a registered the same deployments at the same versions.
    workers.append(_start_worker(prefect_server, tmp, "worker-b"))
    yield prefect_server, tmp / "data", workers
    for proc, _ in workers:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def client(team):
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: team[0]}), \
            get_client(sync_client=True) as c:
        yield c


def test_crawls_on_two_workers_then_one_load(team, client):
    _, data, _ = team
    common = {"data_dir": str(data), "archive_root": str(ROOT / "snapshots")}
    crawls = [_run(client, f"gpuprices-crawl/{p}", {"provider": p, "replay": "all", **common})
              for p in PROVIDERS]
    crawls = [_wait_final(client, r.id) for r in crawls]
    assert [r.state.type.value for r in crawls] == ["COMPLETED", "COMPLETED"], \
        [r.state.message for r in crawls]
    workers = {r.labels.get("prefect.worker.name") for r in crawls}
    assert workers == {"worker-a", "worker-b"}  # one crawl on each worker
    assert len({r.infrastructure_pid for r in crawls}) == 2

    # The crawls wrote the lake and never the warehouse: the load is its only writer.
    parts = [(d, p, path) for d, p, path in lake.list_partitions(data / "lake")]
    assert {p for _, p, _ in parts} == set(PROVIDERS)
    assert not (data / "warehouse.duckdb").exists()
    lake_rows = sum(pq.read_metadata(path).num_rows for _, _, path in parts)

    load = _wait_final(client, _run(client, "gpuprices-load/load", common).id)
    assert load.state.is_completed(), load.state.message
    assert load.labels.get("prefect.worker.name") == "worker-a"  # the one started with --load
    again = _wait_final(client, _run(client, "gpuprices-load/load", common).id)
    assert again.state.is_completed(), again.state.message

    con = duckdb.connect(str(data / "warehouse.duckdb"), read_only=True)
    try:
        per_provider = dict(con.execute(
            "SELECT provider, count(*) FROM offers GROUP BY provider").fetchall())
        runs = con.execute("SELECT run_id, provider, snapshot_date, status FROM runs"
                           ).fetchall()
        loads = con.execute("SELECT count(*) FROM lake_loads").fetchall()[0][0]
    finally:
        con.close()
    assert set(per_provider) == set(PROVIDERS) and min(per_provider.values()) > 0
    assert sum(per_provider.values()) == lake_rows  # every lake row, once
    # One run (the first load) recorded every partition once; the second load recorded none.
    assert len({r[0] for r in runs}) == 1
    assert sorted((r[1], r[2]) for r in runs) == sorted((p, d) for d, p, _ in parts)
    assert {r[3] for r in runs} == {"ok"}
    assert loads == len(parts)
    assert len(list((data / "runs").glob("*.md"))) == 1


def test_a_load_waits_for_the_warehouse_slot_another_holds(team, client):
    """Another machine's load holds `gpuprices-warehouse`: a load started now waits for the
    slot (it cannot finish while it is held), then runs."""
    from prefect.concurrency.sync import concurrency
    from prefect.settings import PREFECT_API_URL, temporary_settings

    common = {"data_dir": str(team[1]), "archive_root": str(ROOT / "snapshots")}
    with temporary_settings({PREFECT_API_URL: team[0]}), \
            concurrency("gpuprices-warehouse", occupy=1, strict=True):
        run = _run(client, "gpuprices-load/load", common)
        deadline = time.monotonic() + WAIT_S
        while client.read_flow_run(run.id).state.type.value != "RUNNING":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        time.sleep(5)  # time enough to finish, were it not waiting
        assert client.read_flow_run(run.id).state.type.value == "RUNNING"
    assert _wait_final(client, run.id).state.is_completed()


def test_a_load_fails_clearly_while_a_one_machine_run_holds_the_folder(team, client):
    import fcntl

    data = team[1]
    with (data / "nightly.lock").open("a+") as fh:  # as `gpuprices crawl` holds it
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        run = _wait_final(client, _run(client, "gpuprices-load/load",
                                       {"data_dir": str(data)}).id)
    assert run.state.type.value == "FAILED"
    assert f"another gpuprices run holds {data}'s run lock" in run.state.message


def test_deployments_and_limits_registered(client):
    names = {f"{d.flow_id}/{d.name}" for d in client.read_deployments()}
    crawl = {d.name for d in client.read_deployments() if d.entrypoint
             == "gpuprices.flows.team.flows.crawl_provider"}
    assert {"lambda", "runpod", "aws"} <= crawl and len(names) >= len(crawl) + 1
    load = client.read_deployment_by_name("gpuprices-load/load")
    assert load.entrypoint == "gpuprices.flows.team.flows.load_lake"
    assert load.work_pool_name == POOL
    assert load.work_queue_name == "load"
    assert load.path is None and not load.pull_steps  # the installed package is the code
    limits = {lim.name: lim.limit for lim in client.read_global_concurrency_limits(limit=200)}
    assert limits["gpuprices-warehouse"] == 1 and limits["gpuprices-crawl-lambda"] == 1


def test_the_second_worker_registers_nothing_the_first_registered(team, client):
    from gpuprices.flows.team.deploy import build_deployments
    from gpuprices.warehouse.contract import PROVIDERS

    built = build_deployments(list(PROVIDERS), POOL)
    (_, log_a), (_, log_b) = team[2]
    assert f"deployments registered ({len(built)} of {len(built)}," in log_a.read_text()
    assert f"deployments registered (0 of {len(built)}, the others already current): none" \
        in log_b.read_text()
    # What the server holds is at the version this package builds, for each deployment.
    for d in built:
        held = client.read_deployment_by_name(f"{d.flow_name}/{d.name}")
        assert held.version == d.version and held.work_pool_name == POOL


def test_workers_stop_cleanly_on_sigterm(team, client):
    """SIGTERM to each worker process alone (as Kubernetes sends it): exit 0, no traceback. A
    run that does not end within the worker's --grace (its process frozen here) is stopped and
    marked Crashed, naming the worker, instead of being left "Running"."""
    run = _run(client, "gpuprices-crawl/lambda",
               {"provider": "lambda", "replay": "all", "data_dir": str(team[1])})
    deadline = time.monotonic() + WAIT_S
    while not (pid := client.read_flow_run(run.id).infrastructure_pid):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    os.kill(int(pid.rsplit(":", 1)[-1]), signal.SIGSTOP)  # a crawl that hangs
    # What the workers print from now on (earlier: the failed runs' own tracebacks, logged by
    # the runs of the tests above).
    before = {log: len(log.read_text()) for _, log in team[2]}
    for proc, _ in team[2]:
        proc.send_signal(signal.SIGTERM)
    for proc, log in team[2]:
        assert proc.wait(timeout=120) == 0, log.read_text()
        text = log.read_text()[before[log]:]
        assert "Traceback" not in text and "worker stopped" in text, text
    final = client.read_flow_run(run.id)
    assert final.state.type.value == "CRASHED", final.state
    assert f"worker {final.labels['prefect.worker.name']} was stopped" in final.state.message
