"""A page rendered by real headless Chromium (Debian's, through scrapy-playwright) is archived as
its rendered DOM, and the prices in it reach the parser. The server is local and serves a real
capture; nothing leaves the machine."""

import json
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gpuprices.spiders.archive import list_archives, read_captures
from gpuprices.spiders.parsers import parse_body
from tests.conftest import needs_chromium

pytestmark = needs_chromium

RAW = Path(__file__).parent / "fixtures" / "raw"
CAPTURE = "lambda_ai_pricing_wayback_20260109103934_excerpt.html"


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    handler = partial(QuietHandler, directory=str(RAW / "lambda"))
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_browser_rendered_page_is_archived_and_parsed(server, tmp_path):
    plan = [{"url": f"{server}/{CAPTURE}", "browser": True}]
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    settings = json.dumps({"ROBOTSTXT_OBEY": False, "DOWNLOAD_DELAY": 0,
                           "AUTOTHROTTLE_ENABLED": False, "RETRY_TIMES": 0})
    proc = subprocess.run(
        [sys.executable, "-m", "gpuprices.spiders.crawl", "--provider", "lambda", "--archive-root",
         str(tmp_path / "snap"), "--plan", str(tmp_path / "plan.json"), "--summary",
         str(tmp_path / "summary.json"), "--settings", settings],
        capture_output=True, text=True, timeout=180)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert proc.returncode == 0, (summary, proc.stderr[-3000:])
    ((_, _, path),) = list_archives(tmp_path / "snap")
    (cap,) = list(read_captures(path))
    assert cap.rendered  # the WARC record says the body is a rendered DOM
    assert cap.body.lstrip().lower().startswith(b"<html")  # the browser's serialisation
    assert cap.body != (RAW / "lambda" / CAPTURE).read_bytes()
    offers = parse_body(cap.body, cap.meta())
    by_sku = {o.sku: o for o in offers}
    assert by_sku["8x NVIDIA H100 SXM 80 GB"].price_per_gpu_hour == 2.99
    assert by_sku["8x NVIDIA B200 SXM6 180 GB"].price_per_gpu_hour == 4.99
