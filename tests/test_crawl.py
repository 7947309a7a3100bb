"""The live crawler against a local server that serves real captures (no network)."""

import gzip
import json
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from gpuprices.spiders.archive import list_archives, read_captures
from gpuprices.spiders.crawl import redact_url
from tests.local_http import QuietHandler

FIX = Path(__file__).parent / "fixtures" / "raw" / "runpod"
API_BODY = (FIX / "runpod_graphql_gpuTypes_ewyluda_fixture.json").read_bytes()
PAGE_BODY = (FIX / "runpod_io_pricing_wayback_20260810082317_jsonld.html").read_bytes()
FAST = json.dumps({"RETRY_TIMES": 1, "DOWNLOAD_DELAY": 0, "AUTOTHROTTLE_ENABLED": False,
                   "ROBOTSTXT_OBEY": False, "DOWNLOAD_TIMEOUT": 5})


class Handler(QuietHandler):
    seen: list = []

    def do_GET(self):
        Handler.seen.append(("GET", self.path, None))
        if self.path.startswith("/pricing"):
            self._send(200, PAGE_BODY, "text/html; charset=utf-8")
        else:
            self._send(500, b"oops", "text/plain")

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Handler.seen.append(("POST", self.path, body))
        self._send(200, API_BODY, "application/json")


@pytest.fixture(scope="module")
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def _crawl(tmp_path, plan):
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    out = tmp_path / "summary.json"
    proc = subprocess.run(
        [sys.executable, "-m", "gpuprices.spiders.crawl", "--provider", "runpod", "--archive-root",
         str(tmp_path / "snap"), "--plan", str(tmp_path / "plan.json"), "--summary", str(out),
         "--settings", FAST],
        capture_output=True, text=True, timeout=120)
    return proc.returncode, json.loads(out.read_text())


def test_crawl_archives_post_and_get_before_parsing(server, tmp_path):
    query = '{"query": "{ gpuTypes { id securePrice } }"}'
    code, summary = _crawl(tmp_path, [
        {"url": f"{server}/graphql", "method": "POST", "body": query,
         "headers": {"Content-Type": "application/json"}},
        {"url": f"{server}/pricing"},
    ])
    assert code == 0, summary
    assert sorted(a["status"] for a in summary["archived"]) == [200, 200]
    ((_, provider, path),) = list_archives(tmp_path / "snap")
    assert provider == "runpod"
    caps = {c.method: c for c in read_captures(path)}
    assert caps["POST"].request_body == query.encode() and caps["POST"].body == API_BODY
    assert caps["GET"].body == PAGE_BODY
    assert not list((tmp_path / "snap").glob("*/*.part"))


def test_server_error_is_archived_retried_and_reported(server, tmp_path):
    Handler.seen.clear()
    code, summary = _crawl(tmp_path, [{"url": f"{server}/broken"}])
    assert code == 1
    assert summary["errors"] == [{"url": f"{server}/broken", "error": "HTTP 500"}]
    assert len([s for s in Handler.seen if s[1] == "/broken"]) == 2  # first try + 1 retry
    ((_, _, path),) = list_archives(tmp_path / "snap")
    assert [c.status for c in read_captures(path)] == [500]  # the raw response is kept


def test_unreachable_host_fails_with_the_url(tmp_path):
    code, summary = _crawl(tmp_path, [{"url": "http://127.0.0.1:9/pricing"}])
    assert code == 1 and not summary["archived"]
    (e,) = summary["errors"]
    assert e["url"] == "http://127.0.0.1:9/pricing" and "refused" in e["error"].lower()


def test_secret_parameters_reach_the_server_but_never_the_archive(server, tmp_path):
    Handler.seen.clear()
    code, summary = _crawl(tmp_path, [
        {"url": f"{server}/pricing?pageSize=5000", "meta": {"secret_params": {"key": "S3KR1T"}}}])
    assert code == 0
    assert any("key=S3KR1T" in s[1] for s in Handler.seen)
    ((_, _, path),) = list_archives(tmp_path / "snap")
    assert b"S3KR1T" not in gzip.open(path).read()
    assert "S3KR1T" not in json.dumps(summary)


def test_redact_url_drops_keys_only():
    assert redact_url("https://x/skus?key=abc&pageSize=5000") == "https://x/skus?pageSize=5000"
