"""The buyer's options shared by `rank`, `plan`, `compare` and `report`: the deadline and regions
that override the workloads' own (sizing/constraint_fields.py), and the negotiated prices file
(sizing/discounts.py: `--discounts PATH`, else $GPUPRICES_DISCOUNTS)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from gpuprices.flows.cli.rank_inputs import fail
from gpuprices.sizing import constraint_fields, discounts
from gpuprices.sizing.workload import Workload, WorkloadError
from gpuprices.spiders import registry
from gpuprices.warehouse.gpus import gpu_models

DeadlineOption = Annotated[str | None, typer.Option(
    "--deadline", help="Every workload must be done within this: hours (48, 48h) or days (3d); "
                       "overrides deadline_hours / deadline_days")]
RegionOption = Annotated[list[str] | None, typer.Option(
    "--region", help="Where the workloads may run (repeatable): an area (eu = EU/EEA, us, uk, "
                     "ca, ch, jp) or a provider region (us-central1); overrides regions / "
                     "countries / residency")]
DiscountsOption = Annotated[Path | None, typer.Option(
    "--discounts", help="Negotiated prices (TOML [[discount]] tables, docs/sizing.md); default "
                        f"${discounts.ENV_VAR}")]


def with_overrides(workloads: list[Workload], deadline: str | None,
                   regions: list[str] | None) -> list[Workload]:
    """The workloads with the command line's deadline and regions in place of their own."""
    change: dict[str, Any] = {}
    if deadline:
        try:
            change["deadline_hours"] = constraint_fields.parse_deadline(deadline)
        except ValueError as exc:
            raise fail(escape(str(exc))) from None
    if regions:
        try:
            change["regions"] = constraint_fields.region_names("--region", "--region", regions)
        except WorkloadError as exc:
            raise fail(escape(str(exc))) from None
        change["countries"] = None
    return [replace(w, **change) for w in workloads] if change else workloads


def read_discounts(path: Path | None) -> list[discounts.Discount]:
    """The negotiated prices of the option or $GPUPRICES_DISCOUNTS (none without either)."""
    path = discounts.path_from(path)
    if path is None:
        return []
    try:
        return discounts.load(path, set(registry.ids()), set(gpu_models()))
    except discounts.DiscountError as exc:
        raise fail(escape(str(exc))) from None


def negotiated(offers: list[dict[str, Any]], entries: list[discounts.Discount],
               currency: str, usd_factor: float | None, today: dt.date | None = None
               ) -> tuple[list[dict[str, Any]], list[str]]:
    """The offers priced at the negotiated prices in force today, and what to tell the user."""
    if not entries:
        return offers, []
    return discounts.apply(offers, entries, today or dt.date.today(), currency, usd_factor)
