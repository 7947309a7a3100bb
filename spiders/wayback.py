"""Backfill the raw archive from the Internet Archive's Wayback Machine.

For each of a provider's pricing URLs (current and former: `wayback_urls` in its declaration,
spiders/providers/<id>/__init__.py) the CDX API lists the captures
(https://web.archive.org/cdx/search/cdx, JSON output: the first row names the fields); each
capture's original bytes are fetched from its `id_` URL
(https://web.archive.org/web/<timestamp>id_/<original>) and archived under the capture's date
with the ORIGINAL URL, so `gpuprices reparse` reads a 2024 page exactly like one crawled today.

- Resumable: a capture whose (original URL, timestamp) is already in the archive is skipped, so
  a run that was cut resumes where it stopped and a rerun fetches only new captures.
- Polite: one request at a time, a pause between requests, exponential backoff (or the server's
  Retry-After) on 429 and 5xx.
- The Wayback Machine may serve a capture close to the one asked for (a redirect to another
  timestamp): the served timestamp is the capture time recorded; the asked one is kept in the
  origin note so the skip check still recognises it.
- No Scrapy: plain functions and a fetch function passed in (tests pass a fake that serves the
  real captures in tests/fixtures; `urllib_fetch` is the default for live use).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuprices.spiders.archive import Capture, append_captures, archive_path, read_archive
from gpuprices.spiders.registry import wayback_urls

CDX_ENDPOINT = "https://web.archive.org/cdx/search/cdx"
CDX_FIELDS = ("timestamp", "original", "statuscode", "digest", "mimetype")
USER_AGENT = "gpuprices-backfill/0.1 (+https://github.com/; one request at a time)"

_SERVED_TS = re.compile(r"/web/(\d{14})(?:[a-z]{2}_)?/")
_ASKED_NOTE = re.compile(r"asked (\d{14})")
_DROP_HEADERS = {"content-encoding", "transfer-encoding", "content-length", "connection"}


@dataclass(frozen=True)
class CdxRow:
    """One line of a CDX reply."""

    timestamp: str  # YYYYMMDDhhmmss, UTC
    original: str
    statuscode: str = ""
    digest: str = ""
    mimetype: str = ""

    @property
    def captured_at(self) -> dt.datetime:
        return parse_wayback_timestamp(self.timestamp)


@dataclass
class Fetched:
    """What a fetch function returns: status, body, headers and the URL finally served (after
    redirects), from which the served Wayback timestamp is read."""

    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)
    url: str | None = None


Fetch = Callable[[str], Fetched]


@dataclass
class BackfillSummary:
    provider: str
    cdx_rows: int = 0  # distinct captures listed by the CDX API
    skipped: int = 0  # already archived
    archived: list[tuple[str, str]] = field(default_factory=list)  # (original, served ts)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (url, ts, reason)
    files: list[Path] = field(default_factory=list)


def parse_wayback_timestamp(ts: str) -> dt.datetime:
    """'20241115043809' -> 2024-11-15 04:38:09 UTC. Shorter timestamps are padded (CDX allows
    prefixes such as '2024')."""
    ts = ts.strip()
    if not ts.isdigit() or not 4 <= len(ts) <= 14:
        raise ValueError(f"not a Wayback timestamp: {ts!r}")
    padded = (ts + "0101000000"[len(ts) - 4:]) if len(ts) < 14 else ts
    return dt.datetime.strptime(padded, "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)


def _since_param(since: dt.date | dt.datetime | str | None) -> str | None:
    if since is None:
        return None
    if isinstance(since, dt.datetime):
        return since.astimezone(dt.UTC).strftime("%Y%m%d%H%M%S")
    if isinstance(since, dt.date):
        return since.strftime("%Y%m%d")
    text = since.strip().replace("-", "")
    if not text.isdigit() or not 4 <= len(text) <= 14:
        raise ValueError(f"since must be a date (YYYY-MM-DD) or Wayback timestamp, not {since!r}")
    return text


def cdx_query_url(url: str, since: dt.date | dt.datetime | str | None = None) -> str:
    """The CDX API query listing the distinct 200 captures of one URL (since a date if given)."""
    params = [
        ("url", url),
        ("output", "json"),
        ("fl", ",".join(CDX_FIELDS)),
        ("filter", "statuscode:200"),
        # Adjacent captures with the same content hash collapse to the first: one per change.
        ("collapse", "digest"),
    ]
    since_ts = _since_param(since)
    if since_ts:
        params.append(("from", since_ts))
    return f"{CDX_ENDPOINT}?{urllib.parse.urlencode(params)}"


def parse_cdx(body: bytes | str) -> list[CdxRow]:
    """Rows of a CDX JSON reply: a list of lists whose first row names the fields. An empty
    reply (no captures) is `[]` or an empty body. Rows of another length (the blank row and
    resume key of a paged reply) are not captures and are passed over."""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    if not text.strip():
        return []
    data = json.loads(text)
    if not isinstance(data, list):
        raise ValueError("CDX reply is not a JSON list")
    if not data:
        return []
    names = [str(n) for n in data[0]]
    missing = [f for f in ("timestamp", "original") if f not in names]
    if missing:
        raise ValueError(f"CDX reply lacks field(s) {missing}: header row {names}")
    rows = []
    for raw in data[1:]:
        if not isinstance(raw, list) or len(raw) != len(names):
            continue
        rec = dict(zip(names, (str(v) for v in raw), strict=True))
        rows.append(CdxRow(
            timestamp=rec["timestamp"], original=rec["original"],
            statuscode=rec.get("statuscode", ""), digest=rec.get("digest", ""),
            mimetype=rec.get("mimetype", ""),
        ))
    return rows


def clean_original(url: str) -> str:
    """The URL to archive a capture under: CDX keeps default ports ('http://host:80/path')."""
    parts = urllib.parse.urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    if parts.port is not None and parts.port == default:
        host = parts.hostname or ""
        return urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query,
                                        parts.fragment))
    return url


def raw_capture_url(ts: str, original: str) -> str:
    """The URL serving a capture's original bytes (no Wayback toolbar or link rewriting)."""
    return f"https://web.archive.org/web/{ts}id_/{original}"


