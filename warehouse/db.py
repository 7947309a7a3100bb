"""The DuckDB warehouse, one import for its users: the offers of every loaded snapshot,
`gpu_models`, `fx_rates`, `runs`, `providers`, and the views in warehouse/sql/.

The work is done in modules named for their job; this one only gathers their public names:

- warehouse/connection.py: opening the file, transactions, queries, compacting the file;
- warehouse/tables.py: the tables' DDL and the column groups of the offers store;
- warehouse/schema.py: init_schema (tables, migrations of older warehouses, views) and VIEWS;
- warehouse/store.py: loading offers partitions into the normalised store, and rebuilding it;
- warehouse/records.py: fx_rates, runs, run_log and providers.

A test that stands in for the store's insert patches `gpuprices.warehouse.store._insert_offers`
(where the loads look it up), not a name here.
"""

from __future__ import annotations

from gpuprices.warehouse.bulk_append import load_lake
from gpuprices.warehouse.connection import (
    QUERY_ONLY,
    WarehouseBusy,
    compact,
    connect,
    query,
    transaction,
)
from gpuprices.warehouse.records import (
    close_run,
    load_fx_rates,
    load_providers,
    open_run,
    record_run,
)
from gpuprices.warehouse.schema import SQL_DIR, VIEWS, age_limit, init_schema, refresh_views
from gpuprices.warehouse.schema import table_type as _table_type
from gpuprices.warehouse.store import load_partition, rebuild_offer_points
from gpuprices.warehouse.tables import RUN_STATUSES
from gpuprices.warehouse.tables import STORE_TABLES as _STORE_TABLES

__all__ = [
    "RUN_STATUSES",
    "SQL_DIR",
    "VIEWS",
    "_STORE_TABLES",
    "_table_type",
    "compact",
    "close_run",
    "connect",
    "QUERY_ONLY",
    "WarehouseBusy",
    "age_limit",
    "init_schema",
    "load_fx_rates",
    "load_lake",
    "load_providers",
    "load_partition",
    "open_run",
    "query",
    "rebuild_offer_points",
    "record_run",
    "refresh_views",
    "transaction",
]
