"""The Parquet lake: one file per snapshot date and provider, hive-style.

    <lake_root>/offers/snapshot_date=YYYY-MM-DD/provider=P/part-0.parquet
    <lake_root>/quarantine/snapshot_date=YYYY-MM-DD/provider=P/part-0.parquet

A partition is the unit of replacement: a rerun of the same date and provider replaces it
wholesale. Writes are atomic: the file is written beside its final place as a hidden `*.part`
file, fsynced, then renamed over the old one (`os.replace` is atomic on POSIX), so a reader sees
either the previous partition or the new one, never a half-written file. Hidden names (leading
dot) are skipped by pyarrow and DuckDB dataset discovery and by `list_partitions`.

The files keep `snapshot_date` and `provider` as ordinary columns too, so a file is
self-describing when copied out of its folder.

Each file's SHA-256 is recorded beside it when it is written, in a hidden
`.part-0.parquet.sha256`; reading a partition whose bytes no longer match (a file edited by hand,
a copy cut short) raises ChecksumError naming it, so nothing loads a partition the pipeline did
not write. A partition written before checksums were recorded has none and is read as it is.

On object storage (an `s3://bucket/prefix` lake root, warehouse/objstore.py) a partition is one
object written by one conditional PUT, visible whole or not at all, its SHA-256 in the object's
own metadata (`x-amz-meta-sha256`) rather than a second object a reader could see out of step.
The PUT carries the version the writer saw just before (If-Match, or If-None-Match for a new
partition): a writer that lost a race to the same partition gets objstore.ConflictError naming
it, and the winner's partition stays.

A closed month can be compacted (warehouse/lake_compact.py): one provider's days of a month
merged into one file, one row group per day, named by its content and recorded in a manifest:

    <lake_root>/offers/snapshot_month=YYYY-MM/provider=P/part-<sha256[:16]>.parquet
    <lake_root>/offers/snapshot_month=YYYY-MM/provider=P/manifest.json

The manifest is the switch: a compacted file it does not name is invisible. Readers take each
(snapshot_date, provider) from exactly one place: the day's own file when there is one (it is
either the same data, left by a compaction that has not deleted it yet, or newer data written
since), else its row group in the compacted file. So no reader counts a day twice during a
compaction, or sees a half-done one. List the lake with `list_partitions` and read it with
`read_offers_file` / `read_partition`; a raw `offers/**/*.parquet` glob would see both.

Quarantine holds rows that failed the checks (e.g. a GPU wording that maps to no canonical
model): all offer columns, every one nullable, plus a `reason`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from gpuprices.warehouse import objstore
from gpuprices.warehouse.contract import (
    OFFER_SCHEMA,
    PRICING_MODELS,
    PROVIDERS,
    ContractError,
    conform_table,
    conform_to,
    with_snapshot_at,
)

OFFERS_AREA = "offers"
QUARANTINE_AREA = "quarantine"
PART_FILE = "part-0.parquet"

# Quarantined rows broke the contract, so nothing about them may be required.
QUARANTINE_SCHEMA = pa.schema(
    [pa.field(f.name, f.type, nullable=True) for f in OFFER_SCHEMA]
    + [pa.field("reason", pa.string(), nullable=False)]
)

CHECKSUM_SUFFIX = ".sha256"
CHECKSUM_METADATA = "sha256"  # the user-metadata key of an object's SHA-256 on object storage


class ChecksumError(ContractError):
    """A lake file whose bytes differ from the checksum recorded when the pipeline wrote it."""


_DATE_DIR = re.compile(r"^snapshot_date=(\d{4}-\d{2}-\d{2})$")
_MONTH_DIR = re.compile(r"^snapshot_month=(\d{4}-\d{2})$")
MANIFEST = "manifest.json"
_PROVIDER_DIR = re.compile(r"^provider=([A-Za-z0-9_-]+)$")


def _as_date(value: dt.date | str) -> dt.date:
    if isinstance(value, dt.datetime):
        raise TypeError("snapshot_date must be a date, not a datetime")
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(value)


def _check_provider(provider: str) -> str:
    # The name becomes a folder: refuse anything that could escape the lake.
    if provider not in PROVIDERS:
        raise ContractError(f"unknown provider {provider!r}")
    return provider


def partition_path(
    lake_root: Path | str, snapshot_date: dt.date | str, provider: str, area: str = OFFERS_AREA
) -> Path:
    """Where the file of one (snapshot_date, provider) lives in an area of the lake."""
    if area not in (OFFERS_AREA, QUARANTINE_AREA):
        raise ValueError(f"unknown lake area {area!r}")
    day = _as_date(snapshot_date)
    return (
        objstore.location(lake_root)
        / area
        / f"snapshot_date={day.isoformat()}"
        / f"provider={_check_provider(provider)}"
        / PART_FILE
    )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def checksum_path(path: Path | str) -> Path:
    """Where the SHA-256 of a lake file is recorded: a hidden file beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}{CHECKSUM_SUFFIX}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksum_problem(path: Path | str) -> str | None:
    """Why a lake file cannot be trusted (its bytes differ from the checksum recorded when it was
    written), or None; a file written before checksums were recorded has none to differ from.
    On object storage the checksum travels with the bytes: read_offers_file checks it there."""
    path = Path(path)
    recorded = checksum_path(path)
    if not recorded.exists():
        return None
    want = recorded.read_text().split()[0] if recorded.read_text().strip() else ""
    got = _sha256(path)
    if got == want:
        return None
    return (f"{path}: SHA-256 {got[:12]}... differs from {want[:12] or 'nothing'}..., recorded "
            f"when the pipeline wrote it (edited or damaged since); rebuild it with "
            f"`gpuprices reparse`")


