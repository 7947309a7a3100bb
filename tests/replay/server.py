"""A loopback HTTP server that answers each request with the archived response for its URL.

The crawler's requests keep their real URLs; the loopback handlers (`loopback.py`) only change
where they are sent, and tell the server the original scheme (`X-Replay-Scheme`) and host (the
`Host` header). The server rebuilds the original URL and answers, in this order:

1. **exact**: the archive's latest capture (on or before `as_of`) of that method and URL;
2. **path**: when the archive holds the URL's scheme, host and path only WITHOUT a query string
   (the capture's origin did not record one: Azure's family filters, GCP's pageSize/key), that
   capture; never for a request asking for a further page (`CONTINUATION_KEYS`), which would
   replay page 1 for ever;
3. **derived**: listings the archive does not hold but can answer from what it holds, in the
   publisher's documented format: an AWS region index listing the regions whose offer files are
   archived, and a Wayback CDX reply listing the archived Wayback captures of a URL; the
   Wayback `id_` URL of an archived capture answers with that capture;
4. otherwise **404**, so a plan asking for something the archive lacks fails as it would live.

Faults (`Fault`) injected for a URL replace the next answers to it: an HTTP status (429 with
Retry-After, 503, ...), no answer at all, a body trickled slower than the crawler's timeout, or
a body cut short (the full length announced, half sent, the connection closed). Every request
is recorded in `seen` with what was answered.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from gpuprices.spiders.archive import Capture, list_archives, read_captures
from gpuprices.spiders.wayback import CDX_ENDPOINT, CDX_FIELDS, clean_original

SCHEME_HEADER = "X-Replay-Scheme"
MATCH_HEADER = "X-Replay-Match"
# Query keys that ask for a further page of a listing: `pageToken` of the Cloud Billing Catalog
# API (cloud.google.com/billing/docs/reference/rest/v1/services.skus/list) and `$skip` of the
# Azure Retail Prices API's NextPageLink (learn.microsoft.com/rest/api/cost-management/
# retail-prices/azure-retail-prices).
CONTINUATION_KEYS = {"pageToken", "$skip"}
_DROP_HEADERS = {"content-length", "content-encoding", "transfer-encoding", "connection"}
_WAYBACK_NOTE = re.compile(r"Wayback\b.*?(\d{14})id_")
_WAYBACK_ID = re.compile(r"^/web/(\d{14})id_/(.+)$")
# AWS Price List bulk API paths ("Finding price list files manually", docs.aws.amazon.com/
# awsaccountbilling/latest/aboutv2/using-the-aws-price-list-bulk-api-fetching-price-list-files-
# manually.html): the region index and each region's current offer file.
_AWS_INDEX = re.compile(r"^/offers/v1\.0/(aws|cn)/AmazonEC2/current/region_index\.json$")
_AWS_REGION_FILE = re.compile(r"^/offers/v1\.0/(aws|cn)/AmazonEC2/current/([^/]+)/index\.json$")

Pager = Callable[[str, Capture], bytes]  # (requested URL, archived capture) -> page body


@dataclass
class Fault:
    """What the server does instead of replaying, for the next `times` requests of a URL:
    "status" (answer `status`, with `Retry-After: retry_after` when set), "hang" (read the
    request, never answer), "slow" (headers, then one byte every `interval` s) or "truncate"
    (announce the whole body, send half of it, close the connection)."""

    kind: str
    status: int = 503
    retry_after: int | None = None
    times: int = 1
    interval: float = 1.0


@dataclass
class Seen:
    method: str
    url: str  # the original URL, as the crawler asked for it
    body: bytes | None
    status: int  # the status answered; 0 when no answer was given
    match: str  # exact / path / derived / none / fault:<kind>
    served: Capture | None = None


def _split(url: str) -> urllib.parse.SplitResult:
    return urllib.parse.urlsplit(url)


def cdx_digest(body: bytes) -> str:
    """The CDX `digest` field: base32 of the payload's SHA-1."""
    return base64.b32encode(hashlib.sha1(body).digest()).decode()  # noqa: S324 (CDX's own hash)


