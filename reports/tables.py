"""The report's tables: columns with a display kind, rows as dicts, and how a value is shown."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import duckdb


@dataclass
class Column:
    key: str
    label: str
    kind: str = "text"  # text | money | pct | int | num | date | ratio


@dataclass
class Table:
    name: str  # CSV file stem
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    note: str = ""
    total: int | None = None  # rows before a display limit

    def shown(self, limit: int | None = None) -> list[dict[str, Any]]:
        return self.rows if limit is None else self.rows[:limit]


def fmt(value: Any, kind: str, currency: str = "") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if kind == "money":
        v = float(value)
        if v == 0:  # nothing to pay (no fixed cost): "0", not a price to four places
            return "0"
        return f"{v:,.4f}" if abs(v) < 10 else f"{v:,.2f}"
    if kind == "pct":
        return f"{float(value):+.1f}%"
    if kind == "int":
        return f"{int(value):,}"
    if kind == "num":
        return f"{float(value):,.1f}"
    if kind == "ratio":
        return f"×{float(value):.2f}"
    return str(value)


def view_rows(con: duckdb.DuckDBPyConnection, sql: str, *params: Any) -> list[dict[str, Any]]:
    """The rows of a query over the warehouse's views, as dicts."""
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def provider_supply(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Each provider's class (provider_classes: own, marketplace, reseller, aggregator), shown
    next to the provider so the report compares like with like; an inference host (kind
    `inference_host`: GPU hours only to serve your own model or app, no root VM, no multi-node)
    says so beside it. {} for a warehouse without the view."""
    try:
        rows = view_rows(con, "SELECT provider, supply, kind FROM provider_classes")
    except duckdb.CatalogException:  # a warehouse made before the view, opened read-only
        return {}
    return {r["provider"]: r["supply"] + (", inference host" if r["kind"] == "inference_host"
                                          else "")
            for r in rows if r["supply"]}


def offer_label(provider: str, sku: str, extra: Any = None) -> str:
    """How the report names an offer: provider and sku, and for an aggregator's row the cloud
    that runs the machine, as its parser wrote it ("shadeform paperspace/A100_80Gx8 (via
    Shadeform from Paperspace)": spiders/resold.py)."""
    via = None
    if isinstance(extra, str) and '"via"' in extra:
        try:
            via = json.loads(extra).get("via")
        except (json.JSONDecodeError, AttributeError):
            via = None
    elif isinstance(extra, dict):
        via = extra.get("via")
    return f"{provider} {sku} ({via})" if via else f"{provider} {sku}"