def _object_problem(path: objstore.StorePath, data: bytes, meta: dict[str, str]) -> str | None:
    want = meta.get(CHECKSUM_METADATA, "")
    got = hashlib.sha256(data).hexdigest()
    if got == want:
        return None
    return (f"{path}: SHA-256 {got[:12]}... differs from {want[:12] or 'nothing'}..., recorded "
            f"when the pipeline wrote it (edited or damaged since, or not written by the "
            f"pipeline); rebuild it with `gpuprices reparse`")


def _put_parquet(table: pa.Table, final: objstore.StorePath) -> objstore.StorePath:
    """One conditional PUT of the whole file with its checksum in its metadata."""
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", compression_level=9)
    data = buf.getvalue()
    final.put_replacing(data, metadata={CHECKSUM_METADATA: hashlib.sha256(data).hexdigest()},
                        what=f"lake partition {final.parent.parent.name}/{final.parent.name}")
    return final


def _read_table(path, columns: list[str] | None = None) -> pa.Table:
    """A lake file as pyarrow reads it, local or on object storage (checksum not checked)."""
    if isinstance(path, CompactedDay):
        return _read_compacted(path, columns)
    if objstore.is_remote(path):
        path = pa.BufferReader(objstore.location(path).read_bytes())
    return pq.read_table(path, columns=columns)


def read_columns(path, columns: list[str]) -> pa.Table:
    """Some columns of a lake file, as written (for comparing with earlier days)."""
    return _read_table(path, columns)


def atomic_write(final: Path, write, stem: str = PART_FILE) -> None:
    """`write(fh)` into a hidden `.<stem>.<random>.part` beside `final`, fsynced, then renamed
    over it: `final` is the old file or the whole new one."""
    tmp = final.parent / f".{stem}.{secrets.token_hex(6)}.part"
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _atomic_write_parquet(table: pa.Table, final: Path) -> Path:
    """Write `table` to `final` so that `final` is either the old file or the complete new one,
    and record its checksum. A crash between the two renames leaves a file whose checksum does
    not match: refused on reading, rewritten by the next run of that day."""
    if objstore.is_remote(final):
        return _put_parquet(table, final)
    folder = final.parent
    folder.mkdir(parents=True, exist_ok=True)
    # Leftovers of a writer that was killed mid-write: never visible, but they take disk space.
    for stale in folder.glob(f".{PART_FILE}.*.part"):
        stale.unlink(missing_ok=True)
    digest = hashlib.sha256()

    class _Hashing:  # hash the bytes as they are written: no second read of the file
        def __init__(self, fh) -> None:
            self.fh = fh

        def write(self, data) -> int:
            digest.update(data)
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

    # Level 9 rather than the default 3: a year's lake is 12% smaller for about the same write
    # time (bench/warehouse_scale.py), and reading is as fast at any level.
    atomic_write(final, lambda fh: pq.write_table(
        table, _Hashing(fh), compression="zstd", compression_level=9))
    atomic_write(checksum_path(final), lambda fh: fh.write(
        f"{digest.hexdigest()}  {final.name}\n".encode()))
    # Make the renames themselves durable, not only the bytes.
    _fsync_dir(folder)
    return final


