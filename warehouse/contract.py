"""The offer contract: one row = one price for one purchasable thing on one snapshot.

The column list is frozen (docs/design.md). Adding a column is a deliberate change: append it to
OFFER_COLUMNS and OFFER_SCHEMA together and teach `conform_table` its default, so that Parquet
files written before the change still load.

A snapshot is one provider's prices at one time: `snapshot_at`, the earliest capture time among
its rows (each row keeps its own `captured_at`, the time its page was fetched). A daily provider
has one snapshot a day, an hourly one several (spiders/registry.py CADENCES); `snapshot_date` is
the UTC day they belong to. Files written before `snapshot_at` existed held one snapshot per day
and provider: their rows take the earliest `captured_at` of their (snapshot_date, provider),
i.e. a time derived from the archive records, never an invented midnight.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gpuprices.warehouse.provider_ids import PRICING_MODELS as PRICING_MODELS
from gpuprices.warehouse.provider_ids import PROVIDERS as PROVIDERS

OFFER_SCHEMA = pa.schema(
    [
        pa.field("snapshot_date", pa.date32(), nullable=False),
        pa.field("captured_at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("provider", pa.string(), nullable=False),
        pa.field("source_url", pa.string(), nullable=False),
        pa.field("raw_sha256", pa.string(), nullable=False),
        pa.field("sku", pa.string(), nullable=False),
        pa.field("region", pa.string()),
        pa.field("gpu_model", pa.string(), nullable=False),
        pa.field("gpu_memory_gb", pa.float64()),
        # GPUs per instance; fractional for GPU slices (AWS g6f, MIG partitions).
        pa.field("gpu_count", pa.float64(), nullable=False),
        pa.field("vcpus", pa.float64()),
        pa.field("ram_gb", pa.float64()),
        pa.field("interconnect", pa.string()),
        pa.field("pricing_model", pa.string(), nullable=False),
        pa.field("commitment_months", pa.int32()),
        pa.field("price_per_hour", pa.float64(), nullable=False),
        pa.field("currency", pa.string(), nullable=False),
        pa.field("price_per_gpu_hour", pa.float64(), nullable=False),
        pa.field("effective_from", pa.date32()),
        pa.field("billing_increment_s", pa.int32()),
        pa.field("min_billing_s", pa.int32()),
        pa.field("available", pa.bool_()),
        # JSON object text: what only one provider has (never a column for one provider).
        pa.field("extra", pa.string()),
        # When the snapshot this row belongs to was taken (module docstring); appended last.
        # Nullable for the files and tables written before it: conform_table always fills it.
        pa.field("snapshot_at", pa.timestamp("us", tz="UTC")),
    ]
)
OFFER_COLUMNS = tuple(OFFER_SCHEMA.names)


class ContractError(ValueError):
    """A row that does not satisfy the offer contract."""


# Inside a parse of archived bytes (spiders/parsers parse_body_counted), one row that breaks the
# contract (a price of Infinity, "0x H200") must not cost the page's other rows: make_offer then
# returns the row as read, its problem in extra[CONTRACT_PROBLEM], and the schema gate
# (flows/pipeline/gates.py) quarantines it with that reason. Outside a parse it raises.
CONTRACT_PROBLEM = "contract_problem"
_ROW_PROBLEMS_HELD: ContextVar[bool] = ContextVar("row_problems_held", default=False)


@contextlib.contextmanager
def row_problems_held() -> Iterator[None]:
    """make_offer returns a row that breaks the contract marked with its problem (for the
    gates to quarantine) instead of raising ContractError."""
    token = _ROW_PROBLEMS_HELD.set(True)
    try:
        yield
    finally:
        _ROW_PROBLEMS_HELD.reset(token)


def _row_problem(provider: str, sku: str, pricing_model: str, price_per_hour: object,
                 gpu_count: object) -> str | None:
    if pricing_model not in PRICING_MODELS:
        return f"{provider}: unknown pricing_model {pricing_model!r} for {sku}"
    if isinstance(price_per_hour, bool) or not (isinstance(price_per_hour, int | float)
                                                and math.isfinite(price_per_hour)):
        return f"{provider}: price {price_per_hour!r} for {sku} is not a number"
    if price_per_hour <= 0:
        return f"{provider}: price {price_per_hour} for {sku} is not positive"
    if (isinstance(gpu_count, bool) or not isinstance(gpu_count, int | float)
            or not math.isfinite(gpu_count) or gpu_count <= 0):
        return f"{provider}: GPU count {gpu_count!r} for {sku} is not positive"
    return None


def _number(v: object) -> float:
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


@dataclass
class CaptureMeta:
    """Where a raw body came from; handed to every parser beside the bytes."""

    provider: str
    url: str
    captured_at: dt.datetime
    sha256: str = ""
    method: str = "GET"
    request_body: bytes | None = None
    status: int = 200
    content_type: str = ""

    @property
    def snapshot_date(self) -> dt.date:
        return self.captured_at.astimezone(dt.UTC).date()


@dataclass
class Offer:
    """One parsed price. `gpu_model` is None when the provider's wording mapped to nothing:
    such rows are quarantined by the check stage, never loaded."""

    snapshot_date: dt.date
    captured_at: dt.datetime
    provider: str
    source_url: str
    raw_sha256: str
    sku: str
    region: str | None
    gpu_model: str | None
    gpu_memory_gb: float | None
    gpu_count: float
    vcpus: float | None
    ram_gb: float | None
    interconnect: str | None
    pricing_model: str
    commitment_months: int | None
    price_per_hour: float
    currency: str
    price_per_gpu_hour: float
    effective_from: dt.date | None
    billing_increment_s: int | None
    min_billing_s: int | None
    available: bool | None
    extra: dict[str, Any] = field(default_factory=dict)
    # None until the parse step knows the snapshot (flows/pipeline/parsing.py); a row written
    # without one takes its day's earliest captured_at (conform_table).
    snapshot_at: dt.datetime | None = None

    def as_row(self) -> dict[str, Any]:
        row = {name: getattr(self, name) for name in OFFER_COLUMNS}
        row["extra"] = json.dumps(self.extra, sort_keys=True, default=str)
        return row


def make_offer(
    meta: CaptureMeta,
    *,
    sku: str,
    gpu_model: str | None,
    gpu_count: float,
    price_per_hour: float,
    pricing_model: str,
    region: str | None = None,
    gpu_memory_gb: float | None = None,
    vcpus: float | None = None,
    ram_gb: float | None = None,
    interconnect: str | None = None,
    commitment_months: int | None = None,
    currency: str = "USD",
    effective_from: dt.date | None = None,
    billing_increment_s: int | None = None,
    min_billing_s: int | None = None,
    available: bool | None = None,
    extra: dict[str, Any] | None = None,
) -> Offer:
    """Build an offer from a capture, deriving the per-GPU price. Raises ContractError when the
    values break the contract, so a parser bug is loud at the row that caused it."""
    if meta.provider not in PROVIDERS:
        raise ContractError(f"unknown provider {meta.provider!r}")
    extra = dict(extra or {})
    problem = _row_problem(meta.provider, sku, pricing_model, price_per_hour, gpu_count)
    if problem and not _ROW_PROBLEMS_HELD.get():
        raise ContractError(problem)
    if problem:  # held by the schema gate with this reason; the page's other rows go on
        extra[CONTRACT_PROBLEM] = problem
        price, count = _number(price_per_hour), _number(gpu_count)
        per_gpu = price / count if count and math.isfinite(count) else math.nan
    else:
        price, count = float(price_per_hour), float(gpu_count)
        per_gpu = price / count
    captured = meta.captured_at.astimezone(dt.UTC)
    return Offer(
        snapshot_date=captured.date(),
        captured_at=captured,
        provider=meta.provider,
        source_url=meta.url,
        raw_sha256=meta.sha256,
        sku=sku,
        region=region,
        gpu_model=gpu_model,
        gpu_memory_gb=gpu_memory_gb,
        gpu_count=count,
        vcpus=vcpus,
        ram_gb=ram_gb,
        interconnect=interconnect,
        pricing_model=pricing_model,
        commitment_months=commitment_months,
        price_per_hour=price,
        currency=currency,
        price_per_gpu_hour=per_gpu,
        effective_from=effective_from,
        billing_increment_s=billing_increment_s,
        min_billing_s=min_billing_s,
        available=available,
        extra=extra,
    )


def offers_to_table(offers: list[Offer]) -> pa.Table:
    """Offers as an Arrow table in the frozen column order."""
    rows = [o.as_row() for o in offers]
    return with_snapshot_at(pa.Table.from_pylist(rows, schema=OFFER_SCHEMA))


def conform_to(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` in `schema`'s column order and types; columns it lacks become nulls."""
    if table.schema.equals(schema):  # a lake file of the current contract: nothing to rebuild
        return table
    columns = []
    for f in schema:
        if f.name in table.column_names:
            columns.append(table.column(f.name).cast(f.type))
        else:
            columns.append(pa.nulls(table.num_rows, type=f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def conform_table(table: pa.Table) -> pa.Table:
    """Bring a table written under an older contract to the current one: columns it lacks are
    added as nulls, columns are put in the frozen order and cast to the frozen types, and a
    missing snapshot_at is its (snapshot_date, provider)'s earliest captured_at."""
    return with_snapshot_at(conform_to(table, OFFER_SCHEMA.remove_metadata()))


def with_snapshot_at(table: pa.Table) -> pa.Table:
    """`table` (in OFFER_SCHEMA) with each null snapshot_at set to the earliest captured_at of
    its (snapshot_date, provider) in the table: a row from before snapshots had a time belongs
    to its day's one snapshot."""
    col = table.column("snapshot_at")
    if not col.null_count or not table.num_rows:
        return table
    first = table.group_by(["snapshot_date", "provider"]).aggregate([("captured_at", "min")])
    index = table.schema.get_field_index("snapshot_at")
    if first.num_rows == 1:  # one provider-day, as every lake file: no per-row Python
        filled = pc.fill_null(col, first.column("captured_at_min")[0])
        return table.set_column(index, table.schema.field(index), filled)
    taken = {(d, p): t for d, p, t in zip(first.column("snapshot_date").to_pylist(),
                                          first.column("provider").to_pylist(),
                                          first.column("captured_at_min").to_pylist(),
                                          strict=True)}
    keys = zip(table.column("snapshot_date").to_pylist(), table.column("provider").to_pylist(),
               strict=True)
    filled = [t if t is not None else taken.get(k) for t, k in zip(col.to_pylist(), keys,
                                                                      strict=True)]
    return table.set_column(index, table.schema.field(index),
                            pa.array(filled, type=col.type))
