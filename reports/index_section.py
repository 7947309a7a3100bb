"""The report's price index section (docs/index.md): per headline GPU model its on-demand index
(segment `all`) as published in price_index_daily, the week's move, and the series the charts
draw (reports/index_charts.py): the last 12 weeks and everything since 2023."""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb

from gpuprices.reports.tables import Column, Table, view_rows
from gpuprices.warehouse import index_method, index_store

# The GPU models a buyer asks about first (the training and inference workhorses of the bundled
# providers' price lists); the index of every model is in price_index_daily and the CSV files.
HEADLINE_GPUS = ("H100-SXM-80GB", "H200-141GB", "B200-180GB", "A100-SXM-80GB", "L40S-48GB")
CHART_WEEKS = 12


def _series(con: duckdb.DuckDBPyConnection, gpu: str, end: dt.date) -> list[dict[str, Any]]:
    """Every published day of the GPU's on-demand `all` index up to `end`, days without a
    value included (value None: the chart breaks there)."""
    return view_rows(
        con, "SELECT day, value_usd::DOUBLE AS value, band_low_usd::DOUBLE AS low, "
             "band_high_usd::DOUBLE AS high, panel, reason FROM price_index_daily "
             "WHERE gpu_model = ? AND pricing_model = 'on_demand' AND segment = 'all' "
             "AND day BETWEEN ? AND ? ORDER BY day", gpu, index_method.FIRST_DAY, end)


def _last_value(rows: list[dict[str, Any]], on_or_before: dt.date) -> dict[str, Any] | None:
    """The latest row with a value on or before the day (None when there is none)."""
    found = None
    for r in rows:
        if r["day"] > on_or_before:
            break
        if r["value"] is not None:
            found = r
    return found


def section(con: duckdb.DuckDBPyConnection, end: dt.date
            ) -> tuple[Table | None, dict[str, list[dict[str, Any]]]]:
    """The index table (one row per headline GPU model with an index) and each model's series;
    (None, {}) for a warehouse without an index."""
    if not index_store.has_index(con):
        return None, {}
    rows, series = [], {}
    for gpu in HEADLINE_GPUS:
        s = _series(con, gpu, end)
        now = _last_value(s, end)
        if now is None:
            continue
        series[gpu] = s
        before = _last_value(s, end - dt.timedelta(days=7))
        move = None
        if before is not None and before["day"] < now["day"]:
            move = (now["value"] / before["value"] - 1) * 100
        rows.append({"gpu_model": gpu, "day": now["day"], "value": now["value"],
                     "low": now["low"], "high": now["high"], "panel": now["panel"],
                     "week_before": before["day"] if before else None,
                     "before_value": before["value"] if before else None, "move": move,
                     "days": sum(1 for r in s if r["value"] is not None)})
    table = Table(
        "price_index", f"GPU rental price index, on-demand, USD per GPU-hour (to {end})",
        [Column("gpu_model", "GPU"), Column("day", "as of"), Column("value", "index", "money"),
         Column("low", "band p25", "money"), Column("high", "band p75", "money"),
         Column("panel", "members", "int"), Column("before_value", "a week before", "money"),
         Column("week_before", "on"), Column("move", "week's move", "pct"),
         Column("days", "days with a value since 2023", "int")], rows,
        note="The interquartile mean of one price per provider (its lowest firm on-demand price "
             "per GPU-hour; marketplaces: the median ask of their largest book), screened "
             "against each provider's own last accepted price, at least "
             f"{index_method.MIN_PANEL} providers or no value; published values are never "
             "revised (docs/index.md). The week's move compares the index at the week's end with "
             "the index at the previous week's end (each the latest value on or before that "
             "day). In USD, the index's unit.")
    return table, series