def _check_partition_values(
    table: pa.Table, snapshot_date: dt.date, provider: str, *, required: bool
) -> None:
    """Every row must belong to the partition it is written to."""
    if table.num_rows == 0:
        return
    for name, expected in (("snapshot_date", snapshot_date), ("provider", provider)):
        col = table.column(name)
        if required and col.null_count:
            raise ContractError(f"{provider} {snapshot_date}: {col.null_count} rows lack {name}")
        wrong = pc.sum(pc.not_equal(col, pa.scalar(expected, type=col.type))).as_py() or 0
        if wrong:
            raise ContractError(
                f"{provider} {snapshot_date}: {wrong} rows carry another {name} than the "
                f"partition {expected}"
            )


def validate_offers(table: pa.Table) -> pa.Table:
    """Conform a table to OFFER_SCHEMA and check what the schema alone cannot: required
    columns hold no nulls (gpu_model None belongs in quarantine), prices are positive and
    pricing_model is a known value. Raises ContractError naming the column and row count."""
    table = conform_table(table)
    problems = []
    for f in OFFER_SCHEMA:
        nulls = table.column(f.name).null_count
        if not f.nullable and nulls:
            problems.append(f"{nulls} rows with {f.name} null")
    if table.num_rows:
        for name in ("price_per_hour", "price_per_gpu_hour", "gpu_count"):
            bad = pc.sum(pc.invert(pc.greater(table.column(name), 0.0))).as_py() or 0
            if bad:
                problems.append(f"{bad} rows with {name} not positive")
        known = pc.is_in(table.column("pricing_model"), value_set=pa.array(PRICING_MODELS))
        bad = pc.sum(pc.invert(known)).as_py() or 0
        if bad:
            problems.append(f"{bad} rows with unknown pricing_model")
    if problems:
        raise ContractError("offers break the contract: " + "; ".join(problems))
    return table


def write_partition(
    lake_root: Path | str, snapshot_date: dt.date | str, provider: str, table: pa.Table
) -> Path:
    """Write one provider's offers of one day, replacing any earlier partition atomically.
    Returns the file path. Raises ContractError (before touching the lake) when the table
    breaks the contract or holds rows of another date or provider."""
    day = _as_date(snapshot_date)
    final = partition_path(lake_root, day, provider)
    table = validate_offers(table)
    _check_partition_values(table, day, provider, required=True)
    return _atomic_write_parquet(table, final)


def read_partition(
    lake_root: Path | str, snapshot_date: dt.date | str, provider: str
) -> pa.Table:
    """One partition conformed to the current contract (files written with fewer columns load
    with the missing columns null), from its own file or its compacted month. Raises
    FileNotFoundError when the partition is absent."""
    return read_offers_file(find_partition(lake_root, snapshot_date, provider))


def read_offers_file(path: Path | str) -> pa.Table:
    """A lake file conformed to the current contract. Raises ChecksumError for a file whose
    bytes differ from the checksum recorded when it was written."""
    if isinstance(path, CompactedDay):
        return conform_table(_read_compacted(path))
    if objstore.is_remote(path):
        return read_object(objstore.location(path))[0]
    problem = checksum_problem(path)
    if problem:
        raise ChecksumError(problem)
    return conform_table(pq.read_table(path))


def read_object(path: objstore.StorePath) -> tuple[pa.Table, objstore.ObjectInfo]:
    """A lake object conformed to the contract, with the state of the very bytes read, from one
    GET (the bytes and the checksum they were written with). Raises FileNotFoundError when
    absent, ChecksumError when the bytes differ from their checksum."""
    data, meta, info = path.get()
    if problem := _object_problem(path, data, meta):
        raise ChecksumError(problem)
    return conform_table(pq.read_table(pa.BufferReader(data))), info


def partition_objects(lake_root: objstore.StorePath | str
                      ) -> list[tuple[dt.date, str, objstore.StorePath | CompactedDay,
                                      objstore.ObjectInfo | None]]:
    """The offers partitions of a lake on object storage with each object's state (size,
    ETag), from one listing, sorted by date then provider. A day held in a compacted file
    comes as a CompactedDay with no object state (its stamp is in the manifest)."""
    base = objstore.location(lake_root) / OFFERS_AREA
    found, manifests = _list_objects(base)
    days = [(d, p, path, None) for d, p, path in _compacted_days(
        base, {(d, p) for d, p, *_ in found}, manifests)]
    return sorted(found + days, key=lambda item: (item[0], item[1]))


