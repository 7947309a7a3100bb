"""The weekly report's two steps as plain functions: the ECB rates into fx_rates, then the
report files. `gpuprices report` and the weekly Prefect flow (flows/weekly.py) both call them,
so tests need no Prefect server."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpuprices.flows.config import REPO_ROOT, Settings, default_currency
from gpuprices.flows.config import max_age_days as max_age_days_from
from gpuprices.flows.gpu_names import load_known_workloads
from gpuprices.flows.pipeline import provider_classes
from gpuprices.reports.render import write_report
from gpuprices.spiders import fx, registry
from gpuprices.warehouse import db

DEFAULT_WORKLOADS = REPO_ROOT / "sizing" / "workloads.toml"


def refresh_fx(settings: Settings, fetch: bool = False) -> tuple[int, list[str]]:
    """Load every archived ECB file into fx_rates; with `fetch`, first fetch today's daily and
    90-day files into the archive. A failed fetch is reported, never fatal: the archived rates
    still load. Returns (rates loaded, problems)."""
    problems: list[str] = []
    if fetch:
        try:
            fx.fetch_ecb(settings.archive_root)
        except Exception as exc:  # network trouble must not cost the report
            problems.append(f"ecb: fetch failed: {exc}")
    con = db.connect(settings.db_path)
    try:
        db.init_schema(con)
        provider_classes.store(con)  # the report shows each provider's class
        _, errors = fx.archived_rates(settings.archive_root)
        problems += [str(e) for e in errors]
        n = fx.load_fx_from_archive(settings.archive_root, con)
    finally:
        con.close()
    return n, problems


def make_report(settings: Settings, week: str | None = None, currency: str | None = None,
                workloads_file: Path | None = None, max_age_days: int | None = None,
                discounts: Sequence[Any] = ()) -> Path:
    """Write `<data>/reports/<week>/report.html`, `report.md` and the CSVs; returns the HTML.
    `max_age_days`: the age limit of "now" (default: $GPUPRICES_MAX_AGE_DAYS, else the
    warehouse's); `currency`: default $GPUPRICES_CURRENCY, else USD (flows/config.py)."""
    currency = default_currency(currency)
    max_age_days = max_age_days_from(max_age_days)
    workloads = load_known_workloads(workloads_file or DEFAULT_WORKLOADS)
    con = db.connect(settings.db_path, read_only=True)
    try:
        return write_report(con, settings.reports_dir, week=week, currency=currency,
                            workloads=workloads, node_shapes=registry.node_shapes(),
                            max_age_days=max_age_days, discounts=discounts)
    finally:
        con.close()
