"""Wrap captures made elsewhere (a Wayback copy, a recorded API reply) into the raw archive,
under their original URL and capture date, with a note of where the bytes came from."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
from pathlib import Path

from gpuprices.spiders import registry
from gpuprices.spiders.archive import Capture, append_captures, archive_path, read_archive
from gpuprices.spiders.sources import ecb
from gpuprices.warehouse.contract import PROVIDERS

# What may name an archive file: the offer providers and the ECB rates archived beside them.
ARCHIVE_NAMES = (*PROVIDERS, ecb.PROVIDER)

# `partial` (optional): what the file leaves out of what its source listed (a hand-trimmed
# excerpt, one page of several, a diff); archived as the capture's X-Gpuprices-Partial.
MANIFEST_FIELDS = ("file", "provider", "url", "captured_at", "method", "origin", "partial")
_TYPES = {".json": "application/json", ".html": "text/html; charset=utf-8",
          ".htm": "text/html; charset=utf-8", ".csv": "text/csv", ".xml": "application/xml"}


class BodyTooLargeError(ValueError):
    """A file larger than the cap on a decoded body (archive.MAX_BODY_BYTES, registry.body_cap)."""


def parse_timestamp(text: str) -> dt.datetime:
    """ISO time, date, or a Wayback timestamp (YYYYMMDDhhmmss); naive times are UTC."""
    text = text.strip()
    if text.isdigit() and len(text) == 14:
        ts = dt.datetime.strptime(text, "%Y%m%d%H%M%S")
    else:
        ts = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return ts if ts.tzinfo else ts.replace(tzinfo=dt.UTC)


def import_capture(archive_root: Path, file: Path, provider: str, url: str,
                   captured_at: dt.datetime, method: str = "GET",
                   request_body: bytes | None = None, origin: str | None = None,
                   content_type: str | None = None, partial: str | None = None
                   ) -> tuple[Path, bool]:
    """Archive one file as a capture. Returns (archive file, whether it was added): the same
    bytes of the same URL at the same time are not archived twice. The provider must be a known
    id: it names the archive file, so anything else could write outside the archive."""
    if provider not in ARCHIVE_NAMES:
        raise ValueError(f"unknown provider {provider!r} (known: {', '.join(ARCHIVE_NAMES)})")
    cap = registry.body_cap(provider)(url)
    size = Path(file).stat().st_size
    if size > cap:  # checked before reading: the same cap a live fetch and a replay apply
        raise BodyTooLargeError(f"{file}: {size:,} bytes, more than the {cap:,} byte cap on a "
                                f"capture's body ({provider} {url}): not archived")
    body = Path(file).read_bytes()
    sha = hashlib.sha256(body).hexdigest()
    path = archive_path(archive_root, provider, captured_at.astimezone(dt.UTC).date())
    if path.exists():
        # What the day file holds, damaged records included (their URL, time and recorded
        # SHA-256 still tell what was archived): a damaged file never blocks an import.
        for old in read_archive(path, registry.body_cap(provider)).captures:
            if old.url == url and old.sha256 == sha and old.captured_at == captured_at:
                return path, False
    ctype = content_type or _TYPES.get(Path(file).suffix.lower(), "application/octet-stream")
    append_captures(archive_root, [Capture(
        provider=provider, url=url, body=body, captured_at=captured_at,
        headers=[("Content-Type", ctype)], method=method.upper(), request_body=request_body,
        origin=origin, sha256=sha, partial=partial)])
    return path, True


def import_manifest(archive_root: Path, manifest: Path, base: Path | None = None
                    ) -> list[tuple[Path, bool]]:
    """Import every row of a manifest CSV (file, provider, url, captured_at, method, origin and
    optionally request_body); file paths are relative to `base` (default: the manifest's repo).
    A manifest is data that may come from elsewhere: an absolute file path, or one that leads
    out of `base` (`../../etc/passwd`), is refused with its line, before anything is archived."""
    manifest = Path(manifest)
    base = (base or manifest.resolve().parent.parent).resolve()
    done = []
    with manifest.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    for i, row in enumerate(rows, start=2):
        missing = [f for f in ("file", "provider", "url", "captured_at") if not row.get(f)]
        if missing:
            raise ValueError(f"{manifest}:{i}: missing {', '.join(missing)}")
        if row["provider"] not in ARCHIVE_NAMES:
            raise ValueError(f"{manifest}:{i}: unknown provider {row['provider']!r}")
        if Path(row["file"]).is_absolute() or not (base / row["file"]).resolve().is_relative_to(
                base):
            raise ValueError(f"{manifest}:{i}: file {row['file']!r} is not a relative path "
                             f"inside {base}")
    for row in rows:
        body = row.get("request_body") or None
        done.append(import_capture(
            archive_root, base / row["file"], row["provider"], row["url"],
            parse_timestamp(row["captured_at"]), method=row.get("method") or "GET",
            request_body=body.encode() if body else None, origin=row.get("origin") or None,
            partial=row.get("partial") or None,
        ))
    return done


def archive_new(archive_root: Path, captures: list[Capture]) -> tuple[int, int]:
    """Archive the captures not already there (same URL, time and bytes). Returns (added,
    skipped), so a backfill can be rerun without duplicating a day's records."""
    known: dict[Path, set[tuple[str, dt.datetime, str]]] = {}
    fresh = []
    for cap in captures:
        path = archive_path(archive_root, cap.provider, cap.snapshot_date)
        if path not in known:
            known[path] = ({(c.url, c.captured_at, c.sha256)
                            for c in read_archive(path, registry.body_cap(cap.provider)).captures}
                           if path.exists() else set())
        key = (cap.url, cap.captured_at, cap.sha256)
        if key in known[path]:
            continue
        known[path].add(key)
        fresh.append(cap)
    if fresh:
        append_captures(archive_root, fresh)
    return len(fresh), len(captures) - len(fresh)
