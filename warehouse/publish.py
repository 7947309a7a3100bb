"""The team's warehouse on object storage: each load's warehouse file published as a read-only,
versioned copy, and the latest fetched for local SQL and reports.

    <prefix>/warehouse/<UTC time>-<sha256 first 12>.duckdb   written once (If-None-Match)
    <prefix>/latest.json                                      the pointer, written last

A reader follows the pointer, so it never sees a copy before the copy is whole; a copy is never
rewritten (a new load is a new key), so a reader that fetched a pointer can still fetch what it
names. The pointer carries the copy's SHA-256 and size. `pull` trusts nothing it cannot check
(anyone who can write the bucket can write the pointer): the pointer must name a copy under
<prefix>/warehouse/ as publish() names them, the bytes fetched must have its size and SHA-256,
the file must open as a warehouse of today's tables, and it must not be older than what the
local file holds (without --allow-older) before it is renamed into place.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import secrets
from pathlib import Path

import duckdb

from gpuprices.warehouse import lake, objstore
from gpuprices.warehouse.tables import TABLES

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
    """The pointer to the latest published warehouse, checked (raises PublishError when none is
    published or the pointer is not one we wrote: check_pointer)."""
    try:
        raw = (where / POINTER).read_bytes()
    except FileNotFoundError:
        raise PublishError(f"{where / POINTER}: no warehouse published there yet (a load with "
                           f"GPUPRICES_PUBLISH={where} publishes one)") from None
    try:
        pointer = json.loads(raw)
    except ValueError as exc:
        raise PublishError(f"{where / POINTER}: not a pointer: {exc}") from None
    return check_pointer(where, pointer)


# <UTC time>Z-<first 12 hex of the SHA-256>.duckdb: the name publish() gives a copy.
_COPY_NAME = re.compile(r"^(\d{8}T\d{6})Z-([0-9a-f]{12})\.duckdb$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def check_pointer(where: objstore.StorePath, pointer: object) -> dict:
    """`pointer` if it is one publish() could have written under `where`, else PublishError
    naming what is wrong: a JSON object; `key` a copy name directly under <prefix>/warehouse/
    (no other prefix, no `..`, no other file); `sha256` 64 hex digits that the name's 12
    agree with; `size` a positive integer; `published_at` an ISO time equal to the name's."""
    at = where / POINTER

    def bad(why: str) -> PublishError:
        return PublishError(f"{at}: not a warehouse pointer: {why}; nothing pulled")

    if not isinstance(pointer, dict):
        raise bad(f"a JSON object is expected, not {type(pointer).__name__}")
    key, digest = pointer.get("key"), pointer.get("sha256")
    size, published = pointer.get("size"), pointer.get("published_at")
    if not isinstance(key, str) or not key:
        raise bad("no `key` (text) naming the published copy")
    folder = (where / COPIES).key + "/"
    name = key[len(folder):] if key.startswith(folder) else None
    if name is None or "/" in name or "\\" in name or ".." in key.split("/"):
        raise bad(f"key {key!r} is not a copy directly under {where / COPIES}/")
    m = _COPY_NAME.match(name)
    if not m:
        raise bad(f"key {key!r} is not named as a published copy "
                  f"(<UTC time>Z-<SHA-256 12>.duckdb)")
    if not isinstance(digest, str) or not _SHA256.match(digest):
        raise bad(f"sha256 {digest!r} is not 64 hexadecimal digits")
    if not digest.startswith(m.group(2)):
        raise bad(f"sha256 {digest[:12]}... does not match the copy's name {name}")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise bad(f"size {size!r} is not a positive whole number of bytes")
    try:
        when = dt.datetime.fromisoformat(published)
    except (TypeError, ValueError):
        raise bad(f"published_at {published!r} is not an ISO time") from None
    if f"{when:%Y%m%dT%H%M%S}" != m.group(1):  # publish() names the copy from that time
        raise bad(f"published_at {published} is not the time in the copy's name {name}")
    return pointer


def _expected_columns() -> dict[str, list[tuple[str, str]]]:
    """(column, type) of each warehouse table, as today's code creates them."""
    con = duckdb.connect(":memory:")
    try:
        for ddl in TABLES.values():
            con.execute(ddl)
        return _columns(con)
    finally:
        con.close()


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position").fetchall():
        out.setdefault(table, []).append((column, kind))
    return out


