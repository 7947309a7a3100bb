"""An answer (an Arrow table) as JSON, CSV or Parquet bytes, chosen by ?format= or the Accept
header. JSON and CSV write values as `gpuprices sql --format json|csv` does (dates and decimals
as text, NULL as null / an empty field); Parquet keeps the Arrow types."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

# Parquet's media type, registered with IANA in 2024 (https://www.iana.org/assignments/
# media-types/application/vnd.apache.parquet); application/x-parquet is the older spelling.
MEDIA = {"json": "application/json", "csv": "text/csv; charset=utf-8",
         "parquet": "application/vnd.apache.parquet"}
_ACCEPT = {"application/json": "json", "text/csv": "csv",
           "application/vnd.apache.parquet": "parquet", "application/x-parquet": "parquet"}
FORMATS = tuple(MEDIA)


class NotAcceptable(ValueError):
    """No format the client accepts is one the API writes."""


def choose(fmt: str | None, accept: str | None) -> str:
    """?format= wins; then the first media type of Accept the API writes (a `*/*`, none, or an
    empty header: JSON)."""
    if fmt:
        if fmt not in MEDIA:
            raise NotAcceptable(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
        return fmt
    if not accept:
        return "json"
    kinds = []
    for part in accept.split(","):
        media, *params = [p.strip() for p in part.split(";")]
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        if q > 0:
            kinds.append((-q, len(kinds), media.lower()))
    for _, _, media in sorted(kinds):
        if media in _ACCEPT:
            return _ACCEPT[media]
        if media in ("*/*", "application/*"):
            return "json"
        if media == "text/*":
            return "csv"
    raise NotAcceptable(f"none of {accept!r} is written here: {', '.join(_ACCEPT)}")


def plain(v: Any) -> Any:
    """A value as JSON and CSV carry it (as `gpuprices sql` writes it)."""
    if isinstance(v, dt.datetime | dt.date | dt.time | decimal.Decimal):
        return v.isoformat() if isinstance(v, dt.date) else str(v)
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, float) and v != v:  # NaN is not JSON
        return None
    return v


def records(table: pa.Table) -> list[dict[str, Any]]:
    return [{k: plain(v) for k, v in row.items()} for row in table.to_pylist()]


def encode(table: pa.Table, fmt: str) -> bytes:
    if fmt == "json":
        return json.dumps(records(table), default=str).encode()
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(table.column_names)
        for row in table.to_pylist():
            w.writerow(["" if v is None else plain(v) for v in row.values()])
        return buf.getvalue().encode()
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()
