"""Measured results of benchmark runs (`gpuprices record RESULTS`): reading a results file (CSV,
or TOML with [[result]] tables), checking every row, and loading them into the `benchmarks`
table. The format is documented in docs/sizing.md ("Measured results") and shown by
docs/benchmark_results.example.csv.

A row is one run: provider, offer (sku), date, workload, GPU model and count, and what it
measured. Recording the same (BENCHMARK_KEY) row again replaces it, so a file can be recorded
twice. The view measured_throughput gives the latest measurement per provider x gpu_model x
workload, which the sizing engine uses over its estimate.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from gpuprices.warehouse.connection import registered, transaction
from gpuprices.warehouse.contract import PROVIDERS
from gpuprices.warehouse.gpus import gpu_models

# A measurement's identity: recording a row with the same values here replaces the old one.
BENCHMARK_KEY = ("provider", "sku", "date", "workload", "gpu_model", "gpus")
REQUIRED = (*BENCHMARK_KEY, "tokens_per_s")
# Optional measured figures: name -> (lowest allowed, highest allowed or None).
FIGURES = {
    "mfu": (0.0, 1.0),  # model FLOPs utilisation, a fraction (0.45, not 45)
    "step_time_cv": (0.0, None),  # step time standard deviation / mean
    "allreduce_busbw_gbs": (0.0, None),  # nccl-tests all_reduce_perf busbw, GB/s
    "checkpoint_write_s": (0.0, None),
    "checkpoint_restore_s": (0.0, None),
    "recovery_min": (0.0, None),  # from a simulated preemption to training again
    "cost": (0.0, None),  # what the run cost, in `currency`
}
TEXT = ("currency", "notes")
COLUMNS = (*REQUIRED, *FIGURES, *TEXT)

_SCHEMA = pa.schema([
    *(pa.field(c, pa.string()) for c in ("provider", "sku")),
    pa.field("date", pa.date32()),
    *(pa.field(c, pa.string()) for c in ("workload", "gpu_model")),
    pa.field("gpus", pa.int32()),
    pa.field("tokens_per_s", pa.float64()),
    *(pa.field(c, pa.float64()) for c in FIGURES),
    *(pa.field(c, pa.string()) for c in (*TEXT, "source")),
])


class ResultsError(ValueError):
    """A results file that cannot be recorded; the message names every bad line."""


@dataclass
class Measurement:
    where: str  # "file:line" (CSV) or "file: result #n" (TOML), for messages
    values: dict[str, Any]


def read_results(path: Path) -> list[Measurement]:
    """Every row of a results file, checked. Raises ResultsError naming each bad line (all of
    them, not only the first) and what is wrong with it."""
    if not path.is_file():
        raise ResultsError(f"{path}: no such file")
    raw = _toml_rows(path) if path.suffix.lower() == ".toml" else _csv_rows(path)
    if not raw:
        raise ResultsError(f"{path}: no results in the file")
    problems: list[str] = []
    rows: list[Measurement] = []
    seen: dict[tuple, str] = {}
    known_gpus = gpu_models()
    for where, values in raw:
        row, errors = _check(values, known_gpus)
        if not errors:
            key = tuple(row[k] for k in BENCHMARK_KEY)
            if key in seen:
                errors.append(f"the same run ({', '.join(BENCHMARK_KEY)}) as {seen[key]}")
            seen[key] = where
        problems += [f"{where}: {e}" for e in errors]
        rows.append(Measurement(where, row))
    if problems:
        raise ResultsError("\n".join(problems))
    return rows


def _csv_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(line for line in f if not line.lstrip().startswith("#"))
        header = reader.fieldnames or []
        _check_columns(path, header, "header")
        out = []
        for rec in reader:
            extra = rec.pop(None, None)  # type: ignore[call-overload]
            if extra:
                raise ResultsError(f"{path}:{reader.line_num}: more fields than the header "
                                   f"has columns: {extra}")
            out.append((f"{path}:{_file_line(path, reader.line_num)}", rec))
    return out


def _file_line(path: Path, data_line: int) -> int:
    """The line in the file of the reader's `data_line` (comment lines are skipped)."""
    n = 0
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.lstrip().startswith("#"):
            n += 1
            if n == data_line:
                return i
    return data_line


def _toml_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ResultsError(f"{path}: not valid TOML: {exc}") from None
    tables = doc.get("result")
    if not isinstance(tables, list) or set(doc) - {"result"}:
        raise ResultsError(f"{path}: expected only [[result]] tables")
    out = []
    for i, t in enumerate(tables, 1):
        _check_columns(path, list(t), f"result #{i}")
        out.append((f"{path}: result #{i}", {k: v for k, v in t.items()}))
    return out


