"""The health check that `gpuprices serve` and the tests make of their own loopback Prefect
server (flows/ops/service.py `healthy`) goes straight to it: an http_proxy in the environment,
or urllib's process-wide opener built under one, once sent it to the proxy, and a server that
was up waited out the whole 180 s start-up timeout (CI, 2026-12-05)."""

import threading
import urllib.request
from http.server import ThreadingHTTPServer

import pytest

from gpuprices.flows.ops.service import free_port, healthy
from tests.local_http import QuietHandler

REFUSING_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, connections refused


class _Health(QuietHandler):
    def do_GET(self):
        if self.path == "/api/health":
            self._send(200, b"true", "application/json")
        else:
            self._send(404, b"not found")


@pytest.fixture
def api_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/api"
    finally:
        server.shutdown()
        server.server_close()


def test_a_proxy_in_the_environment_is_not_asked_for_the_loopback_server(api_url, monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.setenv(name, REFUSING_PROXY)
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    # What urllib's default opener would do here: ask the refusing proxy.
    monkeypatch.setattr(urllib.request, "_opener", None)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{api_url}/health", timeout=2)  # noqa: S310 (loopback)
    assert healthy(api_url)
    # The opener built just now keeps the proxy after the environment drops it.
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name)
    assert healthy(api_url)


def test_no_server_or_a_wrong_answer_is_not_healthy(api_url):
    assert not healthy(f"http://127.0.0.1:{free_port()}/api")
    assert not healthy(api_url.removesuffix("/api") + "/other")


def test_a_server_that_cannot_start_says_why_in_the_error(tmp_path, monkeypatch):
    """The error carries the end of the server's log: in CI the log is gone with the machine.
    The server here is a stand-in that fails as `prefect server start` does on a taken port."""
    import sys

    from gpuprices.flows.ops.service import ServerStartError, local_server

    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho "starting"\necho "Port $8 is already in use."\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    port = free_port()
    with pytest.raises(ServerStartError) as err, local_server(tmp_path / "home", port=port,
                                                              ui=False):
        pass
    assert f"port {port} did not start (exited 1)" in str(err.value)
    assert str(err.value).endswith(f"which ends:\nstarting\nPort {port} is already in use.")