def _newest_snapshot(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    return con.execute("SELECT max(snapshot_date) FROM snapshot_dates").fetchone()[0]


def _check_warehouse(path: Path, copy: objstore.StorePath) -> dt.date | None:
    """Open the fetched file as a DuckDB warehouse (read-only) and check it has today's tables
    and columns; returns its newest loaded snapshot date. PublishError otherwise."""
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise PublishError(f"{copy}: not a DuckDB warehouse ({str(exc).splitlines()[0]})"
                           ) from None
    try:
        have = _columns(con)
        for table, cols in _expected_columns().items():
            if table not in have:
                raise PublishError(f"{copy}: not a gpuprices warehouse of this version: no "
                                   f"table {table}")
            missing = [c for c in cols if c not in have[table]]
            if missing:
                raise PublishError(f"{copy}: not a gpuprices warehouse of this version: table "
                                   f"{table} lacks {', '.join(f'{c} {t}' for c, t in missing)}")
        return _newest_snapshot(con)
    except duckdb.Error as exc:
        raise PublishError(f"{copy}: cannot be read as a warehouse "
                           f"({str(exc).splitlines()[0]})") from None
    finally:
        con.close()


def _local_newest(to: Path) -> dt.date | None:
    """The newest snapshot of the warehouse at `to`, None when there is none or it cannot be
    read (not a warehouse, held by a writer): then only its pull record guards it."""
    if not to.is_file():
        return None
    try:
        con = duckdb.connect(str(to), read_only=True)
    except duckdb.Error:
        return None
    try:
        return _newest_snapshot(con)
    except duckdb.Error:
        return None
    finally:
        con.close()


def pulled_record(to: Path) -> Path:
    """Where pull keeps the pointer of the copy it put at `to` (`<to>.pulled.json`)."""
    return to.with_name(to.name + ".pulled.json")


def _previous_pull(to: Path) -> dict | None:
    try:
        got = json.loads(pulled_record(to).read_text())
        dt.datetime.fromisoformat(got["published_at"])
        return got
    except (OSError, ValueError, KeyError, TypeError):
        return None


def pull(where: objstore.StorePath, to: Path, allow_older: bool = False) -> dict:
    """Fetch the latest published warehouse into `to`, trusting nothing it cannot check: the
    pointer (check_pointer: only a copy under <prefix>/warehouse/), the object's size before it
    is fetched and the size and SHA-256 of the bytes fetched, the file opened as a warehouse of
    today's tables (read-only, beside `to`), and never older than what `to` holds (an earlier
    publication than the last one pulled there, or a newest snapshot date before the local
    warehouse's) unless `allow_older`. Then renamed over `to`, so `to` is the old file or the
    whole new one; any refusal leaves it as it was."""
    pointer = latest(where)
    copy = objstore.StorePath(where.bucket, pointer["key"])
    keep = f"{to} left as it was"
    before = _previous_pull(to)
    if (before and not allow_older and dt.datetime.fromisoformat(pointer["published_at"])
            < dt.datetime.fromisoformat(before["published_at"])):
        raise PublishError(f"{where / POINTER} names a copy published {pointer['published_at']}, "
                           f"before the one pulled into {to} ({before['published_at']}): not "
                           f"going backwards without --allow-older; {keep}")
    info = copy.head()
    if info is None:
        raise PublishError(f"{copy}: named by {where / POINTER} but not there; {keep}")
    if info.st_size != pointer["size"]:
        raise PublishError(f"{copy}: {info.st_size} bytes where {where / POINTER} says "
                           f"{pointer['size']}; not fetched, {keep}")
    data = copy.read_bytes()
    got = hashlib.sha256(data).hexdigest()
    if len(data) != pointer["size"] or got != pointer["sha256"]:
        raise PublishError(f"{copy}: fetched {len(data)} bytes, SHA-256 {got[:12]}..., which "
                           f"differs from {pointer['size']} bytes, {pointer['sha256'][:12]}... "
                           f"named by {where / POINTER}; {keep}")
    to.parent.mkdir(parents=True, exist_ok=True)
    tmp = to.parent / f".{to.name}.{secrets.token_hex(6)}.pull.part"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        newest = _check_warehouse(tmp, copy)
        local = _local_newest(to)
        if local and not allow_older and (newest is None or newest < local):
            raise PublishError(f"{copy}: its newest snapshot ({newest or 'none'}) is older than "
                               f"the warehouse at {to} ({local}): not going backwards without "
                               f"--allow-older; {keep}")
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
        os.replace(tmp, to)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, PublishError):
            raise PublishError(str(exc) if keep in str(exc) else f"{exc}; {keep}") from None
        raise
    stale_wal = to.with_name(to.name + ".wal")
    stale_wal.unlink(missing_ok=True)  # a log of the file just replaced would corrupt it
    record = {k: pointer[k] for k in ("key", "sha256", "size", "published_at")}
    lake.atomic_write(pulled_record(to), lambda fh: fh.write(json.dumps(record).encode()),
                      stem=to.name)
    return pointer | {"url": str(copy), "path": str(to), "size": len(data)}