def _check_columns(path: Path, names: Sequence[str], where: str) -> None:
    unknown = [n for n in names if n not in COLUMNS]
    missing = [n for n in REQUIRED if n not in names]
    if unknown or (missing and where == "header"):
        raise ResultsError(
            f"{path}: {where}: " + "; ".join(
                ([f"unknown column(s) {', '.join(unknown)}"] if unknown else [])
                + ([f"missing column(s) {', '.join(missing)}"] if missing else []))
            + f" (columns: {', '.join(COLUMNS)})")


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def _check(values: dict[str, Any], known_gpus: dict) -> tuple[dict[str, Any], list[str]]:
    """The row in its stored types, and what is wrong with it."""
    errors: list[str] = []
    row: dict[str, Any] = {}
    for k in REQUIRED:
        if _blank(values.get(k)):
            errors.append(f"{k} is missing")
    for k in ("provider", "sku", "workload", "gpu_model", *TEXT):
        v = values.get(k)
        row[k] = None if _blank(v) else str(v).strip()
    if row["provider"] and row["provider"] not in PROVIDERS:
        errors.append(f"provider {row['provider']!r} is not one of {', '.join(PROVIDERS)}")
    if row["gpu_model"] and row["gpu_model"] not in known_gpus:
        errors.append(f"gpu_model {row['gpu_model']!r} is not a canonical model of "
                      "warehouse/gpus.csv")
    row["date"] = _date(values.get("date"), errors)
    row["gpus"] = _count(values.get("gpus"), errors)
    row["tokens_per_s"] = _number("tokens_per_s", values.get("tokens_per_s"), (0.0, None),
                                  errors, positive=True)
    for k, bounds in FIGURES.items():
        row[k] = _number(k, values.get(k), bounds, errors)
    if row["currency"]:
        row["currency"] = row["currency"].upper()
        if len(row["currency"]) != 3 or not row["currency"].isalpha():
            errors.append(f"currency {row['currency']!r} is not an ISO 4217 code like USD")
    if row["cost"] is not None and not row["currency"]:
        errors.append("cost is given without its currency")
    return row, errors


def _date(v: Any, errors: list[str]) -> dt.date | None:
    if _blank(v):
        return None
    if isinstance(v, dt.date) and not isinstance(v, dt.datetime):
        day = v
    else:
        try:
            day = dt.date.fromisoformat(str(v).strip())
        except ValueError:
            errors.append(f"date {v!r} is not YYYY-MM-DD")
            return None
    if day > dt.date.today():
        errors.append(f"date {day} is in the future")
    return day


def _parsed(name: str, v: Any, kind: type, what: str, errors: list[str]) -> Any:
    """`v` as `kind`, None when blank or when it is not one (the error then says so)."""
    if _blank(v):
        return None
    try:
        return kind(str(v).strip())
    except ValueError:
        errors.append(f"{name} {v!r} is not {what}")
        return None


def _count(v: Any, errors: list[str]) -> int | None:
    n = _parsed("gpus", v, int, "a whole number", errors)
    if n is not None and n < 1:
        errors.append(f"gpus {n} is less than 1")
    return n


def _number(name: str, v: Any, bounds: tuple[float, float | None], errors: list[str],
            positive: bool = False) -> float | None:
    """A number within `bounds` (low, high or None), above low when `positive` or when a high
    bound is given (a fraction: 0 < mfu <= 1)."""
    x = _parsed(name, v, float, "a number", errors)
    if x is None:
        return None
    low, high = bounds
    strict = positive or high is not None
    if not math.isfinite(x) or x < low or (strict and x <= low) or (
            high is not None and x > high):
        span = f"in ({low:g}, {high:g}]" if high is not None else (
            f"> {low:g}" if positive else f">= {low:g}")
        errors.append(f"{name} {x:g} is not {span}")
    return x


def record(con: duckdb.DuckDBPyConnection, rows: Sequence[Measurement],
           source: str) -> tuple[int, int]:
    """Load checked rows into `benchmarks` in one transaction; a row with the key of one
    already there replaces it. Returns (rows given, rows that replaced one)."""
    data = [dict(m.values, source=source) for m in rows]
    table = pa.Table.from_pylist(data, schema=_SCHEMA)
    on = " AND ".join(f"b.{k} = n.{k}" for k in BENCHMARK_KEY)
    cols = ", ".join(_SCHEMA.names)
    with registered(con, table) as name, transaction(con):
        # `name` is our own generated relation name, never data.
        replaced = con.execute(
            f"SELECT count(*) FROM benchmarks b JOIN {name} n ON {on}").fetchone()[0]  # noqa: S608
        con.execute(f"DELETE FROM benchmarks b USING {name} n WHERE {on}")  # noqa: S608
        con.execute(f"INSERT INTO benchmarks ({cols}, recorded_at) "  # noqa: S608
                    f"SELECT {cols}, now() FROM {name}")
    return len(data), replaced


def unknown_offers(con: duckdb.DuckDBPyConnection, rows: Sequence[Measurement]) -> list[str]:
    """The rows whose provider + sku + gpu_model the warehouse holds no offer of (a typo, or an
    offer never captured): recorded all the same, but worth a warning."""
    have = set(con.execute("SELECT DISTINCT provider, sku, gpu_model FROM offer_ids").fetchall())
    return [f"{m.where}: no offer {m.values['provider']} {m.values['sku']} "
            f"({m.values['gpu_model']}) in the warehouse"
            for m in rows
            if (m.values["provider"], m.values["sku"], m.values["gpu_model"]) not in have]


def measured(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """measured_throughput's rows as plain dicts, what the sizing engine takes; none from a
    warehouse made before the view (nothing recorded there yet)."""
    try:
        cur = con.execute("SELECT * FROM measured_throughput ORDER BY ALL")
    except duckdb.CatalogException:
        return []
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