def served_timestamp(fetched: Fetched, asked: str) -> str:
    """The timestamp of the capture actually served: from the final URL after a redirect, else
    from a Memento-Datetime header, else the one asked for."""
    if fetched.url:
        m = _SERVED_TS.search(fetched.url)
        if m:
            return m.group(1)
    for k, v in fetched.headers:
        if k.lower() == "memento-datetime":
            try:
                when = email.utils.parsedate_to_datetime(v)
            except (TypeError, ValueError):
                break
            return when.astimezone(dt.UTC).strftime("%Y%m%d%H%M%S")
    return asked


def urllib_fetch(url: str, timeout: float = 60.0) -> Fetched:
    """Default fetch for live runs: GET with the standard library, following redirects."""
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (https URLs)
            return Fetched(status=resp.status, body=resp.read(),
                           headers=list(resp.headers.items()), url=resp.geturl())
    except urllib.error.HTTPError as exc:
        return Fetched(status=exc.code, body=exc.read() or b"",
                       headers=list(exc.headers.items()) if exc.headers else [], url=url)


def _retry_after(fetched: Fetched) -> float | None:
    for k, v in fetched.headers:
        if k.lower() == "retry-after" and v.strip().isdigit():
            return float(v.strip())
    return None


def fetch_with_backoff(fetch: Fetch, url: str, sleep: Callable[[float], None] = time.sleep,
                       tries: int = 5, base_delay: float = 10.0,
                       max_delay: float = 600.0) -> Fetched:
    """Fetch once; on 429, 5xx or a network error wait (Retry-After, else base × 2^n) and try
    again, up to `tries` times. Returns the last response (raises the last network error)."""
    last_exc: OSError | None = None
    fetched: Fetched | None = None
    for attempt in range(tries):
        try:
            fetched = fetch(url)
            last_exc = None
        except OSError as exc:  # connection reset, timeout, DNS
            fetched, last_exc = None, exc
        if fetched is not None and not (fetched.status == 429 or fetched.status >= 500):
            return fetched
        if attempt == tries - 1:
            break
        wait = (_retry_after(fetched) if fetched is not None else None) or base_delay * 2**attempt
        sleep(min(wait, max_delay))
    if fetched is None:
        assert last_exc is not None
        raise last_exc
    return fetched


def _known_captures(root: Path, provider: str, day: dt.date,
                    cache: dict[dt.date, set[tuple[str, str]]]) -> set[tuple[str, str]]:
    """(url, timestamp) pairs archived on a day, counting the asked timestamp of a capture the
    Wayback Machine served under another one."""
    if day not in cache:
        found: set[tuple[str, str]] = set()
        path = archive_path(root, provider, day)
        if path.exists():
            for cap in read_archive(path).captures:  # a damaged record still names its URL
                found.add((cap.url, cap.captured_at.astimezone(dt.UTC).strftime("%Y%m%d%H%M%S")))
                m = _ASKED_NOTE.search(cap.origin or "")
                if m:
                    found.add((cap.url, m.group(1)))
        cache[day] = found
    return cache[day]