def _list_objects(base: objstore.StorePath
                  ) -> tuple[list[tuple[dt.date, str, objstore.StorePath, objstore.ObjectInfo]],
                             list[objstore.StorePath]]:
    """The partitions under an area of a lake on object storage and the compacted months'
    manifests, from one listing (the offers area was listed twice, once for each)."""
    found, manifests = [], []
    for path, info in base.walk():
        parts = path.key[len(base.key):].strip("/").split("/")
        if len(parts) != 3:
            continue
        if parts[2] == PART_FILE:
            m_date, m_prov = _DATE_DIR.match(parts[0]), _PROVIDER_DIR.match(parts[1])
            if m_date and m_prov:
                found.append((dt.date.fromisoformat(m_date.group(1)), m_prov.group(1), path,
                              info))
        elif parts[2] == MANIFEST and _MONTH_DIR.match(parts[0]):
            manifests.append(path)
    found.sort(key=lambda item: (item[0], item[1]))
    return found, manifests


def _list_area(lake_root: Path | str, area: str) -> list[tuple[dt.date, str, Path]]:
    manifests = None
    if objstore.is_remote(lake_root):
        objects, manifests = _list_objects(objstore.location(lake_root) / area)
        found = [(d, p, path) for d, p, path, _ in objects]
    else:
        found = _list_local(Path(lake_root) / area)
    if area == OFFERS_AREA:
        found += _compacted_days(objstore.location(lake_root) / area,
                                 {(d, p) for d, p, _ in found}, manifests)
    return sorted(found, key=lambda item: (item[0], item[1]))


def _list_local(base: Path) -> list[tuple[dt.date, str, Path]]:
    found: list[tuple[dt.date, str, Path]] = []
    if not base.is_dir():
        return found
    for date_dir in base.iterdir():
        m_date = _DATE_DIR.match(date_dir.name)
        if not m_date or not date_dir.is_dir():
            continue
        day = dt.date.fromisoformat(m_date.group(1))
        for prov_dir in date_dir.iterdir():
            m_prov = _PROVIDER_DIR.match(prov_dir.name)
            part = prov_dir / PART_FILE
            # A folder with only a hidden .part file is an interrupted first write: not a
            # partition yet.
            if m_prov and part.is_file():
                found.append((day, m_prov.group(1), part))
    return found


def list_partitions(lake_root: Path | str) -> list[tuple[dt.date, str, Path | CompactedDay]]:
    """Every complete offers partition as (snapshot_date, provider, path), sorted by date then
    provider; a day held only in a compacted month file comes as a CompactedDay, which
    read_offers_file, read_columns and lake_sync.stamp_of take like a path."""
    return _list_area(lake_root, OFFERS_AREA)


def find_partition(lake_root: Path | str, snapshot_date: dt.date | str, provider: str
                   ) -> Path | CompactedDay:
    """Where the offers of (snapshot_date, provider) are read from: the day's own file, else
    its row group in the month's compacted file. Raises FileNotFoundError when neither."""
    path = partition_path(lake_root, snapshot_date, provider)
    if objstore.file_exists(path):
        return path
    return compacted_day(lake_root, snapshot_date, provider)


def compacted_day(lake_root: Path | str, snapshot_date: dt.date | str, provider: str
                  ) -> CompactedDay:
    """The row group of (snapshot_date, provider) in its compacted month, for a day the caller
    found no file of. Raises FileNotFoundError when the month does not hold it either."""
    day = _as_date(snapshot_date)
    found = read_manifest(lake_root, provider, day.strftime("%Y-%m"))
    if found is not None and day.isoformat() in found[0]["days"]:
        return _day_of(found[1], found[0], day, provider)
    raise FileNotFoundError(f"{partition_path(lake_root, day, provider)}: no such lake "
                            f"partition (nor a compacted month holding it)")


def read_or_refusal(read: Callable[[Path], pa.Table], path) -> pa.Table | ChecksumError:
    """`read(path)`, or the ChecksumError of a file that fails its checksum (to refuse it)."""
    try:
        return read(path)
    except ChecksumError as exc:
        return exc


