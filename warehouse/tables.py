"""The warehouse's tables: their DDL and the groups of contract columns the offers store keeps
apart (see warehouse/store.py for how a load fills them, docs/warehouse.md for the layout)."""

from __future__ import annotations

from collections.abc import Iterable

import duckdb
import pyarrow as pa

from gpuprices.warehouse import identity
from gpuprices.warehouse.contract import OFFER_SCHEMA

RUN_STATUSES = ("ok", "failed", "degraded", "stale", "skipped")

DUCK_TYPES = {
    pa.date32(): "DATE",
    pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
    pa.string(): "VARCHAR",
    pa.float64(): "DOUBLE",
    pa.int32(): "INTEGER",
    pa.bool_(): "BOOLEAN",
}

# The identity columns of an offer: warehouse/identity.py (variant is built from extra).
IDENTITY = identity.STORED
# Contract columns kept once per distinct combination (they change rarely if ever per offer).
DETAILS = ("gpu_memory_gb", "vcpus", "ram_gb", "interconnect", "billing_increment_s",
           "min_billing_s", "extra")
# Contract columns that describe the capture a row was read from.
CAPTURE = ("captured_at", "source_url", "raw_sha256")
# The rest (snapshot_date, provider, gpu_model, price_per_hour, available) is kept per row in
# offer_points; price_per_gpu_hour is derived. tests/test_db.py checks that the view `offers`
# gives back exactly the contract's columns and types.

# The tables every offers load rewrites (a full rebuild empties them all).
STORE_TABLES = ("offer_points", "offer_ids", "offer_details", "offer_captures",
                "snapshot_dates", "provider_day_cheapest")


def _column_ddl(f: pa.Field, nullable: bool | None = None) -> str:
    null_ok = f.nullable if nullable is None else nullable
    return f"{f.name} {DUCK_TYPES[f.type]}{'' if null_ok else ' NOT NULL'}"


def _columns_ddl(names: Iterable[str]) -> str:
    return ",\n        ".join(_column_ddl(OFFER_SCHEMA.field(n)) for n in names)


def create_src(con: duckdb.DuckDBPyConnection) -> str:
    """(Re)create the temp table `_src` with the contract's columns and NOT NULL constraints,
    the staging area every load and rebuild fills; returns its name."""
    cols = ",\n    ".join(_column_ddl(f) for f in OFFER_SCHEMA)
    con.execute(f"CREATE OR REPLACE TEMP TABLE _src (\n    {cols}\n)")
    return "_src"


_IDENTITY_DDL = ",\n        ".join(_column_ddl(OFFER_SCHEMA.field(c), nullable=c != "provider")
                                 for c in identity.COLUMNS)