def _already_archived(root: Path, provider: str, row: CdxRow,
                      cache: dict[dt.date, set[tuple[str, str]]]) -> bool:
    # A redirect can move the served capture across midnight: look at the neighbouring days.
    day = row.captured_at.date()
    key = (clean_original(row.original), row.timestamp)
    return any(key in _known_captures(root, provider, d, cache)
               for d in (day, day - dt.timedelta(days=1), day + dt.timedelta(days=1)))


def backfill(provider: str, archive_root: Path, fetch: Fetch = urllib_fetch,
             since: dt.date | dt.datetime | str | None = None,
             sleep: Callable[[float], None] = time.sleep, pause: float = 4.0,
             tries: int = 5, base_delay: float = 10.0,
             urls: list[str] | None = None) -> BackfillSummary:
    """Archive every Wayback capture of a provider's pricing URLs not yet in the archive.

    The default pause (4 s) keeps to about 15 requests a minute: the Wayback Machine answers
    faster clients with 429 and can block them for a while.

    Asks the CDX API for each URL (`cdx_query_url`), then fetches each new capture's `id_` URL
    one at a time (pausing `pause` seconds between requests, backing off on 429/5xx) and
    appends it to snapshots/<capture date>/<provider>.warc.gz under its original URL and the
    served timestamp, with an origin note naming the Wayback URL. Each capture is archived as
    soon as it is fetched, so an interrupted run loses nothing and the next run resumes.
    """
    root = Path(archive_root)
    summary = BackfillSummary(provider=provider)
    retry = {"sleep": sleep, "tries": tries, "base_delay": base_delay}
    listed = _list_captures(urls if urls is not None else wayback_urls(provider), since, fetch,
                            summary, pause, retry)
    cache: dict[dt.date, set[tuple[str, str]]] = {}
    touched: dict[Path, None] = {}
    for row in listed:
        if _already_archived(root, provider, row, cache):
            summary.skipped += 1
            continue
        sleep(pause)
        try:
            got = fetch_with_backoff(fetch, raw_capture_url(row.timestamp, row.original), **retry)
        except OSError as exc:
            summary.failed.append((row.original, row.timestamp, f"network error: {exc}"))
            continue
        if got.status != 200:
            summary.failed.append((row.original, row.timestamp, f"HTTP {got.status}"))
            continue
        cap, ts = _capture(provider, row, got)
        for path in append_captures(root, [cap]):
            touched[path] = None
            cache.pop(cap.snapshot_date, None)
        summary.archived.append((cap.url, ts))
    summary.files = list(touched)
    return summary


def _list_captures(urls: list[str], since: dt.date | dt.datetime | str | None, fetch: Fetch,
                   summary: BackfillSummary, pause: float, retry: dict) -> list[CdxRow]:
    """The distinct captures the CDX API lists for the URLs, oldest first; a URL whose listing
    fails is recorded in summary.failed and passed over."""
    rows: dict[tuple[str, str], CdxRow] = {}
    for n, url in enumerate(urls):
        if n:
            retry["sleep"](pause)
        query = cdx_query_url(url, since)
        reply = fetch_with_backoff(fetch, query, **retry)
        if reply.status != 200:
            summary.failed.append((query, "", f"CDX HTTP {reply.status}"))
            continue
        try:
            listed = parse_cdx(reply.body)
        except (ValueError, UnicodeDecodeError) as exc:
            summary.failed.append((query, "", f"CDX reply unreadable: {exc}"))
            continue
        for row in listed:
            rows.setdefault((row.original, row.timestamp), row)
    summary.cdx_rows = len(rows)
    return sorted(rows.values(), key=lambda r: (r.timestamp, r.original))


def _capture(provider: str, row: CdxRow, got: Fetched) -> tuple[Capture, str]:
    """The served bytes as a capture of the ORIGINAL URL at the served time, with a note of the
    Wayback URL (and the asked timestamp when the Machine redirected to another); and the served
    timestamp."""
    ts = served_timestamp(got, row.timestamp)
    note = f"Wayback Machine {raw_capture_url(ts, row.original)}"
    if ts != row.timestamp:
        note += f" (asked {row.timestamp}, redirected)"
    if row.digest:
        note += f"; CDX digest {row.digest}"
    headers = [(k, v) for k, v in got.headers if k.lower() not in _DROP_HEADERS]
    if not any(k.lower() == "content-type" for k, _ in headers) and row.mimetype:
        headers.append(("Content-Type", row.mimetype))
    cap = Capture(provider=provider, url=clean_original(row.original), body=got.body,
                  captured_at=parse_wayback_timestamp(ts), status=200, headers=headers,
                  origin=note)
    return cap, ts