def read_offers_files(paths: Sequence) -> list[pa.Table | ChecksumError]:
    """Each lake file of `paths` as read_offers_file reads it, in order, a ChecksumError in
    place of the table of a file that fails its checksum. The days of one compacted month are
    read together: their file checked and opened once, their row groups read in one call (a
    rebuild reads every day of every month; one open and footer parse per day made it
    read each month file ~30 times)."""
    out: list[pa.Table | ChecksumError | None] = [None] * len(paths)
    months: dict[tuple[str, str], list[int]] = {}
    for i, path in enumerate(paths):
        if isinstance(path, CompactedDay):
            months.setdefault((str(path.file), path.sha256), []).append(i)
        else:
            out[i] = read_or_refusal(read_offers_file, path)
    for days in months.values():
        try:
            pf = pq.ParquetFile(_compacted_source(paths[days[0]]))
        except ChecksumError as exc:
            for i in days:
                out[i] = exc
            continue
        groups = [paths[i].row_group for i in days if paths[i].row_group is not None]
        whole = conform_to(pf.read_row_groups(groups) if groups
                           else pf.schema_arrow.empty_table(), OFFER_SCHEMA.remove_metadata())
        start = 0
        for i in days:
            rg = paths[i].row_group
            n = 0 if rg is None else pf.metadata.row_group(rg).num_rows
            out[i] = with_snapshot_at(whole.slice(start, n))  # one provider-day: vectorised
            start += n
    return out


# -- compacted months (written by warehouse/lake_compact.py) ----------------------------------

@dataclass(frozen=True)
class CompactedDay:
    """One provider-day held as a row group of a compacted month file."""

    file: Path | objstore.StorePath
    snapshot_date: dt.date
    provider: str
    row_group: int | None  # None: the day had no rows
    sha256: str  # of the whole compacted file, as its manifest records it
    stamp: tuple[int, int]  # the day's own file state when it was compacted (lake_sync)

    def __str__(self) -> str:
        return f"{self.file}[{self.snapshot_date}]"

    def exists(self) -> bool:
        return self.file.exists()


def month_folder(lake_root, provider: str, month: str) -> Path | objstore.StorePath:
    """The folder of one provider's compacted month (YYYY-MM)."""
    if not re.fullmatch(r"\d{4}-\d{2}", month):
        raise ValueError(f"month {month!r} is not YYYY-MM")
    return (objstore.location(lake_root) / OFFERS_AREA / f"snapshot_month={month}"
            / f"provider={_check_provider(provider)}")


def read_manifest(lake_root, provider: str, month: str
                  ) -> tuple[dict, Path | objstore.StorePath] | None:
    """A compacted month's manifest and the file it names, or None when not compacted."""
    folder = month_folder(lake_root, provider, month)
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        return None
    return manifest, folder / manifest["file"]


def _day_of(file, manifest: dict, day: dt.date, provider: str) -> CompactedDay:
    entry = manifest["days"][day.isoformat()]
    return CompactedDay(file, day, provider, entry["row_group"], manifest["sha256"],
                        tuple(entry["stamp"]))


def _compacted_days(base, shadowed: set, manifests: list | None = None
                    ) -> list[tuple[dt.date, str, CompactedDay]]:
    """The days of every compacted month under `base` (the offers area) that have no file of
    their own (`shadowed`); `manifests`: the manifests of a listing the caller already has."""
    out = []
    if manifests is None:
        if objstore.is_remote(base):
            manifests = _list_objects(base)[1]
        elif base.is_dir():
            manifests = [m for month_dir in base.iterdir() if _MONTH_DIR.match(month_dir.name)
                         for m in month_dir.glob(f"provider=*/{MANIFEST}")]
        else:
            manifests = []
    for path in manifests:
        m_prov = _PROVIDER_DIR.match(path.parent.name)
        if not m_prov:
            continue
        manifest = json.loads(path.read_text())
        for iso in manifest["days"]:
            day = dt.date.fromisoformat(iso)
            if (day, m_prov.group(1)) not in shadowed:
                out.append((day, m_prov.group(1),
                            _day_of(path.parent / manifest["file"], manifest, day,
                                    m_prov.group(1))))
    return out


# Compacted files already checked against their manifest's SHA-256 (local: by file state), and
# the bytes of remote ones (a rebuild reads a month's days one by one, across providers).
_VERIFIED: dict[tuple, bool] = {}
_REMOTE_BYTES: OrderedDict[str, bytes] = OrderedDict()
_REMOTE_BUDGET = 256 << 20


