"""A real `gpuprices api` process on 127.0.0.1 (a free port) for the tests, stopped after."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ApiServer:
    def __init__(self, data_dir: Path, *args: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpuprices", "api", "--port", str(self.port),
             "--data-dir", str(data_dir), *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ))
        deadline = time.monotonic() + 60  # a start-up bound, not a timed assertion
        while True:
            try:
                urllib.request.urlopen(self.url + "/openapi.json", timeout=5).close()
                return
            except (urllib.error.URLError, ConnectionError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"gpuprices api did not start: {self.output()}") from None
                time.sleep(0.2)

    def output(self) -> str:
        return self.proc.stdout.read().decode() if self.proc.poll() is not None else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def get(url: str, headers: dict[str, str] | None = None):
    """(status, headers, body bytes); HTTP errors are answers too."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()
