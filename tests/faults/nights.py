"""Things outside the pipeline that stall or break a night, shared by tests/test_nights.py and
bench/fault_probes/nights.py: another process reading the warehouse, a webhook that trickles
bytes, a full disk, no name resolution.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import duckdb
import pyarrow.parquet as pq

from gpuprices.warehouse import db, lock_wait, store

EARLIER = dt.date(2026, 8, 10)  # the Runpod pricing page's capture before the API night

# A name that never resolves: RFC 6761 reserves .invalid, and resolvers answer NXDOMAIN for it
# (offline they fail too). As the proxy of every request, it makes the crawl's first step, the
# name lookup, fail the way a machine without DNS does.
NO_DNS_PROXY = "http://proxy.invalid:3128"
NO_DNS_ENV = {"http_proxy": NO_DNS_PROXY, "https_proxy": NO_DNS_PROXY, "no_proxy": ""}
# The live crawls of these tests meet a proxy that fails at once: no politeness is owed, so the
# crawler (spiders/crawl.py reads GPUPRICES_CRAWL_SETTINGS) runs them without its download delay
# and AutoThrottle's start delay. Its retry policy (RETRY_TIMES, which errors) stays its own.
NO_PAUSES_ENV = {
    "GPUPRICES_CRAWL_SETTINGS": json.dumps({"DOWNLOAD_DELAY": 0, "AUTOTHROTTLE_ENABLED": False}),
}

_HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute("SELECT count(*) FROM offers").fetchall()
print("holding", flush=True)
if float(sys.argv[2]) > 0:
    time.sleep(float(sys.argv[2]))
else:
    sys.stdin.read()
"""


@contextlib.contextmanager
def reader_holding(db_path: Path, for_s: float = 0) -> Iterator[subprocess.Popen]:
    """Another process (as `gpuprices sql` is) holding the warehouse open read-only: until the
    block ends (for_s=0), or for `for_s` seconds and then closing it by itself."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(db_path), str(for_s)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        if line.strip() != "holding":
            raise RuntimeError("the reader could not open the warehouse")
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()


@contextlib.contextmanager
def reader_until_waited_on(db_path: Path) -> Iterator[subprocess.Popen]:
    """A reader holding the warehouse (reader_holding) until a load in this process says it is
    waiting for it (connect_when_free's on_wait, after it met the held file), then closing: the
    load meets the reader for sure, and waits only as long as it takes the reader to go."""
    with reader_holding(db_path) as proc:
        real = lock_wait.connect_when_free

        def connect_when_free(path, max_wait_s, on_wait=None, **kw):
            def waited(message: str) -> None:
                if on_wait is not None:
                    on_wait(message)
                proc.stdin.close()  # the reader reads to the end of its input, then exits

            return real(path, max_wait_s, on_wait=waited, **kw)

        with mock.patch.object(lock_wait, "connect_when_free", connect_when_free):
            yield proc


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


def _enospc(*_a, **_k):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _duck_full(*_a, **_k):
    # DuckDB's own words when a write hits a full disk.
    raise duckdb.IOException('Could not write file "warehouse.duckdb.wal": '
                             "No space left on device")


@contextlib.contextmanager
def disk_full(data_dir: Path) -> Iterator[None]:
    """Every write of a run under `data_dir` fails as on a full disk: the lake's Parquet files,
    the warehouse's loads and records, and plain files (the run's journal and summary), after
    some bytes of the summary reached its hidden `.part` file."""
    real_write_text = Path.write_text

    def write_text(self, data, *a, **k):
        if not str(self).startswith(str(data_dir)):
            return real_write_text(self, data, *a, **k)
        real_write_text(self, data[:100], *a, **k)  # the first bytes made it
        _enospc()

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(pq, "write_table", _enospc))
        stack.enter_context(mock.patch.object(store, "_insert_offers", _duck_full))
        stack.enter_context(mock.patch.object(db, "record_run", _duck_full))
        stack.enter_context(mock.patch.object(db, "open_run", _duck_full))
        stack.enter_context(mock.patch.object(Path, "write_text", write_text))
        yield


def elapsed(fn, *args, **kwargs):
    """(result, seconds) of a call: for the bench's figures, never a test's assertion."""
    t0 = time.monotonic()
    out = fn(*args, **kwargs)
    return out, time.monotonic() - t0
