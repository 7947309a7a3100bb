"""Sending alerts within one total deadline.

Per-socket timeouts (urllib3's, smtplib's) bound each read, not the whole send: an endpoint that
answers one byte every 5 s never trips a 10 s read timeout and holds the caller (and a run's
lock) for as long as it likes. `run` calls the sender in a worker thread; every socket that
thread connects (through urllib3, which Apprise's HTTP plugins use via requests, or through
socket.create_connection, which smtplib uses) is noted, and when the deadline passes those
sockets are shut down (the blocked read returns at once) and the caller gets DeadlineExceeded.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import TypeVar

import urllib3.util.connection as u3

T = TypeVar("T")

_tracked = threading.local()  # .sockets: the list the current worker thread fills
_install_lock = threading.Lock()
_installed = False


class DeadlineExceeded(TimeoutError):
    pass


def _noting(connect: Callable[..., socket.socket]) -> Callable[..., socket.socket]:
    def wrapper(*args, **kwargs) -> socket.socket:
        sock = connect(*args, **kwargs)
        found = getattr(_tracked, "sockets", None)
        if found is not None:  # only inside a deadline worker; everyone else is untouched
            found.append(sock)
        return sock
    return wrapper


def _install() -> None:
    """Wrap the two connect functions once per process (idempotent)."""
    global _installed
    with _install_lock:
        if _installed:
            return
        u3.create_connection = _noting(u3.create_connection)
        socket.create_connection = _noting(socket.create_connection)
        _installed = True


def run(send: Callable[[], T], deadline_s: float) -> T:
    """`send()`'s result, all within `deadline_s` seconds; DeadlineExceeded past it, or the
    sender's own exception."""
    _install()
    sockets: list[socket.socket] = []
    outcome: dict[str, object] = {}

    def work() -> None:
        _tracked.sockets = sockets
        try:
            outcome["value"] = send()
        except BaseException as exc:  # handed to the caller, who decides
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="alert-send", daemon=True)
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
    return outcome["value"]  # type: ignore[return-value]
