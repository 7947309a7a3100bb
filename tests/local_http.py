"""A handler base for the tests' local HTTP servers (real captures served on 127.0.0.1, no
network): it logs nothing, so a test's output stays its own, and answers in one call."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status: int, body: bytes, ctype: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
