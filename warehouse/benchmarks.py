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

# The fewest FLOPs any measured token can cost: one forward pass (2 FLOPs per parameter, Kaplan
# et al. 2020, "Scaling Laws for Neural Language Models", section 2.1) of the smallest model the
# sizing knows, Qwen2.5 0.5B at 0.49 B parameters (sizing/models.csv, from its Hugging Face
# config). Training costs about three times that; this floor is deliberately generous.
MIN_FLOPS_PER_TOKEN = 2 * 0.49e9
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
    text = _text(path)
    raw = _toml_rows(path, text) if path.suffix.lower() == ".toml" else _csv_rows(path, text)
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


# Byte-order marks of encodings a spreadsheet may save in, other than UTF-8's.
_OTHER_BOMS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32",
               b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}
_MAX_RESULTS_BYTES = 50 * 2**20  # a results file is a few hundred lines; this is no such file


def _text(path: Path) -> str:
    """The file as text: UTF-8, with or without the byte-order mark Excel's "CSV UTF-8" writes
    (it is dropped, so the first column is `provider`, not "\\ufeffprovider"). ResultsError
    for a binary file, another encoding or a file far too large to be results."""
    size = path.stat().st_size
    if size > _MAX_RESULTS_BYTES:
        raise ResultsError(f"{path}: {size:,} bytes is not a results file (CSV or TOML text of "
                           f"at most {_MAX_RESULTS_BYTES:,} bytes)")
    data = path.read_bytes()
    for bom, name in _OTHER_BOMS.items():
        if data.startswith(bom):
            raise ResultsError(f"{path}: {name} text; save it as UTF-8 (CSV UTF-8) and record "
                               f"it again")
    if b"\x00" in data:
        raise ResultsError(f"{path}: a binary file (NUL byte at offset {data.index(0):,}), "
                           f"not a CSV or TOML results file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 text (byte {exc.start:,}: "
                           f"{data[exc.start:exc.start + 1]!r}); save it as UTF-8") from None


def _csv_rows(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    lines = text.splitlines(keepends=True)
    reader = csv.DictReader(line for line in lines if not line.lstrip().startswith("#"))
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise ResultsError(f"{path}: not a CSV file: {exc}") from None
    _check_columns(path, header, "header")
    out = []
    try:
        for rec in reader:
            extra = rec.pop(None, None)  # type: ignore[call-overload]
            if extra:
                raise ResultsError(f"{path}:{reader.line_num}: more fields than the header "
                                   f"has columns: {extra}")
            out.append((f"{path}:{_file_line(lines, reader.line_num)}", rec))
    except csv.Error as exc:
        raise ResultsError(f"{path}:{reader.line_num}: not a CSV line: {exc}") from None
    return out


def _file_line(lines: list[str], data_line: int) -> int:
    """The line in the file of the reader's `data_line` (comment lines are skipped)."""
    n = 0
    for i, line in enumerate(lines, 1):
        if not line.lstrip().startswith("#"):
            n += 1
            if n == data_line:
                return i
    return data_line


def _toml_rows(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        doc = tomllib.loads(text)
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
    _check_possible(row, known_gpus, errors)
    for k, bounds in FIGURES.items():
        row[k] = _number(k, values.get(k), bounds, errors)
    if row["currency"]:
        row["currency"] = row["currency"].upper()
        if len(row["currency"]) != 3 or not row["currency"].isalpha():
            errors.append(f"currency {row['currency']!r} is not an ISO 4217 code like USD")
    if row["cost"] is not None and not row["currency"]:
        errors.append("cost is given without its currency")
    return row, errors


def peak_tokens_per_s(gpu_model: str, gpus: int, known_gpus: dict) -> float | None:
    """The most tokens per second `gpus` cards of `gpu_model` could process: all of their peak
    dense FLOPs (the higher of BF16 and FP8, warehouse/gpus.csv, from the vendors' datasheets)
    spent on MIN_FLOPS_PER_TOKEN each. None when the card's FLOPs are not known."""
    spec = known_gpus.get(gpu_model)
    peak = max((f for f in (getattr(spec, "bf16_dense_tflops", None),
                            getattr(spec, "fp8_dense_tflops", None)) if f), default=None)
    return None if peak is None else gpus * peak * 1e12 / MIN_FLOPS_PER_TOKEN


def _check_possible(row: dict[str, Any], known_gpus: dict, errors: list[str]) -> None:
    """tokens_per_s beyond what the cards can physically compute is a typo or a unit slip
    (tokens per minute, a whole cluster's figure on one card), never a measurement."""
    tps, gpus, model = row["tokens_per_s"], row["gpus"], row["gpu_model"]
    if tps is None or not gpus or not model or not math.isfinite(tps):
        return
    limit = peak_tokens_per_s(model, gpus, known_gpus)
    if limit is not None and tps > limit:
        errors.append(f"tokens_per_s {tps:g} is more than {gpus} x {model} can compute: at most "
                      f"{limit:,.0f} (peak dense FLOPs / {MIN_FLOPS_PER_TOKEN:.2g} FLOPs per "
                      f"token, the forward pass of the smallest model sized)")


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
