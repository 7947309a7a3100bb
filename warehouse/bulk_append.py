"""Loading many provider-days at once: one set of bulk statements for the whole batch instead
of one transaction of ~15 statements per provider-day (a replay of every bundled snapshot is
500+ provider-days; docs/warehouse.md "Bulk loads" has the figures).

The batch is one transaction: all of it is stored or none. It takes the bulk path when it
appends, i.e. every provider-day of the batch is later than everything stored of its provider
(a first load, a replay into a fresh warehouse, nights caught up in order); the previous
observation of each offer is then the one before it within the batch (a window over the batch)
or, for its first point, the offer's stored last_*. Offer, detail and capture numbers are
given in batch order (store._NUMBER_SQL orders by `seq`), so the warehouse is exactly the one
loading the provider-days one by one in that order gives. Any other batch (a reload, a day in
the middle of history, one provider-day twice) raises NotAppend before changing anything;
callers then load it day by day (store.load_partition / lake_sync.load_stamped).

What the warehouse already holds is judged by the snapshots' fingerprints first
(store._known_snapshots): a provider-day held unchanged is left out of the batch wherever it
lies, and an hourly provider's day held with fewer snapshots (the same day file one crawl later)
contributes only its new snapshots, as an append (one hour's load of every provider is then one
set of bulk statements).

`load_lake` (`gpuprices load`) reads the lake in batches of a month (and at most BATCH_ROWS
rows) in date order and stores each batch this way, day by day only when it is no append (a
changed day in the middle of history): a rebuild into an empty warehouse is all appends, and a
reload of an unchanged lake stores nothing again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from pathlib import Path

import duckdb
import pyarrow as pa

from gpuprices.warehouse import lake, store
from gpuprices.warehouse.connection import run, transaction
from gpuprices.warehouse.contract import OFFER_SCHEMA
from gpuprices.warehouse.tables import create_src

# The batch's points: within the batch each point follows the one before it (a day's
# snapshots in time order, duplicates within a snapshot in price order, as store._POINTS_SQL
# does); an offer's first point in the batch follows its stored last_* (NULL for a new offer).
_POINTS_SQL = f"""
    INSERT INTO offer_points
    SELECT n.snapshot_date, n.provider, n.gpu_model, offer_no, n.price_per_hour,
           CASE WHEN dup_no > 0 THEN n.snapshot_date WHEN k = 1 THEN b.last_date ELSE lag_d END,
           CASE WHEN dup_no > 0 THEN NULL
                WHEN k = 1 THEN CASE WHEN {store._differs("b.last_price_per_hour",
                                                          "n.price_per_hour")}
                                     THEN b.last_price_per_hour END
                WHEN {store._differs("lag_p", "n.price_per_hour")} THEN lag_p END,
           dup_no, detail_no, capture_no, available, n.snapshot_at,
           CASE WHEN dup_no > 0 THEN n.snapshot_at WHEN k = 1 THEN b.last_at ELSE lag_t END
    FROM (
        SELECT *, row_number() OVER w AS k,
               lag(snapshot_date) OVER w AS lag_d, lag(snapshot_at) OVER w AS lag_t,
               lag(price_per_hour) OVER w AS lag_p
        FROM _rows
        WINDOW w AS (PARTITION BY offer_no, dup_no = 0
                     ORDER BY snapshot_date, snapshot_at, price_per_hour)
    ) AS n
    LEFT JOIN offer_ids AS b USING (offer_no)
    ORDER BY n.snapshot_date, n.provider, n.gpu_model, offer_no, n.snapshot_at, n.price_per_hour,
             dup_no
"""  # noqa: S608 (our constants)

_LAST_SQL = """
    UPDATE offer_ids AS i
    SET last_date = t.m.d, last_at = t.m.t, last_price_per_hour = t.m.p
    FROM (SELECT offer_no, max({'d': snapshot_date, 't': snapshot_at, 'p': price_per_hour}) AS m
          FROM _rows GROUP BY offer_no) AS t
    WHERE i.offer_no = t.offer_no
