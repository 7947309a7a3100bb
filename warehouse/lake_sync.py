"""Keeping the warehouse level with the lake, the source of truth.

A night writes its lake partitions first and loads them after; a load that cannot happen (the
warehouse locked past the wait, the process killed, a full disk) leaves partitions the
warehouse does not hold. Every load records the file state (size, modification time) of each
partition it loaded in `lake_loads`, in the same transaction as the rows; `pending` lists the
partitions the warehouse lacks or holds an older state of, so the next run loads them.

On object storage the state is (size, a number from the object's ETag): an object's
modification time has whole seconds only, its ETag changes with every rewrite.

A day moved into a compacted month file (warehouse/lake_compact.py) keeps the state its own file
had when it was compacted (the manifest records it): compaction moves bytes, not data, so the
warehouse does not load the month again.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pyarrow as pa

from gpuprices.warehouse import bulk_append, lake, objstore, store
from gpuprices.warehouse.connection import transaction

Stamp = tuple[int, int]  # (size in bytes, modification time in ns)


def stamp_of(path: Path | objstore.StorePath | lake.CompactedDay) -> Stamp:
    if isinstance(path, lake.CompactedDay):
        return path.stamp
    if isinstance(path, objstore.StorePath):
        return _object_stamp(path.stat())
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _object_stamp(info: objstore.ObjectInfo) -> Stamp:
    return info.size, info.version_number


def read_stamped(lake_root: Path | str, day: dt.date, provider: str) -> tuple[pa.Table, Stamp]:
    """A partition's rows (lake.read_partition) with its file state. On local disk the state
    is taken first: a rewrite while reading shows at the next run. On object storage it comes
    with the bytes, from the one GET that reads them (the state of exactly what was read):
    finding the object, its state and reading it were three HEADs and a GET."""
    if not objstore.is_remote(lake_root):
        stamp = stamp_of(lake.find_partition(lake_root, day, provider))
        return lake.read_partition(lake_root, day, provider), stamp
    try:
        table, info = lake.read_object(lake.partition_path(lake_root, day, provider))
    except FileNotFoundError:  # no object of its own: its row group in a compacted month
        path = lake.compacted_day(lake_root, day, provider)
        return lake.read_offers_file(path), stamp_of(path)
    return table, _object_stamp(info)


def _stamp_now(lake_root: Path | str, day: dt.date, provider: str) -> Stamp | None:
    """A partition's current file state, None when there is none; on object storage one HEAD
    for a day with its own object."""
    try:
        if objstore.is_remote(lake_root):
            info = lake.partition_path(lake_root, day, provider).head()
            return (_object_stamp(info) if info is not None
                    else stamp_of(lake.compacted_day(lake_root, day, provider)))
        return stamp_of(lake.find_partition(lake_root, day, provider))
    except FileNotFoundError:
        return None


def _stamps_now(lake_root: Path | str) -> dict:
    """Every partition's current state; on object storage from one listing, not one request
    per partition."""
    if not objstore.is_remote(lake_root):
        return {(d, p): (path, stamp_of(path)) for d, p, path in lake.list_partitions(lake_root)}
    return {(d, p): (path, stamp_of(path) if info is None else _object_stamp(info))
            for d, p, path, info in lake.partition_objects(lake_root)}


def load_stamped(con: duckdb.DuckDBPyConnection, day: dt.date, provider: str, table: pa.Table,
                 stamp: Stamp) -> int:
    """Replace the offers of (day, provider) with `table`, read from a lake file whose state
    was `stamp` before reading, and record that state, in one transaction."""
    with transaction(con):
        n = store._insert_offers(con, day, provider, table)
        _record_many(con, [(day, provider, stamp)])
    return n


def append_stamped(con: duckdb.DuckDBPyConnection,
                   parts: list[tuple[dt.date, str, pa.Table, Stamp]]) -> dict:
    """load_stamped for many provider-days in one transaction and one set of bulk statements
    (warehouse/bulk_append.py): all are stored and stamped, or none. Raises
    bulk_append.NotAppend when the batch is not an append (load it day by day instead)."""
    with transaction(con):
        counts = bulk_append.append_many(con, [(d, p, t) for d, p, t, _ in parts])
        _record_many(con, [(day, provider, stamp) for day, provider, _table, stamp in parts])
    return counts


def _record_many(con: duckdb.DuckDBPyConnection,
                 stamps: list[tuple[dt.date, str, Stamp]]) -> None:
    """Record that each provider-day was loaded from a file in the state `stamp`, in two
    statements however many days (a whole replay's load recorded ~550 days with two
    statements each, 1-2 s of it); a provider-day given twice keeps its last stamp. Inside the
    caller's transaction."""
    last = {(day, provider): stamp for day, provider, stamp in stamps}
    if not last:
        return
    table = pa.table({
        "snapshot_date": pa.array([d for d, _p in last], pa.date32()),
        "provider": pa.array([p for _d, p in last], pa.string()),
        "file_size": pa.array([s[0] for s in last.values()], pa.int64()),
        "file_mtime_ns": pa.array([s[1] for s in last.values()], pa.int64()),
    })
    con.register("_lake_sync_stamps", table)
    try:
        con.execute("DELETE FROM lake_loads WHERE (snapshot_date, provider) IN "
                    "(SELECT (snapshot_date, provider) FROM _lake_sync_stamps)")
        con.execute("INSERT INTO lake_loads SELECT snapshot_date, provider, file_size, "
                    "file_mtime_ns, now() FROM _lake_sync_stamps")
    finally:
        con.unregister("_lake_sync_stamps")


def record_loaded(con: duckdb.DuckDBPyConnection, lake_root: Path | str,
                  loaded: list[tuple[dt.date, str]]) -> None:
    """Record the current file state of partitions just loaded some other way (`gpuprices
    load`). Run right after that load under the run lock: nothing rewrote them meanwhile."""
    stamps = [(day, provider, _stamp_now(lake_root, day, provider)) for day, provider in loaded]
    with transaction(con):
        _record_many(con, [(d, p, stamp) for d, p, stamp in stamps if stamp is not None])


def pending(con: duckdb.DuckDBPyConnection, lake_root: Path | str
            ) -> list[tuple[dt.date, str, Path, Stamp]]:
    """Lake partitions the warehouse lacks, or whose file changed since it was loaded, in date
    order, with their current file state.

    A partition the warehouse holds (in snapshot_dates) but never stamped was loaded before
    stamps were kept: its current state is recorded as loaded, not loaded again."""
    stamps = {(d, p): (s, m) for d, p, s, m in con.execute(
        "SELECT snapshot_date, provider, file_size, file_mtime_ns FROM lake_loads").fetchall()}
    held = set(con.execute("SELECT snapshot_date, provider FROM snapshot_dates").fetchall())
    out, adopted = [], []
    for (day, provider), (path, now) in _stamps_now(lake_root).items():
        recorded = stamps.get((day, provider))
        if recorded is None and (day, provider) in held:
            adopted.append((day, provider, now))
        elif recorded != now:
            out.append((day, provider, path, now))
    if adopted:
        with transaction(con):
            _record_many(con, adopted)
    return out