def cdx_key(url: str) -> tuple[str, str]:
    """CDX matches a URL without its scheme and a leading www."""
    p = _split(url)
    return (p.hostname or "").removeprefix("www."), p.path + (f"?{p.query}" if p.query else "")


class ReplayIndex:
    """The archive's captures by request, by query-less path and by Wayback timestamp."""

    def __init__(self, root: Path, as_of=None) -> None:
        self.exact: dict[tuple[str, str], Capture] = {}
        self.by_path: dict[tuple[str, str, str, str], Capture] = {}
        self.wayback: dict[tuple[str, str], Capture] = {}
        for day, _provider, path in list_archives(Path(root)):
            if as_of is not None and day > as_of:
                continue
            for cap in read_captures(path):
                self._add(cap)

    @staticmethod
    def _later(old: Capture | None, new: Capture) -> Capture:
        return new if old is None or new.captured_at >= old.captured_at else old

    def _add(self, cap: Capture) -> None:
        key = (cap.method, cap.url)
        self.exact[key] = self._later(self.exact.get(key), cap)
        p = _split(cap.url)
        if not p.query:
            pkey = (cap.method, p.scheme, p.netloc, p.path)
            self.by_path[pkey] = self._later(self.by_path.get(pkey), cap)
        m = _WAYBACK_NOTE.search(cap.origin or "")
        if m:
            self.wayback[(m.group(1), cap.url)] = cap

    def lookup(self, method: str, url: str, paged: bool = False) -> tuple[Capture | None, str]:
        cap = self.exact.get((method, url))
        if cap is not None:
            return cap, "exact"
        p = _split(url)
        asks_next = {k for k, _ in urllib.parse.parse_qsl(p.query)} & CONTINUATION_KEYS
        if asks_next and not paged:
            return None, "none"
        cap = self.by_path.get((method, p.scheme, p.netloc, p.path))
        return (cap, "path") if cap is not None else (None, "none")

    def derived(self, method: str, url: str) -> tuple[bytes, str] | None:
        """(body, content type) of a listing built from the archive, or None."""
        if method != "GET":
            return None
        p = _split(url)
        m = _AWS_INDEX.match(p.path)
        if m:
            return self._aws_region_index(p, m.group(1))
        if url.startswith(CDX_ENDPOINT + "?"):
            return self._cdx(p.query), "application/json"
        return None

    def wayback_capture(self, url: str) -> Capture | None:
        p = _split(url)
        if p.hostname != "web.archive.org":
            return None
        m = _WAYBACK_ID.match(p.path + (f"?{p.query}" if p.query else ""))
        return self.wayback.get((m.group(1), clean_original(m.group(2)))) if m else None

    def _aws_region_index(self, p: urllib.parse.SplitResult, partition: str
                          ) -> tuple[bytes, str] | None:
        regions = sorted(
            r.group(2) for (meth, u) in self.exact
            if meth == "GET" and _split(u).netloc == p.netloc
            and (r := _AWS_REGION_FILE.match(_split(u).path)) and r.group(1) == partition)
        if not regions:
            return None
        # The region index's fields as AWS documents them (page named above).
        doc = {"formatVersion": "v1.0", "disclaimer": "derived by the replay server from the "
               "archived offer files", "regions": {
                   code: {"regionCode": code, "currentVersionUrl":
                          f"/offers/v1.0/{partition}/AmazonEC2/current/{code}/index.json"}
                   for code in regions}}
        return json.dumps(doc).encode(), "application/json"

    def _cdx(self, query: str) -> bytes:
        q = dict(urllib.parse.parse_qsl(query))
        want = cdx_key(q.get("url", ""))
        since = q.get("from", "")
        fields = q.get("fl", ",".join(CDX_FIELDS)).split(",")
        rows = []
        for (ts, url), cap in sorted(self.wayback.items()):
            if cdx_key(url) != want or ts < since.ljust(14, "0")[:14]:
                continue
            rec = {"timestamp": ts, "original": url, "statuscode": str(cap.status),
                   "digest": cdx_digest(cap.body),
                   "mimetype": cap.content_type.split(";")[0].strip()}
            rows.append([rec.get(f, "") for f in fields])
        return json.dumps([fields, *rows] if rows else []).encode()


