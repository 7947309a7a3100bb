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


# Every stored table of the warehouse, numbers included (offer_no, detail_no, capture_no): what
# two loads must agree on to be the same warehouse.
STORED_TABLES = {
    "offer_points": "SELECT * FROM offer_points ORDER BY ALL",
    "offer_ids": "SELECT * FROM offer_ids ORDER BY offer_no",
    "offer_details": "SELECT * EXCLUDE (extra), extra::VARCHAR FROM offer_details ORDER BY ALL",
    "offer_captures": "SELECT * FROM offer_captures ORDER BY ALL",
    "snapshot_dates": "SELECT * FROM snapshot_dates ORDER BY ALL",
    "provider_day_cheapest": "SELECT * FROM provider_day_cheapest ORDER BY ALL",
}
