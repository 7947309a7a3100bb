"""Compacting closed months of the lake: one provider's day files of a month merged into one
Parquet file (one row group per day), so an hourly or nightly lake stays small in files.

For one (provider, month), in this order, each step safe to be killed after:

1. read every day: its own file where there is one (checksum checked), else its row group in
   the month's current compacted file;
2. write the merged file under a name made of its SHA-256 (`part-<sha[:16]>.parquet`, its
   checksum beside it or in the object's metadata, as every lake file); no manifest names it
   yet, so no reader sees it;
3. verify it: read it back and compare every day with what was read in step 1;
4. switch: write the manifest naming it, with each day's row group, row count, the checksum
   of the day's own file and the state (size, modification time or ETag) that file had, which
   the warehouse's lake_loads knows it by (warehouse/lake_sync.py), so nothing is reloaded;
5. delete the day files it replaced (only those unchanged since step 1: a day rewritten
   meanwhile keeps its file, which readers prefer) and the files no manifest names.

Readers take each day from its own file while it exists, else from the manifest's file
(warehouse/lake.py), so until step 4 they read the day files, after it the same rows from
either place: never a day twice, never half a month. A run killed at any step leaves a lake that
reads the same; the next run redoes what is left and writes the same bytes (the name is the
content). On object storage the manifest is replaced by a PUT conditional on the version read
in step 1: two compactions of one month cannot both switch.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gpuprices.warehouse import lake, lake_sync, objstore
from gpuprices.warehouse.contract import OFFER_SCHEMA, conform_table

# Test hook: called with the name of each step just done ("written", "verified", "switched",
# "deleted"); raising from it is a kill at that point.
Hook = Callable[[str], None]

# A month of one day file is left as it is: compacting it would add a manifest, not save a file.
MIN_DAY_FILES = 2


@dataclass
class MonthResult:
    provider: str
    month: str
    days: int = 0
    rows: int = 0
    files_removed: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    file: str = ""
    skipped: str = ""  # why nothing was done, when nothing was
    removed: list[str] = field(default_factory=list)


def _month_of(day: dt.date) -> str:
    return day.strftime("%Y-%m")


def closed_months(lake_root, today: dt.date | None = None) -> list[tuple[str, str]]:
    """(provider, month) pairs whose month is over (before today's, UTC) and that still have
    day files or leftovers to fold in; already compact months are left out."""
    today = today or dt.datetime.now(dt.UTC).date()
    current = _month_of(today)
    months = {(p, _month_of(d)) for d, p, path in lake.list_partitions(lake_root)
              if not isinstance(path, lake.CompactedDay) and _month_of(d) < current}
    return sorted(months, key=lambda pm: (pm[1], pm[0]))


def _size(path) -> int:
    return path.stat().st_size


def _remove(path) -> None:
    path.unlink(missing_ok=True)


def compact_month(lake_root, provider: str, month: str, *, hook: Hook | None = None
                  ) -> MonthResult:
    """Fold one provider's day files of `month` (YYYY-MM) into the month's compacted file
    (module docstring). Idempotent: a month already compact is left as it is."""
    hook = hook or (lambda step: None)
    res = MonthResult(provider, month)
    folder = lake.month_folder(lake_root, provider, month)
    remote = objstore.is_remote(lake_root)
    manifest_path = folder / lake.MANIFEST
    manifest_seen = manifest_path.head() if remote else None
    current = lake.read_manifest(lake_root, provider, month)
    old_days = current[0]["days"] if current else {}

    # 1. every day from exactly one place, as a reader would take it
    own = {d: path for d, p, path in lake.list_partitions(lake_root)
           if p == provider and _month_of(d) == month
           and not isinstance(path, lake.CompactedDay)}
    days = sorted(set(own) | {dt.date.fromisoformat(d) for d in old_days})
    if not own or (len(own) < MIN_DAY_FILES and not current):
        res.skipped = ("already compact" if current else
                       "one day file" if own else "no day files")
        res.removed = _remove_unnamed(folder, current[0]["file"] if current else None)
        return res
    tables, entries, stamps = [], {}, {}
    for day in days:
        if day in own:
            path = own[day]
            stamps[day] = _stamp(path)  # before reading: a rewrite meanwhile keeps its file
            data, digest = _read_own(path)
            entries[day] = {"sha256": digest, "stamp": list(stamps[day])}
            res.bytes_before += len(data)
            table = conform_table(pq.read_table(pa.BufferReader(data)))
        else:
            entry = old_days[day.isoformat()]
            entries[day] = {"sha256": entry["sha256"], "stamp": entry["stamp"]}
            table = lake.read_offers_file(lake.find_partition(lake_root, day, provider))
        tables.append(table)
    if current:
        res.bytes_before += _size(current[1])

    # 2. the merged file, named by its content, named by no manifest yet
    buf = io.BytesIO()
    schema = OFFER_SCHEMA.remove_metadata()
    with pq.ParquetWriter(buf, schema, compression="zstd", compression_level=9) as writer:
        group = 0
        for day, table in zip(days, tables, strict=True):
            entries[day]["rows"] = table.num_rows
            entries[day]["row_group"] = group if table.num_rows else None
            if table.num_rows:
                # one row group per day: a reader of one day reads only its bytes
                writer.write_table(table.cast(schema), row_group_size=table.num_rows)
                group += 1
    data = buf.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    name = f"part-{digest[:16]}.parquet"
    target = folder / name
    _write_data(target, data, digest)
    hook("written")

    # 3. verify: the file as stored holds every day as read
    stored = pq.ParquetFile(pa.BufferReader(_read_back(target, digest)))
    for day, table in zip(days, tables, strict=True):
        group = entries[day]["row_group"]
        got = stored.read_row_group(group) if group is not None else None
        if (got is None and table.num_rows) or (got is not None and not got.equals(
                table.cast(schema))):
            raise lake.ChecksumError(f"{target}: {day} reads back different from its day "
                                     f"file; the compaction was not switched")
    hook("verified")

    # 4. switch
    manifest = {"provider": provider, "month": month, "file": name, "sha256": digest,
                "bytes": len(data), "rows": sum(t.num_rows for t in tables),
                "compacted_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "days": {d.isoformat(): entries[d] for d in days}}
    _write_manifest(manifest_path, manifest, manifest_seen, remote)
    hook("switched")

    # 5. delete what it replaced
    for day, path in own.items():
        if _stamp(path, missing=None) != stamps[day]:
            continue  # rewritten since step 1: newer than the compacted copy, readers prefer it
        _remove(path)
        if not remote:
            _remove(lake.checksum_path(path))
            _rmdir_empty(path.parent)
        res.files_removed += 1
        hook("deleted")
    res.removed = _remove_unnamed(folder, name)
    res.days, res.rows, res.bytes_after, res.file = len(days), manifest["rows"], len(data), \
        str(target)
    return res


def compact_lake(lake_root, *, months: list[str] | None = None, today: dt.date | None = None,
                 hook: Hook | None = None) -> list[MonthResult]:
    """Compact every closed month (or only `months`, which must be closed) of every provider."""
    today = today or dt.datetime.now(dt.UTC).date()
    pairs = closed_months(lake_root, today)
    if months is not None:
        for m in months:
            if m >= _month_of(today):
                raise ValueError(f"month {m} is not over yet (today is {today}): only closed "
                                 f"months are compacted")
        pairs = [(p, m) for p, m in pairs if m in months]
    done = [compact_month(lake_root, p, m, hook=hook) for p, m in pairs]
    sweep(lake_root)
    return done


def _stamp(path, missing: object = ...) -> tuple[int, int] | object:
    try:
        return lake_sync.stamp_of(path)
    except FileNotFoundError:
        if missing is ...:
            raise
        return missing


def _read_own(path) -> tuple[bytes, str]:
    """A day file's bytes and SHA-256, refused (ChecksumError) when they differ from what was
    recorded when it was written."""
    if objstore.is_remote(path):
        data, meta, _ = path.get()
        if problem := lake._object_problem(path, data, meta):
            raise lake.ChecksumError(problem)
        return data, hashlib.sha256(data).hexdigest()
    if problem := lake.checksum_problem(path):
        raise lake.ChecksumError(problem)
    data = Path(path).read_bytes()
    return data, hashlib.sha256(data).hexdigest()


def _write_data(target, data: bytes, digest: str) -> None:
    if objstore.is_remote(target):
        if target.head() is None:  # same name, same bytes: a rerun after a kill has nothing to do
            try:
                target.put(data, expect=None, metadata={lake.CHECKSUM_METADATA: digest},
                           what=f"compacted {target.parent.parent.name}/{target.parent.name}")
            except objstore.ConflictError:
                pass  # another compaction wrote the same content-named file first
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    lake.atomic_write(target, lambda fh: fh.write(data), stem=target.name)
    lake.atomic_write(lake.checksum_path(target),
                      lambda fh: fh.write(f"{digest}  {target.name}\n".encode()),
                      stem=lake.checksum_path(target).name)
    lake._fsync_dir(target.parent)


def _read_back(target, digest: str) -> bytes:
    data = target.read_bytes()
    got = hashlib.sha256(data).hexdigest()
    if got != digest:
        raise lake.ChecksumError(f"{target}: reads back with SHA-256 {got[:12]}..., written as "
                                 f"{digest[:12]}...; the compaction was not switched")
    return data


def _write_manifest(path, manifest: dict, seen, remote: bool) -> None:
    text = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    if remote:
        path.put(text, expect=seen, what=f"manifest of {path.parent.parent.name}/"
                                         f"{path.parent.name}")
        return
    lake.atomic_write(path, lambda fh: fh.write(text), stem=lake.MANIFEST)
    lake._fsync_dir(path.parent)


def _rmdir_empty(folder: Path) -> None:
    """The day's folders, once empty (a hidden leftover of a killed writer does not count)."""
    for d in (folder, folder.parent):
        try:
            for stale in d.glob(".*.part"):
                stale.unlink(missing_ok=True)
            d.rmdir()
        except OSError:
            return


def _remove_unnamed(folder, keep: str | None) -> list[str]:
    """Compacted files of this month that no manifest names (an earlier version, or one written
    by a run killed before its switch), with their checksums."""
    removed = []
    if objstore.is_remote(folder):
        listed = [p for p, _ in folder.walk()]
    else:
        listed = list(folder.iterdir()) if folder.is_dir() else []
    for path in listed:
        name = path.name
        base = name[1:-len(lake.CHECKSUM_SUFFIX)] if name.endswith(lake.CHECKSUM_SUFFIX) else name
        if (base.startswith("part-") and base.endswith(".parquet") and base != keep) or (
                name.startswith(".") and name.endswith(".part")):
            _remove(path)
            removed.append(str(path))
    return removed


def sweep(lake_root) -> list[str]:
    """Remove, across the lake, compacted files that no manifest names (left by a run killed
    between its switch and its clean-up): one listing, and a manifest read only for a month
    folder holding more than its manifest and one file."""
    base = objstore.location(lake_root) / lake.OFFERS_AREA
    if objstore.is_remote(base):
        listed = [p for p, _ in base.walk()]
    else:
        listed = list(base.glob("snapshot_month=*/provider=*/*"))  # hidden names included
    folders: dict = {}
    for path in listed:
        if lake._MONTH_DIR.match(path.parent.parent.name):
            folders.setdefault(path.parent, []).append(path)
    expected = 2 if objstore.is_remote(base) else 3  # manifest, file (+ its checksum on disk)
    removed = []
    for folder, files in folders.items():
        if len(files) <= expected:
            continue
        try:
            manifest = json.loads((folder / lake.MANIFEST).read_text())
        except FileNotFoundError:
            continue  # a first compaction killed before its switch: its rerun decides
        removed += _remove_unnamed(folder, manifest["file"])
    return removed