# Created in this order (none reads another). Keyed by name so a migration can recreate one.
TABLES = {
    "fx_rates": """
    CREATE TABLE IF NOT EXISTS fx_rates (
        -- One row per (date, currency), kept so by load_fx_rates rather than by a PRIMARY KEY:
        -- the key's index over the ECB history since 1999 (~220,000 rates) took ~15 MB on
        -- disk, ten times the table.
        date DATE NOT NULL,
        currency VARCHAR NOT NULL,
        -- ECB reference rates are EUR based: units of `currency` for one euro.
        rate_per_eur DOUBLE NOT NULL CHECK (rate_per_eur > 0),
        source VARCHAR
    )
    """,
    # status: RUN_STATUSES, written out (tests/test_db.py records a run of each).
    "runs": """
    CREATE TABLE IF NOT EXISTS runs (
        run_id VARCHAR NOT NULL,
        started_at TIMESTAMPTZ,
        finished_at TIMESTAMPTZ,
        provider VARCHAR NOT NULL,
        snapshot_date DATE,
        status VARCHAR NOT NULL
            CHECK (status IN ('ok', 'failed', 'degraded', 'stale', 'skipped')),
        rows BIGINT,
        quarantined BIGINT,
        error VARCHAR,
        message VARCHAR
    )
    """,
    # One row per pipeline run: started_at written before its loads (from the run's journal,
    # flows/ops/run_journal.py), finished_at once every provider-day is recorded. A row without
    # finished_at that a reader can see is a run that was killed or crashed: `interrupted`
    # (staging/provider_runs.sql). providers: comma-separated.
    "run_log": """
    CREATE TABLE IF NOT EXISTS run_log (
        run_id VARCHAR NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ,
        providers VARCHAR
    )
    """,
    # Which file state of each lake partition the warehouse holds (its size and modification
    # time when it was loaded): a partition missing here, or changed since, is loaded by the
    # next run (warehouse/lake_sync.py; the lake is the source of truth).
    "lake_loads": """
    CREATE TABLE IF NOT EXISTS lake_loads (
        snapshot_date DATE NOT NULL,
        provider VARCHAR NOT NULL,
        file_size BIGINT NOT NULL,
        file_mtime_ns BIGINT NOT NULL,
        loaded_at TIMESTAMPTZ NOT NULL
    )
    """,
    # One row per offer identity (see docs/warehouse.md, "Offer identity"). offer_no is a dense
    # number given at first sight (small integers compress to almost nothing in offer_points,
    # a 64-bit hash does not); offer_id is the identity's hash, what the views show. last_* is
    # the offer's latest observation (latest date and snapshot, then highest price): the previous
    # observation of a night appended after it, and the end of its current run. No price per
    # GPU-hour is stored anywhere: it is price_per_hour / gpu_count (how the contract derives
    # it), computed by the views; stored, those full-precision quotients were the largest
    # column of a year's warehouse.
    # The identity columns are nullable but for provider (the contract's types; a warehouse
    # made before this was generated has the same columns in the same order).
    "offer_ids": f"""
    CREATE TABLE IF NOT EXISTS offer_ids (
        offer_no INTEGER NOT NULL,
        offer_id UBIGINT NOT NULL,
        {_IDENTITY_DDL},
        variant VARCHAR NOT NULL,
        last_date DATE,
        last_price_per_hour DOUBLE,
        last_at TIMESTAMPTZ
    )
    """,
    # Which definition of offer identity (identity.VERSION) the stored identities follow.
    "warehouse_meta": """
    CREATE TABLE IF NOT EXISTS warehouse_meta (
        key VARCHAR NOT NULL,
        value VARCHAR
    )
    """,
    # One row per distinct combination of the detail columns; detail_hash finds it again.
    "offer_details": f"""
    CREATE TABLE IF NOT EXISTS offer_details (
        detail_no INTEGER NOT NULL,
        detail_hash UBIGINT NOT NULL,
        {_columns_ddl(DETAILS)}
    )
    """,
    # One row per capture a (snapshot_date, provider) partition was parsed from.
    "offer_captures": f"""
    CREATE TABLE IF NOT EXISTS offer_captures (
        capture_no INTEGER NOT NULL,
        snapshot_date DATE NOT NULL,
        provider VARCHAR NOT NULL,
        {_columns_ddl(CAPTURE)}
    )
    """,
    # One row per row of an offers partition. snapshot_at: the snapshot the row belongs to
    # (several a day for an hourly provider; warehouse/contract.py). prev_date / prev_at /
    # old_price_per_hour: the previous observation of the same offer in (snapshot_date,
    # snapshot_at, price_per_hour) order: its day and snapshot (its own for a duplicate at
    # another price in one snapshot; null for the first) and old_price_per_hour (only when the
    # price differs from the previous one: mostly null, so nearly free on disk). dup_no > 0
    # marks a repeat of an (offer, snapshot, price) already in the partition (prev_* = its own
    # snapshot, no old price): the history views count it once. snapshot_at and prev_at are
    # appended last and nullable so that a warehouse from before them gains them by ALTER TABLE
    # (warehouse/schema.py), filled from its captures.
    "offer_points": """
    CREATE TABLE IF NOT EXISTS offer_points (
        snapshot_date DATE NOT NULL,
        provider VARCHAR NOT NULL,
        gpu_model VARCHAR NOT NULL,
        offer_no INTEGER NOT NULL,
        price_per_hour DOUBLE NOT NULL,
        prev_date DATE,
        old_price_per_hour DOUBLE,
        dup_no INTEGER NOT NULL,
        detail_no INTEGER NOT NULL,
        capture_no INTEGER NOT NULL,
        available BOOLEAN,
        snapshot_at TIMESTAMPTZ,
        prev_at TIMESTAMPTZ
    )
    """,
    # Per (snapshot_date, provider, gpu_model, pricing_model, currency): the lowest firm price
    # per GPU-hour among the offers in force that day (announced future prices and prices that
    # are not firm left out: sql/staging/price_caveat.sql), how many such offers, and the row
    # holding it (ties: sku, region, offer number). cheapest_daily ranks
    # these few hundred thousand rows instead of every offer of the year.
    "provider_day_cheapest": """
    CREATE TABLE IF NOT EXISTS provider_day_cheapest (
        snapshot_date DATE NOT NULL,
        provider VARCHAR NOT NULL,
        gpu_model VARCHAR NOT NULL,
        pricing_model VARCHAR NOT NULL,
        currency VARCHAR NOT NULL,
        min_price_per_gpu_hour DOUBLE NOT NULL,
        n_offers BIGINT NOT NULL,
        offer_no INTEGER NOT NULL,
        price_per_hour DOUBLE NOT NULL,
        available BOOLEAN
    )
    """,
    # The provider registry's declarations (spiders/registry.py), replaced whole at every load
    # (records.load_providers): the warehouse cannot import spiders, so flows/ passes them in.
    # kind: hyperscaler | gpu_cloud | inference_host (registry.KINDS); supply: own | marketplace |
    # reseller | aggregator (registry.SUPPLIES).
    "providers": """
    CREATE TABLE IF NOT EXISTS providers (
        provider VARCHAR NOT NULL,
        name VARCHAR,
        kind VARCHAR,
        supply VARCHAR
    )
    """,
    # The (provider, snapshot_date) pairs that hold offers: numbered at query time (a few
    # thousand rows), so a snapshot loaded in the middle of history renumbers nothing stored.
    # Measured results of benchmark runs on rented offers (`gpuprices record`, loaded by
    # warehouse/benchmarks.py, one row per BENCHMARK_KEY: recording a row again replaces it).
    # step_time_cv: the step time's standard deviation / mean; allreduce_busbw_gbs: nccl-tests'
    # all_reduce_perf bus bandwidth in GB/s; cost: what the run cost, in `currency`.
    "benchmarks": """
    CREATE TABLE IF NOT EXISTS benchmarks (
        provider VARCHAR NOT NULL,
        sku VARCHAR NOT NULL,
        date DATE NOT NULL,
        workload VARCHAR NOT NULL,
        gpu_model VARCHAR NOT NULL,
        gpus INTEGER NOT NULL CHECK (gpus >= 1),
        tokens_per_s DOUBLE NOT NULL CHECK (tokens_per_s > 0),
        mfu DOUBLE,
        step_time_cv DOUBLE,
        allreduce_busbw_gbs DOUBLE,
        checkpoint_write_s DOUBLE,
        checkpoint_restore_s DOUBLE,
        recovery_min DOUBLE,
        cost DOUBLE,
        currency VARCHAR,
        notes VARCHAR,
        source VARCHAR,
        recorded_at TIMESTAMPTZ NOT NULL
    )
    """,
    # One row per loaded snapshot: (provider, snapshot_date, snapshot_at), and rows_hash, the
    # fingerprint of its rows as loaded (store._SNAPSHOTS_SQL; NULL in a warehouse from before
    # it: the next load of that day replaces it whole). Appended last: added by ALTER TABLE.
    "snapshot_dates": """
    CREATE TABLE IF NOT EXISTS snapshot_dates (
        provider VARCHAR NOT NULL,
        snapshot_date DATE NOT NULL,
        snapshot_at TIMESTAMPTZ,
        rows_hash UBIGINT
    )
    """,
}