def _compacted_source(day: CompactedDay):
    """What pyarrow reads the day's file from, its bytes checked once against the manifest."""
    if objstore.is_remote(day.file):
        key = f"{day.file}#{day.sha256}"
        data = _REMOTE_BYTES.get(key)
        if data is None:
            data, meta, _ = day.file.get()
            if problem := _object_problem(day.file, data, {CHECKSUM_METADATA: day.sha256}):
                raise ChecksumError(problem)
            _REMOTE_BYTES[key] = data
            while sum(map(len, _REMOTE_BYTES.values())) > _REMOTE_BUDGET and len(
                    _REMOTE_BYTES) > 1:
                _REMOTE_BYTES.popitem(last=False)
        _REMOTE_BYTES.move_to_end(key)
        return pa.BufferReader(data)
    st = day.file.stat()
    key = (str(day.file), st.st_size, st.st_mtime_ns, day.sha256)
    if key not in _VERIFIED:
        got = _sha256(day.file)
        if got != day.sha256:
            raise ChecksumError(
                f"{day.file}: SHA-256 {got[:12]}... differs from {day.sha256[:12]}... recorded "
                f"in its manifest when the lake was compacted (edited or damaged since); "
                f"rebuild it with `gpuprices reparse`")
        _VERIFIED[key] = True
    return day.file


def _read_compacted(day: CompactedDay, columns: list[str] | None = None) -> pa.Table:
    pf = pq.ParquetFile(_compacted_source(day))
    if day.row_group is None:
        return pf.schema_arrow.empty_table().select(columns or pf.schema_arrow.names)
    return pf.read_row_group(day.row_group, columns=columns)


def list_quarantine(lake_root: Path | str) -> list[tuple[dt.date, str, Path]]:
    """Every quarantine partition as (snapshot_date, provider, path), sorted."""
    return _list_area(lake_root, QUARANTINE_AREA)


def conform_quarantine(table: pa.Table) -> pa.Table:
    """A quarantine table in QUARANTINE_SCHEMA order and types; missing offer columns become
    null. The `reason` column is required and must hold no nulls."""
    if "reason" not in table.column_names:
        raise ContractError("quarantine rows need a 'reason' column")
    out = conform_to(table, QUARANTINE_SCHEMA)
    if out.column("reason").null_count:
        raise ContractError("every quarantined row needs a reason")
    return out


def with_reason(table: pa.Table, reason: str | Sequence[str]) -> pa.Table:
    """Add a `reason` column (one text for all rows, or one per row) for write_quarantine."""
    if isinstance(reason, str):
        values = pa.array([reason] * table.num_rows, type=pa.string())
    else:
        values = pa.array(list(reason), type=pa.string())
        if len(values) != table.num_rows:
            raise ValueError(f"{len(values)} reasons for {table.num_rows} rows")
    if "reason" in table.column_names:
        table = table.drop_columns(["reason"])
    return table.append_column("reason", values)


def split_unmapped(table: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Split parsed offers (offers_to_table may carry gpu_model None) into rows that can go to
    the lake and rows for quarantine with reason 'unmapped gpu wording'. The offers half is
    returned with nullable types; validate_offers/write_partition check it."""
    mapped = pc.is_valid(table.column("gpu_model"))
    relaxed = table.cast(
        pa.schema([pa.field(f.name, f.type, nullable=True) for f in table.schema])
    )
    good = relaxed.filter(mapped)
    bad = relaxed.filter(pc.invert(mapped))
    return good, with_reason(bad, "unmapped gpu wording")


def write_quarantine(
    lake_root: Path | str, snapshot_date: dt.date | str, provider: str, table: pa.Table
) -> Path:
    """Write the rows that failed checks for one date and provider, replacing any earlier
    quarantine of that pair atomically (an empty table clears it). `table` carries the offer
    columns it has plus `reason`."""
    day = _as_date(snapshot_date)
    final = partition_path(lake_root, day, provider, area=QUARANTINE_AREA)
    table = conform_quarantine(table)
    _check_partition_values(table, day, provider, required=False)
    return _atomic_write_parquet(table, final)


def read_quarantine(
    lake_root: Path | str, snapshot_date: dt.date | str, provider: str
) -> pa.Table:
    """One quarantine partition in QUARANTINE_SCHEMA."""
    path = partition_path(lake_root, snapshot_date, provider, area=QUARANTINE_AREA)
    return conform_quarantine(_read_table(path))
