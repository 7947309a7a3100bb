"""The rows a SQL statement gives on a test's warehouse, read-only (the load is not disturbed and
nothing is written)."""

from __future__ import annotations

import duckdb

from gpuprices.flows.config import Settings


def query(settings: Settings, sql: str, *params) -> list[tuple]:
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()
