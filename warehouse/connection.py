"""The warehouse file: opening it, transactions, running our SQL, and compacting the file."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa


class WarehouseBusy(duckdb.IOException):
    """Another process holds the warehouse file (DuckDB allows one writing process, and no
    reader beside it): a load is running. Try again when it finishes."""


# For queries a person types (`gpuprices sql`): no file, network or extension access (COPY … TO,
# read_text('/etc/passwd'), INSTALL, ATTACH all refuse) and no SET that could turn it back on.
# Settings: https://duckdb.org/docs/stable/configuration/overview ("enable_external_access",
# "lock_configuration"); https://duckdb.org/docs/stable/operations_manual/securing_duckdb/overview
QUERY_ONLY = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}


# DuckDB's worker threads per connection; unset: one per core (DuckDB's default). Lower it where
# several gpuprices processes share a small machine (the API beside the nightly load; the test
# suite's two workers on two cores), so that their threads do not contend for the same cores.
# Setting: https://duckdb.org/docs/stable/configuration/overview ("threads").
THREADS_ENV = "GPUPRICES_DUCKDB_THREADS"


class BadSetting(ValueError):
    """A warehouse setting from the environment that cannot be used (said, exit 2)."""


def threads_setting() -> dict[str, int]:
    """{"threads": n} from GPUPRICES_DUCKDB_THREADS, or {} when it is unset or empty."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return {}
    if not raw.isdigit() or int(raw) < 1:
        raise BadSetting(f"{THREADS_ENV}={raw!r}: expected a whole number of threads, 1 or more")
    return {"threads": int(raw)}


def connect(db_path: Path | str, read_only: bool = False,
            config: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
    """Open (creating the folder if needed) the warehouse file; ':memory:' works for tests.
    Raises WarehouseBusy when another process holds the file."""
    if str(db_path) != ":memory:" and not read_only:
        Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    try:
        return duckdb.connect(str(db_path), read_only=read_only,
                              config={**threads_setting(), **(config or {})})
    except duckdb.IOException as exc:
        if "lock" not in str(exc).lower():
            raise
        raise WarehouseBusy(f"the warehouse {db_path} is busy: another process (a load) holds "
                            f"it; try again when it has finished ({exc})") from exc


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN … COMMIT, or ROLLBACK and re-raise on any error."""
    con.begin()
    try:
        yield con
    except BaseException:
        con.rollback()
        raise
    con.commit()


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, table: pa.Table) -> Iterator[str]:
    """`table` visible to SQL under a fresh name (yielded) for the block's duration."""
    # A unique name so nested or concurrent cursors never see each other's relation.
    name = f"_arrow_{uuid.uuid4().hex}"
    con.register(name, table)
    try:
        yield name
    finally:
        con.unregister(name)


def run(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
        ) -> duckdb.DuckDBPyConnection:
    """Execute `sql` with those of the named `params` ($name) it uses."""
    # DuckDB refuses named parameters a statement does not use: pass only those it names.
    used = set(re.findall(r"\$(\w+)", sql))
    return con.execute(sql, {k: v for k, v in (params or {}).items() if k in used} or None)


def query(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pa.Table:
    """Run a query and return an Arrow table (handy for the CLI and reports)."""
    return con.sql(sql, params=params or None).to_arrow_table()


def compact(db_path: Path | str) -> tuple[int, int]:
    """Rewrite the warehouse file into a fresh one and put it in place atomically; returns the
    sizes in bytes before and after.

    DuckDB reuses the blocks a DELETE or UPDATE frees but never gives them back to the file
    system, and segments rewritten by UPDATEs stay less compressed than fresh ones: after a
    backfill, many reloads, or moving an older layout in (which leaves the old table's blocks
    free), a copy is smaller. The caller must make sure nothing else writes the file meanwhile
    (DuckDB's own lock refuses a writer that already has it open).
    """
    path = Path(db_path)
    before = path.stat().st_size
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.part")

    def literal(p: Path) -> str:  # a path as a SQL string literal (ATTACH takes no parameter)
        return "'" + str(p).replace("'", "''") + "'"

    try:
        with duckdb.connect(":memory:", config=threads_setting()) as con:
            con.execute(f"ATTACH {literal(path)} AS src (READ_ONLY)")
            con.execute(f"ATTACH {literal(tmp)} AS dst")
            con.execute("COPY FROM DATABASE src TO dst")
            con.execute("DETACH dst")
            con.execute("DETACH src")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
    return before, path.stat().st_size
