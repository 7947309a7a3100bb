"""Things outside the pipeline that stall or break a night, for tests/test_nights.py: a webhook
that trickles bytes, no name resolution.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

# A name that never resolves: RFC 6761 reserves .invalid, and resolvers answer NXDOMAIN for it
# (offline they fail too). As the proxy of every request, it makes the crawl's first step, the
# name lookup, fail the way a machine without DNS does.
NO_DNS_PROXY = "http://proxy.invalid:3128"
NO_DNS_ENV = {"http_proxy": NO_DNS_PROXY, "https_proxy": NO_DNS_PROXY, "no_proxy": ""}


@contextlib.contextmanager
def trickling_webhook(gap_s: float = 5.0, body_bytes: int = 1000
                      ) -> Iterator[tuple[str, threading.Event]]:
    """A loopback endpoint that reads the POST, then answers (200, `body_bytes` of body) one
    byte every `gap_s` seconds: a per-read timeout longer than the gap never fires. Yields its
    URL and an event set if the client hung up before the whole answer was sent."""
    srv = socket.create_server(("127.0.0.1", 0))
    hung_up = threading.Event()
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
              + f"Content-Length: {body_bytes}\r\n\r\n".encode() + b"o" * body_bytes)

    def serve() -> None:
        try:
            conn, _ = srv.accept()
        except OSError:
            return
        with conn:
            _read_request(conn)
            for byte in answer:
                try:
                    conn.sendall(bytes([byte]))
                    # The pause is a read: a peer that shut its socket ends it at once.
                    conn.settimeout(gap_s)
                    if conn.recv(1) == b"":
                        hung_up.set()
                        return
                except TimeoutError:
                    continue
                except OSError:
                    hung_up.set()
                    return

    worker = threading.Thread(target=serve, daemon=True)
    worker.start()
    try:
        yield f"http://127.0.0.1:{srv.getsockname()[1]}/services/T0/B0/trickle", hung_up
    finally:
        srv.close()


def _read_request(conn: socket.socket) -> None:
    """Read one HTTP request, head and Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk
