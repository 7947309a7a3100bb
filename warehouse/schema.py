"""The warehouse's schema: creating the tables and views, moving older warehouses into today's
layout, and refreshing the reference data (`gpu_models`). init_schema is safe on every start."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from pathlib import Path

import duckdb
import pyarrow as pa

from gpuprices.warehouse import gpus, identity, networks
from gpuprices.warehouse.connection import registered, transaction
from gpuprices.warehouse.contract import OFFER_SCHEMA
from gpuprices.warehouse.store import bulk_load, recompute_day_cheapest, restore_all
from gpuprices.warehouse.tables import DUCK_TYPES, STORE_TABLES, TABLES, create_src

SQL_DIR = Path(__file__).parent / "sql"

# What the store's own SQL calls (warehouse/store.py: the firm-price rule of
# provider_day_cheapest): created before any load or migration runs.
STORE_MACROS = ("staging/price_caveat",)

# The rule provider_day_cheapest was stored under: 2 = firm prices only (price_caveat); 3 = and
# no aggregator listing of a cloud read first-party (price_caveat: extra.counted_under); 4 = and
# Google's DWS Flex-start is not firm. A warehouse recording another version (or none) has its
# minima recomputed on start.
DAY_CHEAPEST_VERSION = 4

# Created in this order because later views read earlier ones (DuckDB binds a view when it is
# created). Each entry is a file under sql/ without its .sql, named for the view or macro it
# creates: staging/ holds the building blocks over the stored tables, marts/ the questions.
# tests/test_views.py checks this list names every file in sql/.
VIEWS = (
    "staging/offers",
    "staging/price_caveat",
    "staging/default_max_age_days",
    "staging/provider_snapshots",
    "staging/offer_observations",
    "staging/fx_rate_periods",
    "staging/fx_rate_per_eur",
    "staging/fx_factor",
    "staging/offer_network",
    "staging/offers_as_of",
    "staging/provider_day_lowest",
    "staging/index_candidates",
    "staging/interrupted_runs",
    "staging/provider_runs",
    "staging/partial_snapshots",
    "staging/week_snapshot_pairs",
    "marts/latest_snapshot",
    "marts/provider_classes",
    "marts/latest_offers",
    "marts/latest_offer_networks",
    "marts/stale_providers",
    "marts/provider_coverage",
    "marts/offer_history",
    "marts/price_changes",
    "marts/cheapest_daily",
    "marts/cheapest_now",
    "marts/fx_currencies",
    "marts/fx_rates_freshness",
    "marts/offers_priced_as_of",
    "marts/offers_set_apart",
    "marts/gpu_prices_as_of",
    "marts/gpu_terms_as_of",
    "marts/gpu_provider_lowest",
    "marts/gpu_weekly_lowest",
    "marts/gpu_monthly_lowest",
    "marts/price_changes_between",
    "marts/offer_turnover",
    "marts/announced_prices",
    "marts/provider_health",
    "marts/measured_throughput",
)


def table_type(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    """'BASE TABLE', 'VIEW', … of the relation `name`, or None when there is none."""
    rows = con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = ?",
                       [name]).fetchall()
    return rows[0][0] if rows else None


def age_limit(con: duckdb.DuckDBPyConnection, max_age_days: int | None) -> int:
    """The age limit of "now" in days: the one given, else the warehouse's default
    (staging/default_max_age_days.sql), so callers never restate the 14."""
    if max_age_days is not None:
        return max_age_days
    return con.execute("SELECT default_max_age_days()").fetchone()[0]


def _migrate_offers_table(con: duckdb.DuckDBPyConnection) -> str | None:
    """A warehouse from before the normalised store keeps its rows in a table `offers` (and
    derived history tables of an older shape). Move the table aside (returned, to be loaded
    into the new tables) and drop what can be derived again."""
    if table_type(con, "offers") != "BASE TABLE":
        return None
    for view in reversed(VIEWS[1:]):
        # Macros are left: DROP VIEW IF EXISTS passes over them, and CREATE OR REPLACE renews them.
        con.execute(f"DROP VIEW IF EXISTS {Path(view).name}")  # our constant names
    con.execute("ALTER TABLE offers RENAME TO _offers_before_store")
    for table in STORE_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")  # our constant names
    return "_offers_before_store"


def _migrated_rows(con: duckdb.DuckDBPyConnection, old: str) -> str:
    """The old table's rows in the contract's columns (columns added to the contract after the
    warehouse was created are null), as a temp table."""
    have = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [old]
    ).fetchall()}
    def col(name: str) -> str:
        if name in have:
            return name
        if name == "snapshot_at":  # one snapshot a day then: its earliest capture names it
            return ("min(captured_at) OVER (PARTITION BY snapshot_date, provider) "
                    "AS snapshot_at")
        return f"NULL::{DUCK_TYPES[OFFER_SCHEMA.field(name).type]} AS {name}"
    cols = ", ".join(col(f.name) for f in OFFER_SCHEMA)
    src = create_src(con)
    con.execute(f"INSERT INTO {src} SELECT {cols} FROM {old}")  # noqa: S608 (our names)
    return src


def _migrate_fx_rates(con: duckdb.DuckDBPyConnection) -> None:
    """Recreate fx_rates without the primary key of a warehouse created with one."""
    if con.execute(
        "SELECT count(*) FROM duckdb_constraints() "
        "WHERE table_name = 'fx_rates' AND constraint_type = 'PRIMARY KEY'"
    ).fetchone()[0]:
        con.execute("ALTER TABLE fx_rates RENAME TO _fx_rates_old")
        con.execute(TABLES["fx_rates"])
        con.execute("INSERT INTO fx_rates SELECT * FROM _fx_rates_old")
        con.execute("DROP TABLE _fx_rates_old")


# Columns that hold snapshot times, added when intra-day snapshots came (warehouse/contract.py):
# table -> (column, the date column whose provider-day's earliest capture fills it).
_SNAPSHOT_TIMES = {
    "offer_points": (("snapshot_at", "snapshot_date"), ("prev_at", "prev_date")),
    "offer_ids": (("last_at", "last_date"),),
    "snapshot_dates": (("snapshot_at", "snapshot_date"),),
}


def _add_snapshot_times(con: duckdb.DuckDBPyConnection) -> None:
    """A warehouse from before intra-day snapshots held one snapshot per provider-day: give its
    stored rows the snapshot time the contract gives such rows (the provider-day's earliest
    captured_at, from offer_captures), in the columns the tables gained since."""
    added = []
    for table, columns in _SNAPSHOT_TIMES.items():
        have = {r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
        ).fetchall()}
        for column, _ in columns:
            if column not in have:
                con.execute(f"ALTER TABLE {table} ADD COLUMN {column} TIMESTAMPTZ")  # our names
                added.append((table, column))
    if not added:
        return
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _first_capture AS
        SELECT snapshot_date, provider, min(captured_at) AS t FROM offer_captures GROUP BY ALL
    """)
    for table, column in added:
        day = dict(_SNAPSHOT_TIMES[table])[column]
        con.execute(f"""
            UPDATE {table} AS x SET {column} = f.t FROM _first_capture AS f
            WHERE f.snapshot_date = x.{day} AND f.provider = x.provider
        """)  # noqa: S608 (our names)
    con.execute("DROP TABLE _first_capture")


def _follow_identity_version(con: duckdb.DuckDBPyConnection, restored: bool) -> None:
    """Re-store every offer when the stored identities follow another definition than
    identity.VERSION (a warehouse without the record follows the first), so that history is
    not split between an offer's old and new identity; `restored`: the store was just filled
    under the current definition. Needs the `offers` view."""
    row = con.execute("SELECT max(value) FROM warehouse_meta WHERE key = 'identity_version'"
                      ).fetchone()[0]
    if row == str(identity.VERSION):
        return
    if not restored and con.execute("SELECT count(*) FROM offer_ids").fetchone()[0]:
        restore_all(con)
    con.execute("DELETE FROM warehouse_meta WHERE key = 'identity_version'")
    con.execute("INSERT INTO warehouse_meta VALUES ('identity_version', ?)",
                [str(identity.VERSION)])


def _follow_day_cheapest_version(con: duckdb.DuckDBPyConnection) -> None:
    """Recompute provider_day_cheapest when it was stored under another rule than
    DAY_CHEAPEST_VERSION (as _follow_identity_version does for identities)."""
    row = con.execute("SELECT max(value) FROM warehouse_meta WHERE key = 'day_cheapest_version'"
                      ).fetchone()[0]
    if row == str(DAY_CHEAPEST_VERSION):
        return
    recompute_day_cheapest(con)
    con.execute("DELETE FROM warehouse_meta WHERE key = 'day_cheapest_version'")
    con.execute("INSERT INTO warehouse_meta VALUES ('day_cheapest_version', ?)",
                [str(DAY_CHEAPEST_VERSION)])


def _gpu_models_table() -> pa.Table:
    # Through gpuprices.warehouse.gpus so the warehouse sees exactly the models the mapper knows.
    rows = [dataclasses.asdict(m) for m in gpus.gpu_models().values()]
    return pa.Table.from_pylist(rows)


def _offer_networks_table() -> pa.Table:
    # Through gpuprices.warehouse.networks so the rows are checked (provider, fabric, pattern,
    # source).
    rows = [dataclasses.asdict(n) for n in networks.offer_networks()]
    return pa.Table.from_pylist(rows)


def refresh_views(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create every view from warehouse/sql/<view>.sql."""
    for view in VIEWS:
        con.execute((SQL_DIR / f"{view}.sql").read_text())


@functools.cache
def _code_fingerprint() -> str:
    """What init_schema makes of a warehouse, as code: the modules that write the schema, the
    SQL of every macro and view, and the versions the stored rows follow."""
    h = hashlib.sha256()
    for path in (Path(__file__), Path(__file__).with_name("tables.py"),
                 *(SQL_DIR / f"{name}.sql" for name in (*STORE_MACROS, *VIEWS))):
        h.update(path.read_bytes())
    h.update(f"{identity.VERSION} {DAY_CHEAPEST_VERSION}".encode())
    return h.hexdigest()


def _fingerprint(models: pa.Table, nets: pa.Table) -> str:
    """The code's fingerprint with the reference rows init_schema stores (gpus.csv and
    offer_networks.csv, read on each start)."""
    h = hashlib.sha256(_code_fingerprint().encode())
    for table in (models, nets):
        h.update(repr(table.to_pylist()).encode())
    return h.hexdigest()


# The catalog as init_schema leaves it: every table, view and macro with its columns and
# constraints. Recorded
# beside the fingerprint so that a warehouse changed since (a dropped view, an old layout, a
# column removed by hand) is set up again rather than taken as current.
_CATALOG_SQL = """
    SELECT hash(list(c ORDER BY c)) FROM (
        SELECT concat_ws(' ', table_name, column_name, data_type) AS c FROM duckdb_columns()
        WHERE schema_name = 'main' AND database_name = current_database()
        UNION ALL
        SELECT concat_ws(' ', table_name, constraint_type, constraint_text)
        FROM duckdb_constraints()
        WHERE schema_name = 'main' AND database_name = current_database()
        UNION ALL
        SELECT concat_ws(' ', function_name, function_type) FROM duckdb_functions()
        WHERE schema_name = 'main' AND database_name = current_database() AND NOT internal)
"""


def _meta(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    try:
        return dict(con.execute("SELECT key, value FROM warehouse_meta").fetchall())
    except duckdb.CatalogException:  # a new warehouse, or one from before the record
        return {}


def _is_current(con: duckdb.DuckDBPyConnection, fingerprint: str) -> bool:
    """True when init_schema has nothing to do: this code set the warehouse up (same
    fingerprint, same versions) and its catalog is the one it left."""
    meta = _meta(con)
    return (meta.get("schema_fingerprint") == fingerprint
            and meta.get("identity_version") == str(identity.VERSION)
            and meta.get("day_cheapest_version") == str(DAY_CHEAPEST_VERSION)
            and meta.get("schema_catalog") == str(con.execute(_CATALOG_SQL).fetchall()[0][0]))


def init_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables if missing, move a warehouse of an older layout or identity
    definition into them, refresh gpu_models from gpus.csv and offer_networks from
    offer_networks.csv and (re)create the views, in one
    transaction. Safe to call on every start: a warehouse this code already set up, unchanged
    since, is left as it is (every command opens the warehouse: recreating its ~45 views took
    ~0.12 s of each)."""
    models, networks_table = _gpu_models_table(), _offer_networks_table()
    fingerprint = _fingerprint(models, networks_table)
    if _is_current(con, fingerprint):
        return
    # Registered outside the transaction: unregistering inside an aborted one would fail and
    # hide the real error.
    with (registered(con, models) as name,
          registered(con, networks_table) as nets, transaction(con)):
        for macro in STORE_MACROS:
            con.execute((SQL_DIR / f"{macro}.sql").read_text())
        old = _migrate_offers_table(con)
        for ddl in TABLES.values():
            con.execute(ddl)
        _add_snapshot_times(con)
        # Fingerprints came after the table (tables.py): an older warehouse gains the column.
        con.execute("ALTER TABLE snapshot_dates ADD COLUMN IF NOT EXISTS rows_hash UBIGINT")
        _migrate_fx_rates(con)
        if old:
            bulk_load(con, _migrated_rows(con, old))
            con.execute(f"DROP TABLE {old}")  # noqa: S608 (our name)
        con.execute(f"CREATE OR REPLACE TABLE gpu_models AS SELECT * FROM {name}")  # noqa: S608
        con.execute(f"CREATE OR REPLACE TABLE offer_networks AS SELECT * FROM {nets}")  # noqa: S608
        refresh_views(con)
        _follow_identity_version(con, restored=bool(old))
        _follow_day_cheapest_version(con)
        con.execute("DELETE FROM warehouse_meta WHERE key IN "
                    "('schema_fingerprint', 'schema_catalog')")
        con.execute("INSERT INTO warehouse_meta VALUES ('schema_fingerprint', ?), "
                    "('schema_catalog', ?)",
                    [fingerprint, str(con.execute(_CATALOG_SQL).fetchall()[0][0])])
