"""The team's warehouse on object storage: each load's warehouse file published as a read-only,
versioned copy, and the latest fetched for local SQL and reports.

    <prefix>/warehouse/<UTC time>-<sha256 first 12>.duckdb   written once (If-None-Match)
    <prefix>/latest.json                                      the pointer, written last

A reader follows the pointer, so it never sees a copy before the copy is whole; a copy is never
rewritten (a new load is a new key), so a reader that fetched a pointer can still fetch what it
names. The pointer carries the copy's SHA-256: `pull` checks it before the local file is
renamed into place.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

from gpuprices.warehouse import lake, objstore

POINTER = "latest.json"
COPIES = "warehouse"


class PublishError(objstore.StoreError):
    """A warehouse that cannot be published or pulled; the message says which and why."""


def publish(db_path: Path, where: objstore.StorePath,
            now: dt.datetime | None = None) -> dict:
    """Publish a closed (checkpointed) warehouse file; returns the pointer written."""
    wal = db_path.with_name(db_path.name + ".wal")
    if wal.exists():  # the copy would lack the transactions still in the log
        raise PublishError(f"{db_path}: not published: its write-ahead log {wal.name} is not "
                           f"checkpointed (a writer still holds it, or it was not closed)")
    data = db_path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    now = now or dt.datetime.now(dt.UTC)
    copy = where / COPIES / f"{now:%Y%m%dT%H%M%S}Z-{digest[:12]}.duckdb"
    try:
        copy.put(data, expect=None, metadata={"sha256": digest}, what="published warehouse")
    except objstore.ConflictError:
        # The same bytes published within the same second: the copy is there, keep it.
        if copy.get()[1].get("sha256") != digest:
            raise
    pointer = {"key": copy.key, "sha256": digest, "size": len(data),
               "published_at": now.isoformat(timespec="seconds")}
    (where / POINTER).put_replacing(json.dumps(pointer, indent=1).encode(),
                                    what="latest-warehouse pointer")
    return pointer | {"url": str(copy)}


def latest(where: objstore.StorePath) -> dict:
    """The pointer to the latest published warehouse (raises PublishError when none is)."""
    try:
        return json.loads((where / POINTER).read_bytes())
    except FileNotFoundError:
        raise PublishError(f"{where / POINTER}: no warehouse published there yet (a load with "
                           f"GPUPRICES_PUBLISH={where} publishes one)") from None
    except ValueError as exc:
        raise PublishError(f"{where / POINTER}: not a pointer: {exc}") from None


def pull(where: objstore.StorePath, to: Path) -> dict:
    """Fetch the latest published warehouse into `to`: checked against the pointer's SHA-256,
    written beside it and renamed over it, so `to` is the old file or the whole new one."""
    pointer = latest(where)
    copy = objstore.StorePath(where.bucket, pointer["key"])
    data = copy.read_bytes()
    got = hashlib.sha256(data).hexdigest()
    if got != pointer["sha256"]:
        raise PublishError(f"{copy}: SHA-256 {got[:12]}... differs from "
                           f"{pointer['sha256'][:12]}... named by {where / POINTER}; "
                           f"{to} left as it was")
    to.parent.mkdir(parents=True, exist_ok=True)
    lake.atomic_write(to, lambda fh: fh.write(data), stem=to.name)
    stale_wal = to.with_name(to.name + ".wal")
    stale_wal.unlink(missing_ok=True)  # a log of the file just replaced would corrupt it
    return pointer | {"url": str(copy), "path": str(to)}