class ReplayServer:
    """The replay server on 127.0.0.1 (a free port), in a background thread."""

    def __init__(self, index: ReplayIndex) -> None:
        self.index = index
        self.faults: dict[str, list[Fault]] = {}
        self.pagers: dict[str, Pager] = {}  # "scheme://host/path" -> pager
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> ReplayServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def address(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"{host}:{port}"

    def inject(self, url: str, *faults: Fault) -> None:
        with self._lock:
            self.faults.setdefault(url, []).extend(faults)

    def next_fault(self, url: str) -> Fault | None:
        with self._lock:
            queue = self.faults.get(url) or []
            if not queue:
                return None
            fault = queue[0]
            fault.times -= 1
            if fault.times <= 0:
                queue.pop(0)
            return fault

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)

    def answer(self, method: str, url: str) -> tuple[int, list[tuple[str, str]], bytes, str,
                                                     Capture | None]:
        """(status, headers, body, how it matched, archived capture) for a request."""
        p = _split(url)
        pager = self.pagers.get(f"{p.scheme}://{p.netloc}{p.path}")
        cap, how = self.index.lookup(method, url, paged=pager is not None)
        if cap is None:
            cap = self.index.wayback_capture(url)
            how = "exact" if cap is not None else how
        if cap is not None:
            body = pager(url, cap) if pager is not None else cap.body
            headers = [(k, v) for k, v in cap.headers if k.lower() not in _DROP_HEADERS]
            return cap.status, headers, body, how, cap
        derived = self.index.derived(method, url)
        if derived is not None:
            return 200, [("Content-Type", derived[1])], derived[0], "derived", None
        return 404, [("Content-Type", "text/plain")], b"not in the archive\n", "none", None


def _handler_for(server: ReplayServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        do_POST = do_HEAD = do_GET

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            scheme = self.headers.get(SCHEME_HEADER, "http")
            # The URL as the crawler asked for it, a default port dropped (Azure's NextPageLink
            # names :443) so that it matches the archived one.
            url = clean_original(f"{scheme}://{self.headers.get('Host', '')}{self.path}")
            fault = server.next_fault(url)
            if fault is not None:
                seen = Seen(self.command, url, body, 0, f"fault:{fault.kind}")
                server.record(seen)  # now: a hung request never returns to be recorded
                seen.status = _fault(self, server, fault, url)
                return
            status, headers, payload, how, cap = server.answer(self.command, url)
            server.record(Seen(self.command, url, body, status, how, cap))
            self._send(status, headers + [(MATCH_HEADER, how)], payload)

        def _send(self, status: int, headers: list[tuple[str, str]], payload: bytes) -> None:
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

    return Handler


def _fault(h: BaseHTTPRequestHandler, server: ReplayServer, fault: Fault, url: str) -> int:
    """Carry out a fault on one request; the status sent (0 when none was)."""
    if fault.kind == "status":
        extra = [("Retry-After", str(fault.retry_after))] if fault.retry_after is not None else []
        h._send(fault.status, [("Content-Type", "text/plain"), *extra],  # type: ignore[attr-defined]
                f"replay: injected HTTP {fault.status}\n".encode())
        return fault.status
    h.close_connection = True
    if fault.kind == "hang":
        server.stopping.wait(120)  # until the crawler gives up and the test ends
        return 0
    status, headers, payload, _, _ = server.answer(h.command, url)
    h.send_response(status)
    for k, v in headers:
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(payload)))
    h.end_headers()
    try:
        if fault.kind == "truncate":
            h.wfile.write(payload[: len(payload) // 2])
            h.wfile.flush()
        elif fault.kind == "slow":
            for i in range(len(payload)):
                h.wfile.write(payload[i:i + 1])
                h.wfile.flush()
                if server.stopping.wait(fault.interval):
                    break
        else:
            raise ValueError(f"unknown fault kind {fault.kind!r}")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the crawler gave up first, as it should
    return status
