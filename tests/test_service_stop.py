"""`gpuprices serve` behaves like a service: stopped by Ctrl-C (SIGINT to its whole process
group, as a terminal sends it) or by SIGTERM (systemd, `docker stop`, Kubernetes), it exits 0
without a traceback and leaves no Prefect server behind; with PREFECT_API_URL set it registers
its deployments on that server. Real servers on the loopback (tests/conftest.py)."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from gpuprices.flows.ops.service import healthy, wait_for_line
from tests.prefect_test_server import PREFECT_TEST_SERVER_ENV, copy_database

GPUPRICES = str(Path(sys.executable).with_name("gpuprices"))
WAIT_S = 300  # a bound against a hang, not a speed claim
READY = "deployments registered and served"
# One Prefect server for both real-server test files: `make test` runs them on one xdist
# worker (--dist loadgroup), which starts the session's server once.
pytestmark = pytest.mark.xdist_group("prefect-server")


def _api_url(log: Path) -> str:
    """The API of the Prefect server `serve` started itself (it prints the UI's address)."""
    return next(line.split("Prefect UI: ")[1].strip() for line in log.read_text().splitlines()
                if line.startswith("Prefect UI: ")) + "/api"


def _polled(api_url: str) -> bool:
    """True once the runner has polled the server for its deployments' runs (the server then
    records when, per deployment)."""
    req = urllib.request.Request(f"{api_url}/deployments/filter", data=b"{}", method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:  # noqa: S310 (loopback)
        found = {d["name"]: d.get("last_polled") for d in json.load(r)}
    return all(found.get(name) for name in ("nightly", "weekly"))


def _serve(tmp: Path, api_url: str | None) -> tuple[subprocess.Popen, Path]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GPUPRICES_"))}
    env |= {"GPUPRICES_HOME": str(tmp / "data"), "PREFECT_UI_ENABLED": "false",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
    # The server `serve` starts itself inherits these (as the session's server has them): no
    # scheduler or other loops this test does not wait on.
    env |= PREFECT_TEST_SERVER_ENV
    if api_url:
        env |= {"PREFECT_API_URL": api_url, "PREFECT_HOME": str(tmp / "prefect")}
    log = tmp / "serve.log"
    proc = subprocess.Popen([GPUPRICES, "serve"], stdout=log.open("w"),
                            stderr=subprocess.STDOUT, env=env, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_for_line(proc, log, READY, WAIT_S)
    # Stopped only once the runner has polled and holds its connections, as a long-running one
    # does (a fixed 3 s sleep before: waiting for the poll itself is both sooner and surer).
    api = api_url or _api_url(log)
    deadline = time.monotonic() + WAIT_S
    while not _polled(api):
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    return proc, log


def _stopped_cleanly(proc: subprocess.Popen, log: Path) -> str:
    try:
        rc = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    text = log.read_text()
    assert rc == 0, text
    assert "Traceback" not in text and "ConnectError" not in text, text
    assert text.rstrip().endswith("stopped"), text
    return text


def test_ctrl_c_stops_serve_and_its_own_server(tmp_path, prefect_database):
    # Its server's database, already migrated (`gpuprices serve` on a data folder it ran on
    # before): the server still starts, migrates (nothing to do) and is stopped for real.
    copy_database(prefect_database, tmp_path / "data" / "prefect")
    proc, log = _serve(tmp_path, None)
    api_url = _api_url(log)
    assert healthy(api_url)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground process group
    text = _stopped_cleanly(proc, log)
    assert "gpuprices-scheduled-nightly/nightly: cron '0 2 * * *' UTC" in text
    assert not healthy(api_url)  # its server went down with it, after the runner


def test_sigterm_stops_serve_registered_on_a_configured_server(tmp_path, prefect_server):
    proc, log = _serve(tmp_path, prefect_server)
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: prefect_server}), \
            get_client(sync_client=True) as client:
        names = {d.name for d in client.read_deployments()}
    assert {"nightly", "weekly"} <= names
    proc.send_signal(signal.SIGTERM)  # the process alone, as Kubernetes and docker stop do
    text = _stopped_cleanly(proc, log)
    assert "starting a Prefect server" not in text  # it used the configured one