"""


class NotAppend(ValueError):
    """The batch is not a pure append: load it provider-day by provider-day."""


def _check_append(con: duckdb.DuckDBPyConnection, keys: list[tuple[dt.date, str]]) -> None:
    first: dict[str, dt.date] = {}
    for day, provider in keys:
        first[provider] = min(day, first.get(provider, day))
    stored = dict(con.execute(
        "SELECT provider, max(snapshot_date) FROM snapshot_dates GROUP BY provider").fetchall())
    late = [p for p, d in first.items() if p in stored and stored[p] >= d]
    if late:
        raise NotAppend(f"the warehouse holds days of {', '.join(sorted(late))} on or after "
                        "the batch's first")


def append_many(con: duckdb.DuckDBPyConnection,
                parts: Iterable[tuple[dt.date, str, pa.Table]]) -> dict[tuple[dt.date, str], int]:
    """Store the provider-days `parts` (in that order) inside the caller's transaction, in one
    set of bulk statements. Returns rows per (day, provider). Raises NotAppend (nothing done)
    when the batch is not an append, ContractError for a table that breaks the contract."""
    parts = [(store.as_date(d), p, t) for d, p, t in parts]
    keys = [(d, p) for d, p, _ in parts]
    if len(set(keys)) != len(keys):
        raise NotAppend("a provider-day appears twice in the batch")
    src = create_src(con)
    counts, tables = {}, []
    for day, provider, table in parts:
        tables.append(store._checked(day, provider, table))
        counts[(day, provider)] = tables[-1].num_rows
    # The batch's staging relations (_batch, _in, _rows) are Arrow tables held in this frame
    # and read by DuckDB's replacement scan, neither TEMP tables nor registered views: DuckDB
    # keeps a dropped temp table, and a registered table, until the transaction ends, and
    # `gpuprices load` is one transaction over every month of the lake (three years of hourly
    # providers grew ~1.3 GB a month that way and ran out of memory). A replacement scan holds
    # nothing past its statement; the frame's tables are freed batch by batch.
    # https://duckdb.org/docs/stable/clients/python/data_ingestion ("DataFrames and Arrow
    # tables ... referenced by variable name"; python_scan_all_frames lets the store's helpers
    # see this frame's names).
    _batch = pa.concat_tables(tables) if tables else OFFER_SCHEMA.empty_table()
    del tables
    for name in ("_batch", "_in", "_rows"):  # a table of that name would shadow ours
        run(con, f"DROP TABLE IF EXISTS {name}")
    scan_all = con.execute("SELECT current_setting('python_scan_all_frames')").fetchall()[0][0]
    con.execute("SET python_scan_all_frames = true")
    try:
        same, grown, replaced = store._known_snapshots(con, "_batch")
        if replaced:
            raise NotAppend(f"the warehouse holds other rows of {len(replaced)} provider-days "
                            "of the batch")
        _check_append(con, [k for k in keys if k not in same and k not in grown])
        # Rows the warehouse lacks: the whole batch, or (some of it held) its other rows in
        # _src, judged on the Arrow rows as they are (_known_snapshots).
        source = "_batch"
        if same or grown:
            store._drop_held(con, same, grown, into="_batch")
            source = src
        if not con.execute(f"SELECT count(*) FROM {source}").fetchall()[0][0]:  # noqa: S608
            return counts
        _seq = pa.table({  # noqa: F841 (read by name below)
            "snapshot_date": pa.array([d for d, _ in keys], pa.date32()),
            "provider": pa.array([p for _, p in keys], pa.string()),
            "seq": pa.array(range(len(keys)), pa.int32())})
        _in = con.sql(store._STAGE_SELECT.format(  # noqa: F841 (read by name below)
            src=f"(SELECT s.*, q.seq FROM {source} AS s "  # noqa: S608 (our names)
                "JOIN _seq AS q USING (snapshot_date, provider))")).to_arrow_table()
        run(con, store._SNAPSHOTS_SQL.format(src=source))
        del _batch
        for sql in store._NEW_NUMBERS_SQL:
            run(con, sql)
        _rows = con.sql(store._ROWS_SELECT).to_arrow_table()  # noqa: F841 (read by name)
        del _in
        # A grown day's cheapest offers are those of its new latest snapshot, in this batch.
        for day, provider in grown:
            run(con, "DELETE FROM provider_day_cheapest WHERE snapshot_date = $d "
                "AND provider = $p", {"d": day, "p": provider})
        run(con, store._CHEAPEST_SQL.format(rows="_rows"))
        run(con, _POINTS_SQL)
        run(con, _LAST_SQL)
    finally:
        con.execute(f"SET python_scan_all_frames = {'true' if scan_all else 'false'}")
        run(con, f"DROP TABLE IF EXISTS {src}")
    return counts


# At most this many rows in one bulk batch of load_lake (about 1 GB of Arrow and DuckDB staging
# at the contract's ~24 columns): a month of 31 hourly providers can hold millions.
BATCH_ROWS = 2_000_000


def load_lake(
    con: duckdb.DuckDBPyConnection,
    lake_root: Path | str,
    dates: Iterable[dt.date | str] | None = None,
    providers: Iterable[str] | None = None,
    *,
    read: Callable[[Path], pa.Table] | None = None,
    refused: list[tuple[Path, str]] | None = None,
) -> dict[tuple[dt.date, str], int]:
    """Load the lake's offers partitions (all, or those of the given dates and providers) into
    the warehouse in ONE transaction: either every selected partition is stored or none is.
    Partitions are read a month (at most BATCH_ROWS rows) at a time, in date order, and each
    batch is stored by append_many, or provider-day by provider-day (store._insert_offers) when
    it is no append. Returns the rows of each partition loaded, per (snapshot_date, provider).
    `read` reads one file, for tests (by default lake.read_offers_files reads a month's files
    together). With `refused`, a partition whose bytes differ from its recorded checksum is
    left out and added to it as (path, why) instead of failing the load: each file is read
    once.
    """
    want_dates = None if dates is None else {store.as_date(d) for d in dates}
    want_providers = None if providers is None else set(providers)
    selected = [
        (day, prov, path)
        for day, prov, path in lake.list_partitions(lake_root)
        if (want_dates is None or day in want_dates)
        and (want_providers is None or prov in want_providers)
    ]
    loaded: dict[tuple[dt.date, str], int] = {}
    batch: list[tuple[dt.date, str, pa.Table]] = []

    def flush() -> None:
        if not batch:
            return
        try:
            loaded.update(append_many(con, batch))
        except NotAppend:
            for day, prov, table in batch:
                loaded[(day, prov)] = store._insert_offers(con, day, prov, table)
        batch.clear()

    def months():
        """The selected partitions a month at a time, each read (lake.read_offers_files reads
        the days of a compacted month file together)."""
        by_month: dict[dt.date, list] = {}
        for entry in selected:
            by_month.setdefault(entry[0].replace(day=1), []).append(entry)
        for entries in by_month.values():
            paths = [path for *_, path in entries]
            tables = (lake.read_offers_files(paths) if read is None
                      else [lake.read_or_refusal(read, path) for path in paths])
            yield zip(entries, tables, strict=True)

    with transaction(con):
        for month in months():
            for (day, prov, path), table in month:
                if isinstance(table, lake.ChecksumError):
                    if refused is None:
                        raise table
                    refused.append((path, str(table)))
                    continue
                if batch and sum(t.num_rows for *_, t in batch) >= BATCH_ROWS:
                    flush()
                batch.append((day, prov, table))
            flush()
    return loaded
