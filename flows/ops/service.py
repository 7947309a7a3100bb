"""Running as a service: a Prefect API server of our own, started and stopped in the right
order, and SIGTERM treated like Ctrl-C so that `gpuprices serve` and `gpuprices worker` stop
cleanly under systemd, Docker or Kubernetes.

Why a server of our own instead of Prefect's temporary one: Prefect starts its temporary server
as a child in the caller's process group, so Ctrl-C (SIGINT to the whole foreground group)
stopped the server at the same moment as the runner, and the runner's last calls (cancelling
its runs, pausing its schedules) met a closed port: ~400 lines of ConnectError tracebacks and
exit 1. The server started here runs in its own session, so only we stop it, after the runner.
It is the same `prefect server start` a team runs for its workers (docs/deploy.md), with its
database in the data folder's Prefect home and its UI on the loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

STARTUP_TIMEOUT_S = 180.0  # 15-25 s on an idle machine; minutes on 2 busy cores
STOP_TIMEOUT_S = 30.0
# Kubernetes waits 30 s (terminationGracePeriodSeconds) between SIGTERM and SIGKILL: a stopped
# worker lets a run that ends within 20 s finish; a longer one is stopped and marked Crashed.
WORKER_GRACE_S = 20.0


class ServerStartError(RuntimeError):
    """The Prefect server did not answer its health check in time (its log says why)."""


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def healthy(api_url: str, timeout_s: float = 2.0) -> bool:
    """True when the Prefect API at `api_url` answers its health check.

    A direct connection, never urllib's opener: that one sends http:// requests through
    http_proxy when no_proxy leaves the loopback out, and the process-wide default opener keeps
    the proxies of the environment it was first built in. Behind a proxy (or after a command
    that ran with one set), the check then asked the proxy for our own 127.0.0.1 server and
    waited out the whole start-up timeout with the server up and answering."""
    url = urllib.parse.urlsplit(f"{api_url}/health")
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port or 80,
                                      timeout=timeout_s)
    try:
        conn.request("GET", url.path)
        return conn.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the server's own process group, then SIGKILL after STOP_TIMEOUT_S."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def local_server(home: Path, port: int = 0, ui: bool = True, log: Path | None = None,
                 env: dict[str, str] | None = None) -> Iterator[str]:
    """A `prefect server start` on 127.0.0.1 (`port` 0: any free one) with its SQLite database
    in `home`, in its own session; yields its API URL once healthy and stops it on exit."""
    home.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    child_env = {**os.environ, **(env or {}), "PREFECT_HOME": str(home),
                 "PREFECT_UI_ENABLED": "true" if ui else "false",
                 "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
    child_env.pop("PREFECT_API_URL", None)  # the server is the API, not a client of one
    log = log or home / "server.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
             "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=child_env,
            start_new_session=True)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not healthy(api_url):
            if proc.poll() is not None or time.monotonic() > deadline:
                why = (f"exited {proc.returncode}" if proc.poll() is not None
                       else f"no answer in {STARTUP_TIMEOUT_S:.0f} s")
                raise ServerStartError(f"the Prefect server on port {port} did not start "
                                       f"({why}); see {log}, which ends:\n{_tail(log)}")
            time.sleep(0.5)
        yield api_url
    finally:
        _stop(proc)


def _tail(log: Path, lines: int = 20) -> str:
    """The last lines of a log, for an error that is read where the log is not (a CI job's
    output after its machine is gone)."""
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(unreadable: {exc})"


def wait_for_line(proc: subprocess.Popen, log: Path, text: str, timeout_s: float) -> None:
    """Wait until a child process's log holds `text` (a worker or `serve` saying it is ready);
    raises with the log when the process ends first or the time runs out."""
    deadline = time.monotonic() + timeout_s
    while text not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            state = "still running" if proc.poll() is None else f"exited {proc.returncode}"
            raise RuntimeError(f"{text!r} not seen (process {state}):\n{log.read_text()}")
        time.sleep(0.5)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (systemd, `docker stop`, Kubernetes) raises KeyboardInterrupt like Ctrl-C does,
    so the same `finally` blocks run; the previous handler comes back on exit."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_until_signal(main: Awaitable[None],
                     stop: Callable[[asyncio.Task], Awaitable[None]] | None = None) -> bool:
    """Run `main` in a new event loop until it returns or SIGTERM / SIGINT arrives; then stop
    it the graceful way: await `stop(task)` (which ends the task its own way: the Prefect
    runner's astop, a worker's drain) or else cancel it, and wait for its clean-up while the
    loop still runs. Returns True when a signal stopped it. (A KeyboardInterrupt raised inside
    the loop instead cancels every task at once, and Python 3.11 then logs the tracebacks of
    cancelled socket handlers.)"""

    async def runner() -> bool:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(main)
        stopped = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stopped.set)
        waiter = asyncio.ensure_future(stopped.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if stopped.is_set() and not task.done():
                try:
                    await stop(task) if stop is not None else task.cancel()
                except RuntimeError:  # signalled before it had started: nothing to stop
                    task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return stopped.is_set()
        finally:
            waiter.cancel()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    return asyncio.run(runner())
