"""The GPU price index in the warehouse: `price_index_daily` (the published values, appended,
never rewritten) and `price_index_revisions` (what a later computation gives for a published
row, written beside it). docs/index.md sections 7 and 9; the method is warehouse/index_method.py.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import fields
from decimal import Decimal
from operator import attrgetter

import duckdb
import pyarrow as pa

from gpuprices.warehouse import index_method
from gpuprices.warehouse.connection import registered, transaction
from gpuprices.warehouse.index_method import Candidate, IndexRow

KEY = ("day", "gpu_model", "pricing_model", "segment")
# What a published row says; a recomputation differing in any of these is a revision.
CONTENT = ("value_usd", "band_low_usd", "band_high_usd", "panel", "members", "reason",
           "method_version")
COLUMNS = tuple(f.name for f in fields(IndexRow))
# A row's fields as a tuple. dataclasses.astuple deep-copies every value: 3.2 s for the 68,450 rows
# of the bundled archive's index on 2 busy cores, where reading the (immutable) fields takes 0.1 s.
_as_tuple = attrgetter(*COLUMNS)

_ROW_DDL = """
        day DATE NOT NULL,
        gpu_model VARCHAR NOT NULL,
        pricing_model VARCHAR NOT NULL,
        segment VARCHAR NOT NULL,
        value_usd DECIMAL(18, 6),
        band_low_usd DECIMAL(18, 6),
        band_high_usd DECIMAL(18, 6),
        panel INTEGER NOT NULL,
        members VARCHAR NOT NULL,
        reason VARCHAR,
        method_version INTEGER NOT NULL"""

TABLES = {
    # One row per series and index day, written once by the load that first computed it.
    "price_index_daily": f"""
    CREATE TABLE IF NOT EXISTS price_index_daily ({_ROW_DDL},
        published_run VARCHAR,
        published_at TIMESTAMPTZ NOT NULL
    )""",
    # A later computation of a published row that differs from it (the published row stays).
    "price_index_revisions": f"""
    CREATE TABLE IF NOT EXISTS price_index_revisions ({_ROW_DDL},
        published_value_usd DECIMAL(18, 6),
        revised_run VARCHAR,
        recorded_at TIMESTAMPTZ NOT NULL
    )""",
}


def ensure_tables(con: duckdb.DuckDBPyConnection) -> None:
    for ddl in TABLES.values():
        con.execute(ddl)


def has_index(con: duckdb.DuckDBPyConnection) -> bool:
    # This database's own table: an ATTACHed warehouse's does not count (the report can be
    # built on a scratch database that attaches another).
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = "
                            "'price_index_daily' AND database_name = current_database()"
                            ).fetchall()[0][0])


def candidates(con: duckdb.DuckDBPyConnection) -> list[Candidate]:
    """The rows of view index_candidates as Candidates (date, series, member order)."""
    rows = con.execute(
        "SELECT snapshot_date, gpu_model, pricing_model, member, provider, currency, "
        "price_per_gpu_hour FROM index_candidates "
        "ORDER BY snapshot_date, gpu_model, pricing_model, member").fetchall()
    return [Candidate(*r) for r in rows]


def index_days(con: duckdb.DuckDBPyConnection) -> list[dt.date]:
    """Every day the warehouse holds a snapshot of, from the index's first day on."""
    return [r[0] for r in con.execute(
        "SELECT DISTINCT snapshot_date FROM snapshot_dates WHERE snapshot_date >= ? ORDER BY 1",
        [index_method.FIRST_DAY]).fetchall()]


def segments(con: duckdb.DuckDBPyConnection, members: Iterable[str]) -> dict[str, str | None]:
    """Each member's sub-index segment from its provider's registry kind (providers table); a
    member that is no provider of the warehouse (named only through extra.underlying) is None:
    it counts in `all` only."""
    kinds = dict(con.execute("SELECT provider, kind FROM providers").fetchall())
    return {m: index_method.SEGMENT_OF_KIND.get(kinds.get(m)) for m in members}


