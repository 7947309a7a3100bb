"""Where a query runs: a warehouse file opened read-only for one question, or a connection the
caller holds; an optional time limit; results as Arrow or pandas."""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from gpuprices.warehouse.connection import QUERY_ONLY, connect

Source = str | Path | duckdb.DuckDBPyConnection


class QueryTimeout(TimeoutError):
    """A question took longer than its time limit and was interrupted."""


@contextmanager
def reading(source: Source, timeout_s: float | None = None
            ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to ask on: a path is opened read-only (QUERY_ONLY: no file, network or
    extension access, no SET) and closed at the end; a connection is used as it is and left
    open. With `timeout_s` the running statement is interrupted when the time is up
    (DuckDB has no statement timeout of its own: interrupt() from another thread is its way,
    https://duckdb.org/docs/stable/clients/python/reference/ "interrupt") and QueryTimeout
    raised. WarehouseBusy when a load holds the file."""
    owned = not isinstance(source, duckdb.DuckDBPyConnection)
    con = connect(source, read_only=True, config=QUERY_ONLY) if owned else source
    timer = fired = None
    if timeout_s is not None:
        fired = threading.Event()

        def stop() -> None:
            fired.set()
            con.interrupt()

        timer = threading.Timer(timeout_s, stop)
        timer.daemon = True
        timer.start()
    try:
        yield con
    except duckdb.InterruptException as exc:
        if fired is not None and fired.is_set():
            raise QueryTimeout(f"the query took longer than {timeout_s:g} s") from exc
        raise
    finally:
        if timer is not None:
            timer.cancel()
        if owned:
            con.close()


def unless_none(*columns: str) -> str:
    """A WHERE condition: each column equals the parameter of its name ($column), unless that
    parameter is NULL (None does not filter). The names are a module's own constants, checked
    to be plain names, never a caller's text: values reach SQL only as parameters."""
    if not columns or not all(c.isidentifier() for c in columns):
        raise ValueError(f"not column names: {columns!r}")
    return " AND ".join(f"(${c} IS NULL OR {c} = ${c})" for c in columns)


def arrow(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
          ) -> pa.Table:
    """`sql` with the named parameters ($name) it uses, as an Arrow table."""
    # DuckDB refuses named parameters a statement does not use. execute(), not sql(): a caller's
    # connection may hold an unfetched result, which DuckDB 2 lets only execute() replace; the
    # extra copy it warns about is small for answers of this size.
    used = set(re.findall(r"\$(\w+)", sql))
    cur = con.execute(sql, {k: v for k, v in (params or {}).items() if k in used} or None)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Arrow output on a DB-API result", UserWarning)
        return cur.to_arrow_table()


def out(table: pa.Table, pandas: bool) -> Any:
    """The table as asked: Arrow, or a pandas DataFrame."""
    return table.to_pandas() if pandas else table


def rows(table: pa.Table) -> list[dict[str, Any]]:
    """The table as a list of dicts (what the sizing engine and the report's tables take)."""
    return table.to_pylist()
