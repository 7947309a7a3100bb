"""The raw archive: every response, as WARC records, one file per provider per day.

`snapshots/<YYYY-MM-DD>/<provider>.warc.gz` holds, for each capture, a `response` record (status,
headers, body, capture time, SHA-256 of the body) and a `request` record (method, URL and body:
GraphQL is a POST). A rerun on the same day appends; nothing already archived is ever rewritten
in place: the new file is built beside the old one and renamed over it.

On object storage (an `s3://bucket/prefix` root, warehouse/objstore.py) a day file is one object:
an append reads it with its ETag and writes old bytes + new records back on condition that it is
still that version (If-Match; If-None-Match for a new day file; objstore.StorePath.append). A
writer that finds it changed meanwhile reads it again and retries, so two writers of the same
day never drop each other's records.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import io
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from gpuprices.warehouse import objstore
from gpuprices.warehouse.contract import CaptureMeta

H_PROVIDER = "X-Gpuprices-Provider"
H_SHA256 = "X-Gpuprices-Payload-SHA256"
H_ORIGIN = "X-Gpuprices-Origin"
H_RENDERED = "X-Gpuprices-Rendered"
# A capture that holds only part of what its source listed (a hand-trimmed excerpt, one page of
# several, a diff), with what is missing: offers absent from it were not read, not withdrawn.
H_PARTIAL = "X-Gpuprices-Partial"

# The largest decoded body read, whatever its path into the pipeline (a live fetch, an import, a
# replayed record): 50 MiB, 25x the largest real page bundled (the AWS EC2 offer file of one
# region, about 2 MB) and the crawl's DOWNLOAD_MAXSIZE (spiders/crawl.py uses this constant).
# A record whose body decodes to more (a gzip bomb: 1.5 GB of zeros in a 3.5 KB file) is a
# failed capture, read no further than the cap.
MAX_BODY_BYTES = 50 * 1024 * 1024

# How far a capture's time may run ahead of this machine's clock and still count as "now": the
# tolerance Kerberos allows between hosts by default (MIT krb5.conf `clockskew`, 300 s). A capture
# dated later than that is refused: it would outrank every real snapshot as the "latest".
FUTURE_SKEW = dt.timedelta(minutes=5)

_REASONS = {200: "OK", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error"}


@dataclass
class Capture:
    """One archived response and the request that produced it."""

    provider: str
    url: str
    body: bytes
    captured_at: dt.datetime
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    method: str = "GET"
    request_body: bytes | None = None
    origin: str | None = None  # where an imported capture came from (SOURCES line)
    rendered: bool = False  # body is a DOM rendered by a browser, not the bytes served
    # Why the body holds only part of what the source listed (H_PARTIAL), else None.
    partial: str | None = None
    sha256: str = ""
    # Why the archived record cannot be trusted (cut short, a digest that does not match, a
    # body over MAX_BODY_BYTES or in an encoding that cannot be decoded), else None. A damaged
    # capture is a failed capture: its body (empty) is never parsed.
    damaged: str | None = None

    def __post_init__(self) -> None:
        if self.captured_at.tzinfo is None:
            raise ValueError("captured_at must be timezone-aware")
        if not self.sha256:
            self.sha256 = hashlib.sha256(self.body).hexdigest()

    @property
    def snapshot_date(self) -> dt.date:
        return self.captured_at.astimezone(dt.UTC).date()

    @property
    def content_type(self) -> str:
        for k, v in self.headers:
            if k.lower() == "content-type":
                return v
        return ""

    def meta(self) -> CaptureMeta:
        return CaptureMeta(
            provider=self.provider,
            url=self.url,
            captured_at=self.captured_at,
            sha256=self.sha256,
            method=self.method,
            request_body=self.request_body,
            status=self.status,
            content_type=self.content_type,
        )


class FutureCaptureError(ValueError):
    """A capture dated later than now (beyond FUTURE_SKEW)."""


def after_now(ts: dt.datetime, now: dt.datetime | None = None) -> bool:
    """Whether a capture time lies later than now, beyond the clock skew allowed."""
    return ts > (now or dt.datetime.now(dt.UTC)) + FUTURE_SKEW


def future_problem(ts: dt.datetime, now: dt.datetime | None = None) -> str | None:
    """Why a capture time cannot be archived or replayed, or None."""
    now = now or dt.datetime.now(dt.UTC)
    if not after_now(ts, now):
        return None
    return (f"captured at {ts.astimezone(dt.UTC):%Y-%m-%dT%H:%M:%SZ}, later than now "
            f"({now:%Y-%m-%dT%H:%M:%SZ}, {FUTURE_SKEW.total_seconds():g} s of clock skew "
            f"allowed): refused")


def archive_path(root: Path | str, provider: str, day: dt.date) -> Path:
    return objstore.location(root) / day.isoformat() / f"{provider}.warc.gz"


def _warc_date(ts: dt.datetime) -> str:
    return ts.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _write_records(writer: WARCWriter, cap: Capture) -> None:
    status_line = f"{cap.status} {_REASONS.get(cap.status, 'Status')}"
    http_headers = StatusAndHeaders(status_line, list(cap.headers), protocol="HTTP/1.1")
    warc_headers = {
        "WARC-Date": _warc_date(cap.captured_at),
        H_PROVIDER: cap.provider,
        H_SHA256: cap.sha256,
    }
    if cap.origin:
        warc_headers[H_ORIGIN] = cap.origin
    if cap.rendered:
        warc_headers[H_RENDERED] = "true"
    if cap.partial:
        warc_headers[H_PARTIAL] = cap.partial
    resp = writer.create_warc_record(
        cap.url,
        "response",
        payload=io.BytesIO(cap.body),
        http_headers=http_headers,
        warc_headers_dict=warc_headers,
    )
    writer.write_record(resp)
    path = cap.url.split("/", 3)[3] if cap.url.count("/") >= 3 else ""
    host = cap.url.split("/")[2] if cap.url.count("/") >= 2 else ""
    req_headers = StatusAndHeaders(
        f"{cap.method} /{path} HTTP/1.1", [("Host", host)], is_http_request=True
    )
    req = writer.create_warc_record(
        cap.url,
        "request",
        payload=io.BytesIO(cap.request_body or b""),
        http_headers=req_headers,
        warc_headers_dict={
            "WARC-Date": _warc_date(cap.captured_at),
            "WARC-Concurrent-To": resp.rec_headers.get_header("WARC-Record-ID"),
        },
    )
    writer.write_record(req)


def append_captures(root: Path, captures: Iterable[Capture]) -> list[Path]:
    """Archive captures under their provider and capture date. Returns the files touched.

    Each day file is rebuilt as old bytes + new records in a `.part` file and renamed over the
    old one, so a crash leaves either the old archive or the new one, never half of either.
    Raises FutureCaptureError, before writing anything, for a capture dated later than now.
    """
    captures = list(captures)
    for cap in captures:
        problem = future_problem(cap.captured_at)
        if problem:
            raise FutureCaptureError(f"{cap.provider}: {cap.url}: {problem}")
    groups: dict[Path, list[Capture]] = {}
    for cap in captures:
        groups.setdefault(archive_path(root, cap.provider, cap.snapshot_date), []).append(cap)
    for path, caps in groups.items():
        _append_to_day_file(path, functools.partial(_write_warc, caps=caps))
    return list(groups)


class ArchiveReadError(ValueError):
    """An archive file, or a record in it, that cannot be read whole."""


@dataclass
class ArchiveRead:
    """What one archive file holds: its captures in the order written (damaged ones marked,
    Capture.damaged) and what made the file itself unreadable past some point."""

    captures: list[Capture]
    problems: list[str] = field(default_factory=list)

    @property
    def damaged(self) -> list[Capture]:
        return [c for c in self.captures if c.damaged]


def _said(exc: BaseException, limit: int = 160) -> str:
    """An exception as one short printable line: warcio quotes the bytes it could not read,
    which may be anything (random bytes appended to a file)."""
    text = "".join(ch if ch.isprintable() and ord(ch) < 128 else "?" for ch in str(exc))
    text = text if len(text) <= limit else text[:limit] + "..."
    return f"{type(exc).__name__}: {text}"


def _drain(stream) -> None:
    while stream.read(1024 * 1024):
        pass


def _read_body(rec, limit: int = MAX_BODY_BYTES) -> tuple[bytes, str | None]:
    """A record's decoded body and why it cannot be trusted, or None. Checks, beyond what warcio
    returns: the body decodes (Content-Encoding) to at most `limit` bytes, read no further; the
    block is as long as its Content-Length (a file cut short gives back the part it holds);
    the WARC-Block-Digest and WARC-Payload-Digest match (warcio's check_digests)."""
    try:
        body = rec.content_stream().read(limit + 1)
    except Exception as exc:  # an encoding warcio cannot decode (brotli 1.2: AttributeError)
        enc = rec.http_headers.get_header("Content-Encoding") if rec.http_headers else None
        return b"", (f"body could not be decoded (Content-Encoding {enc or 'none'}): "
                     f"{_said(exc)}")
    if len(body) > limit:
        return b"", f"body decodes to more than {limit:,} bytes (the cap): not read further"
    try:
        _drain(rec.raw_stream)  # the rest of the block, for the length and digest checks
    except Exception as exc:
        return b"", f"record could not be read to its end: {_said(exc)}"
    length = rec.rec_headers.get_header("Content-Length")
    missing = getattr(rec.raw_stream, "limit", 0)
    if missing:
        return b"", (f"record cut short: {int(length) - missing:,} of {int(length):,} bytes "
                     f"(Content-Length) in the archive")
    checker = rec.digest_checker
    if checker is not None and checker.passed is False:
        return b"", f"record does not match its recorded digest ({'; '.join(checker.problems)})"
    return body, None


def read_archive(path: Path, limit_for: Callable[[str], int] | None = None) -> ArchiveRead:
    """Every capture in one archive file, in the order written, each checked whole
    (_read_body): a record that is cut short, fails its digest or decodes past the cap is a
    capture marked damaged, with an empty body. What stops the file being read further (bytes
    that are no WARC record after the last one, a gzip member cut short) is a problem of the
    file; the captures read before it are kept. `limit_for(url)`: the cap of a URL's body
    (registry.body_cap), MAX_BODY_BYTES without it."""
    pending: dict[str, Capture] = {}
    order: list[str] = []
    problems: list[str] = []
    path = objstore.location(path)
    n = 0
    try:
        with path.open("rb") as fh:
            for rec in ArchiveIterator(fh, check_digests=True):
                n += 1
                if rec.rec_type == "response":
                    rid = rec.rec_headers.get_header("WARC-Record-ID")
                    http = rec.http_headers
                    url = rec.rec_headers.get_header("WARC-Target-URI")
                    body, damaged = _read_body(rec, limit_for(url) if limit_for else
                                               MAX_BODY_BYTES)
                    sha = hashlib.sha256(body).hexdigest()
                    recorded = rec.rec_headers.get_header(H_SHA256)
                    if not damaged and recorded and recorded != sha:
                        damaged = (f"body SHA-256 {sha[:12]}... does not match the recorded "
                                   f"{recorded[:12]}...")
                    if damaged:
                        body, sha = b"", recorded or sha
                    ts = dt.datetime.fromisoformat(
                        rec.rec_headers.get_header("WARC-Date").replace("Z", "+00:00")
                    )
                    pending[rid] = Capture(
                        provider=rec.rec_headers.get_header(H_PROVIDER) or path.name.split(".")[0],
                        url=url,
                        body=body,
                        captured_at=ts,
                        status=int(http.get_statuscode() or 0) if http else 0,
                        headers=list(http.headers) if http else [],
                        origin=rec.rec_headers.get_header(H_ORIGIN),
                        rendered=rec.rec_headers.get_header(H_RENDERED) == "true",
                        partial=rec.rec_headers.get_header(H_PARTIAL) or None,
                        sha256=sha,
                        damaged=damaged,
                    )
                    order.append(rid)
                elif rec.rec_type == "request":
                    target = rec.rec_headers.get_header("WARC-Concurrent-To")
                    cap = pending.get(target)
                    body, damaged = _read_body(rec)
                    if cap is not None:
                        cap.method = rec.http_headers.protocol if rec.http_headers else "GET"
                        cap.request_body = body or None
                        if damaged and not cap.damaged:
                            cap.damaged = f"its request record: {damaged}"
    except Exception as exc:  # not a WARC record, a gzip member cut short, a store read failed
        problems.append(f"{path}: unreadable after record {n}: {_said(exc)}")
    return ArchiveRead([pending[rid] for rid in order], problems)


def read_captures(path: Path, limit_for: Callable[[str], int] | None = None
                  ) -> Iterator[Capture]:
    """Every capture in one archive file, in the order it was written. Raises ArchiveReadError
    (naming the file and the record) when any record or the file cannot be read whole: callers
    that must go on past a damaged file use read_archive."""
    read = read_archive(path, limit_for)
    bad = [f"{path}: {c.url} captured at {_warc_date(c.captured_at)}: {c.damaged}"
           for c in read.damaged] + read.problems
    if bad:
        raise ArchiveReadError("; ".join(bad))
    yield from read.captures


def captures_per_request(captures: Iterable[Capture]) -> list[list[Capture]]:
    """The captures of each distinct request (method, URL, body) of a day, newest first; the
    requests in the order of their newest capture."""
    groups: dict[tuple[str, str, bytes | None], list[Capture]] = {}
    for cap in captures:
        groups.setdefault((cap.method, cap.url, cap.request_body), []).append(cap)
    # Among captures of the same second, the one archived last is the newer.
    ordered = [sorted(g, key=lambda c: c.captured_at, reverse=True)
               for g in ([*reversed(g)] for g in groups.values())]
    return sorted(ordered, key=lambda g: (g[0].captured_at, g[0].url))


def latest_per_request(captures: Iterable[Capture]) -> list[Capture]:
    """The last capture of each distinct request (method, URL, body) of a day: a rerun that
    fetched a page again supersedes the earlier fetch for parsing, but both stay archived."""
    return [group[0] for group in captures_per_request(captures)]


def list_archives(root: Path) -> list[tuple[dt.date, str, Path]]:
    """(snapshot date, provider, path) of every archive file under root, oldest first."""
    found = []
    root = objstore.location(root)
    if isinstance(root, objstore.StorePath):
        for path, _info in root.walk():
            day_name, _, name = path.key[len(root.key):].strip("/").partition("/")
            with contextlib.suppress(ValueError):
                if name.endswith(".warc.gz") and "/" not in name:
                    found.append((dt.date.fromisoformat(day_name), name.removesuffix(".warc.gz"),
                                  path))
        return sorted(found, key=lambda item: (item[0], item[1]))
    if not root.is_dir():
        return found
    for day_dir in sorted(root.iterdir()):
        try:
            day = dt.date.fromisoformat(day_dir.name)
        except ValueError:
            continue
        for f in sorted(day_dir.glob("*.warc.gz")):
            found.append((day, f.name.removesuffix(".warc.gz"), f))
    return found


class ArchiveSession:
    """Archive responses as they arrive during a crawl, one `.part` file per day file, merged
    into the day file when the session closes. A session that died leaves its `.part` behind;
    the next session on that folder merges it first, so no fetched response is lost.

    On object storage the `.part` files are spooled on local disk (`spool`, else
    $GPUPRICES_SPOOL, else the system's temporary folder) and appended to the day object by
    compare-and-swap when the session closes; the next session for the same store and provider
    appends what a killed one left. A crash between that append and removing the spool file
    appends those records twice: identical records of one request, which parsing reads once
    (latest_per_request)."""

    def __init__(self, root: Path | str, provider: str, spool: Path | str | None = None) -> None:
        self.root = objstore.location(root)
        self.provider = provider
        self.spool = _spool_dir(self.root, spool)
        self._open: dict[Path, tuple[Path, object, WARCWriter]] = {}
        self.written = 0
        self.recover()

    def _part_for(self, path: Path) -> Path:
        if isinstance(path, objstore.StorePath):
            # The day's folder and file name, under this store location's spool.
            path = self.spool / path.parent.name / path.name
        return path.with_name(f"{path.name}.session-{os.getpid()}.part")

    def write(self, cap: Capture) -> None:
        path = archive_path(self.root, cap.provider, cap.snapshot_date)
        if path not in self._open:
            part = self._part_for(path)
            part.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            fh = part.open("ab")
            self._open[path] = (part, fh, WARCWriter(fh, gzip=True, warc_version="1.1"))
        _, fh, writer = self._open[path]
        _write_records(writer, cap)
        fh.flush()
        os.fsync(fh.fileno())
        self.written += 1

    def close(self) -> list[Path]:
        done = []
        for path, (part, fh, _) in self._open.items():
            fh.close()
            _merge_part(path, part)
            done.append(path)
        self._open.clear()
        return done

    def recover(self) -> None:
        """Merge `.part` files left by sessions that did not close."""
        base = self.spool if isinstance(self.root, objstore.StorePath) else self.root
        if not base.is_dir():
            return
        for part in base.glob(f"*/{self.provider}.warc.gz.session-*.part"):
            pid = part.name.rsplit("session-", 1)[1].removesuffix(".part")
            if pid.isdigit() and _pid_alive(int(pid)):
                continue
            name = f"{self.provider}.warc.gz"
            target = (self.root / part.parent.name / name
                      if isinstance(self.root, objstore.StorePath) else part.with_name(name))
            _merge_part(target, part)


SPOOL_ENV = "GPUPRICES_SPOOL"


def _spool_dir(root: Path | objstore.StorePath, spool: Path | str | None) -> Path:
    """Where a session on object storage spools its records: one folder per bucket and prefix,
    so sessions for different stores never merge into each other's day files."""
    if not isinstance(root, objstore.StorePath):
        return Path(root)
    base = Path(spool or os.environ.get(SPOOL_ENV)
                or Path(tempfile.gettempdir()) / "gpuprices-spool")
    return base / root.bucket / (root.key or "_")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def _write_warc(out, caps: list[Capture]) -> None:
    writer = WARCWriter(out, gzip=True, warc_version="1.1")
    for cap in caps:
        _write_records(writer, cap)


def _append_to_day_file(path: Path | objstore.StorePath, write_new) -> None:
    """Append what `write_new(fh)` writes to a day file. On disk: old bytes + new ones in a
    `.part` beside it, fsynced, renamed over it (a crash leaves the old file or the new one).
    On object storage: one compare-and-swap append (never overwriting another writer's)."""
    if isinstance(path, objstore.StorePath):
        buf = io.BytesIO()
        write_new(buf)
        path.append(buf.getvalue(), what="archive day file")
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    tmp = path.with_name(path.name + ".merge.part")
    with tmp.open("wb") as out:
        if path.exists():
            with path.open("rb") as old:
                shutil.copyfileobj(old, out)
        write_new(out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def _merge_part(path: Path | objstore.StorePath, part: Path) -> None:
    def copy_part(out) -> None:
        with part.open("rb") as fh:
            shutil.copyfileobj(fh, out)

    _append_to_day_file(path, copy_part)
    part.unlink()