def usd_factors(con: duckdb.DuckDBPyConnection, currencies: Iterable[str],
                days: Iterable[dt.date]) -> dict[tuple[str, dt.date], float | None]:
    """fx_factor(currency, 'USD', day) for each pair: the warehouse's one FX path."""
    curs, ds = sorted(set(currencies)), sorted(set(days))
    if not curs or not ds:
        return {}
    rows = con.execute(
        "SELECT c.cur, d.day, fx_factor(c.cur, 'USD', d.day) "
        "FROM unnest(?::VARCHAR[]) AS c(cur), unnest(?::DATE[]) AS d(day)", [curs, ds]
    ).fetchall()
    return {(c, d): f for c, d, f in rows}


def compute(con: duckdb.DuckDBPyConnection, max_age_days: int | None = None) -> list[IndexRow]:
    """The index as today's warehouse gives it, every series and day (not stored)."""
    if max_age_days is None:
        max_age_days = con.execute("SELECT default_max_age_days()").fetchone()[0]
    cands = candidates(con)
    days = index_days(con)
    factors = usd_factors(con, {c.currency for c in cands}, days)
    seg = segments(con, {c.member for c in cands})
    return index_method.compute(cands, days, seg, max_age_days,
                                lambda cur, day: factors.get((cur, day)))


def _content(values: Iterable) -> tuple:
    return tuple(Decimal(v) if isinstance(v, Decimal) else v for v in values)


def update(con: duckdb.DuckDBPyConnection, run_id: str | None = None,
           now: dt.datetime | None = None) -> tuple[int, int]:
    """Publish the rows not yet published and record a revision for every published row whose
    recomputation differs (once per distinct recomputation), in one transaction. Returns
    (rows published, revisions recorded)."""
    now = now or dt.datetime.now(dt.UTC)
    with transaction(con):
        ensure_tables(con)
        rows = compute(con)
        published = {tuple(r[:4]): _content(r[4:]) for r in con.execute(
            f"SELECT {', '.join(KEY + CONTENT)} FROM price_index_daily").fetchall()}  # noqa: S608
        revised = _latest_revisions(con)
        new, revisions = [], []
        for r in rows:
            t = _as_tuple(r)
            key, content = t[:4], _content(t[4:])
            old = published.get(key)
            if old is None:
                new.append(t + (run_id, now))
            elif old != content and revised.get(key) != content:
                revisions.append(t + (old[0], run_id, now))
        _insert(con, "price_index_daily", new)
        _insert(con, "price_index_revisions", revisions)
    return len(new), len(revisions)


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """Append rows (in the table's column order) through Arrow: one statement, not one per
    row."""
    if not rows:
        return
    names = [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "AND table_catalog = current_database() ORDER BY ordinal_position", [table]).fetchall()]
    cols = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    arrays = {n: pa.array(v, pa.decimal128(18, 6)) if n.endswith("_usd") else pa.array(v)
              for n, v in cols.items()}
    with registered(con, pa.table(arrays)) as src:
        con.execute(f"INSERT INTO {table} SELECT * FROM {src}")  # noqa: S608 (our names)


def published(con: duckdb.DuckDBPyConnection) -> dict[tuple, tuple]:
    """Every published row's content by key (for `index verify`)."""
    if not has_index(con):
        return {}
    return {tuple(r[:4]): _content(r[4:]) for r in con.execute(
        f"SELECT {', '.join(KEY + CONTENT)} FROM price_index_daily").fetchall()}  # noqa: S608


def latest_revisions(con: duckdb.DuckDBPyConnection) -> dict[tuple, tuple]:
    """Each revised row's latest recorded recomputation, by key."""
    if not has_index(con):
        return {}
    return _latest_revisions(con)


def _latest_revisions(con: duckdb.DuckDBPyConnection) -> dict[tuple, tuple]:
    return {tuple(r[:4]): _content(r[4:]) for r in con.execute(
        f"SELECT {', '.join(KEY + CONTENT)} FROM price_index_revisions "  # noqa: S608
        "QUALIFY row_number() OVER (PARTITION BY day, gpu_model, pricing_model, segment "
        "ORDER BY recorded_at DESC) = 1").fetchall()}
