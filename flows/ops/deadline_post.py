"""An HTTP POST with one total deadline, for webhook alerts.

urllib's `timeout` bounds each socket operation, not the request: an endpoint that sends one
byte every 5 s never trips a 10 s timeout and holds the caller (and a run's lock) for as long as
it likes. Here the request runs in a worker thread; when the deadline passes, the sockets it
opened are shut down (the worker's blocked read returns at once) and the caller gets an error.
Proxies from the environment are honoured as urllib does.
"""

from __future__ import annotations

import http.client
import socket
import threading
import urllib.error
import urllib.request


class DeadlineExceeded(TimeoutError):
    pass


def _tracking_opener(sockets: list[socket.socket]) -> urllib.request.OpenerDirector:
    """An opener whose HTTP(S) connections put every socket they connect into `sockets`."""

    def tracked(base: type[http.client.HTTPConnection]) -> type[http.client.HTTPConnection]:
        class Tracked(base):  # type: ignore[misc, valid-type]
            def connect(self) -> None:
                super().connect()
                sockets.append(self.sock)
        return Tracked

    http_conn = tracked(http.client.HTTPConnection)
    https_conn = tracked(http.client.HTTPSConnection)

    class Http(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(http_conn, req)

    class Https(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(https_conn, req, context=self._context)

    return urllib.request.build_opener(Http, Https)


def post(url: str, body: bytes, headers: dict[str, str], deadline_s: float) -> int:
    """POST `body` to `url` and return the HTTP status (an error status too), all within
    `deadline_s` seconds (connecting, sending, the answer's headers and body). Raises
    DeadlineExceeded past it, or the transport's error."""
    sockets: list[socket.socket] = []
    outcome: dict[str, object] = {}
    req = urllib.request.Request(url, data=body, method="POST", headers=headers)

    def work() -> None:
        try:
            with _tracking_opener(sockets).open(req, timeout=deadline_s) as resp:
                resp.read()
                outcome["status"] = resp.status
        except urllib.error.HTTPError as exc:
            outcome["status"] = exc.code
        except BaseException as exc:  # handed to the caller, who decides
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="webhook-post", daemon=True)
    worker.start()
    worker.join(deadline_s)
    if worker.is_alive():
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed
        worker.join(1.0)  # the shut socket ends its read at once; a DNS lookup cannot be cut
        raise DeadlineExceeded(f"no complete answer within the {deadline_s:g} s deadline")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return int(outcome["status"])  # type: ignore[call-overload]
