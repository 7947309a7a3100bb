"""The API's own read-only copy of the warehouse, so that it keeps answering while a load
replaces or rewrites the file.

DuckDB lets one process write a file, or any number read it, never both: a server holding the
warehouse open would stop the nightly load, and one opening it per request would fail while
the load runs. So the server copies the file when it changes (stat: inode, size, mtime), while
holding a read-only connection to it (which keeps a writer out for the copy's duration), and
answers from the copy. A load in progress (the file locked) leaves the last copy serving; the
next request after the load tries again. `gpuprices pull` and `gpuprices compact` rename a new
file into place, which the stat sees the same way. A copy's `tag` (its last load) is the
ETag's base: answers change only when a load changed the warehouse.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from gpuprices.warehouse import db, queries

# While a load holds the file, requests retry the copy at most this often (seconds).
RETRY_S = 1.0


class NoWarehouse(RuntimeError):
    """No copy to answer from: the file is missing, or locked since the server started."""


@dataclass
class Copy:
    path: Path
    con: duckdb.DuckDBPyConnection
    tag: str  # hash of the last load (queries.last_load)
    last_load: dict
    stat: tuple[int, int, int]
    made_at: float = field(default_factory=time.time)
    users: int = 0  # requests answering from it now
    retired: bool = False  # a newer copy serves; closed and deleted when its last user ends


class WarehouseCopies:
    def __init__(self, source: Path, work_dir: Path) -> None:
        self.source = Path(source)
        self.work_dir = Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        _remove_orphans(self.work_dir)
        self._copies: list[Copy] = []
        self._lock = threading.Lock()
        self._tried_at = 0.0
        self._seq = 0
        self.busy_since: float | None = None  # the source was locked at the last try

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.source)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def current(self) -> Copy:
        """The copy to answer from, refreshed first when the file changed and can be read."""
        stat = self._stat()
        latest = self._copies[-1] if self._copies else None
        if latest is not None and (stat is None or stat == latest.stat):
            return latest
        with self._lock:
            latest = self._copies[-1] if self._copies else None
            if latest is not None and stat == latest.stat:
                return latest
            if stat is not None and (latest is None or time.time() - self._tried_at >= RETRY_S):
                try:
                    return self._refresh(stat)
                except db.WarehouseBusy:
                    self._tried_at = time.time()
                    self.busy_since = self.busy_since or time.time()
            if latest is None:
                raise NoWarehouse(f"no warehouse to answer from at {self.source}: "
                                  + ("a load holds it; try again when it has finished"
                                     if stat else "build one (`gpuprices nightly --replay all`)"
                                     " or fetch one (`gpuprices pull`)"))
            return latest

    def _refresh(self, stat: tuple[int, int, int]) -> Copy:
        self._seq += 1
        dest = self.work_dir / f"warehouse-{os.getpid()}-{self._seq}.duckdb"
        part = dest.with_name(dest.name + ".part")
        # The read-only connection holds DuckDB's lock on the file while it is copied: no
        # load can begin writing it mid-copy. A write-ahead log beside it (a writer that
        # stopped before its checkpoint) is copied with it, so the copy replays it too.
        src = db.connect(self.source, read_only=True)
        try:
            stat = self._stat() or stat  # the file as it is under the lock
            shutil.copyfile(self.source, part)
            wal = Path(f"{self.source}.wal")
            if wal.exists():
                shutil.copyfile(wal, f"{dest}.wal")
        finally:
            src.close()
        os.replace(part, dest)
        con = db.connect(dest, read_only=True, config=db.QUERY_ONLY)
        info = queries.last_load(con)
        tag = hashlib.sha256(repr(sorted(info.items())).encode()).hexdigest()[:20]
        for old in self._copies:  # requests still running on an older copy finish there
            old.retired = True
            if old.users == 0:
                self._drop(old)
        self._copies = [c for c in self._copies if c.users] + [Copy(dest, con, tag, info, stat)]
        self.busy_since = None
        return self._copies[-1]

    @staticmethod
    def _drop(copy: Copy) -> None:
        copy.con.close()
        copy.path.unlink(missing_ok=True)
        Path(f"{copy.path}.wal").unlink(missing_ok=True)

    @contextmanager
    def cursor(self) -> Iterator[tuple[duckdb.DuckDBPyConnection, Copy]]:
        """A cursor of its own on the current copy (DuckDB connections are not shared between
        threads; cursors are cheap connections to the same open database), closed after."""
        while True:
            copy = self.current()
            with self._lock:
                if not copy.retired:  # not dropped between current() and here
                    copy.users += 1
                    break
        try:
            cur = copy.con.cursor()
            try:
                yield cur, copy
            finally:
                cur.close()
        finally:
            with self._lock:
                copy.users -= 1
                if copy.retired and copy.users == 0:
                    self._drop(copy)
                    self._copies = [c for c in self._copies if c is not copy]

    def close(self) -> None:
        with self._lock:
            for c in self._copies:
                self._drop(c)
            self._copies.clear()


def _remove_orphans(work_dir: Path) -> None:
    """Copies left by an API process that is gone (killed before it could delete them)."""
    for f in work_dir.glob("warehouse-*-*.duckdb*"):
        pid = f.name.split("-")[1]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            f.unlink(missing_ok=True)
