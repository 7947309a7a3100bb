"""What the commands that rank offers share (`size`, `rank`, `plan`, `compare`, `record`): the
workloads file, the day's offers priced by the warehouse and the recorded measurements, the
options they spell the same way and their usage errors (their JSON-safe rows are
flows/channels/ranking.py's, shared with the API)."""

from __future__ import annotations

import datetime as dt
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from gpuprices.flows.cli.user_file import read_or_exit
from gpuprices.flows.config import default_currency as config_default_currency
from gpuprices.flows.config import max_age_days as config_max_age_days
from gpuprices.flows.config import settings_from
from gpuprices.flows.gpu_names import load_known_workloads
from gpuprices.sizing.workload import Workload, WorkloadError

# duckdb and the warehouse modules are imported by the functions that read the warehouse: every
# `gpuprices` command imports this module (flows/cli/main.py, bench/cli_startup.py).
if TYPE_CHECKING:
    import duckdb

console = Console(width=None if os.isatty(1) else 160)
err = Console(stderr=True, soft_wrap=True)  # messages stay whole lines (a path never splits)

WorkloadFile = Annotated[Path, typer.Argument(help="TOML file of [[workload]] tables")]


def load_workloads(path: Path) -> list[Workload]:
    return read_or_exit(load_known_workloads, path, WorkloadError)


def data_dir_of(data_dir: Path | None) -> Path:
    return settings_from(data_dir).data_dir


def warehouse_today(con: duckdb.DuckDBPyConnection) -> dt.date:
    """The warehouse's "now": latest_snapshot.as_of. ValueError, saying what fills it, when the
    warehouse holds no offers."""
    from gpuprices.flows.ops.warehouse_state import REPLAY_HINT
    from gpuprices.warehouse import queries

    try:
        return queries.warehouse_today(con)
    except ValueError:
        raise ValueError(f"the warehouse holds no offers: {REPLAY_HINT}") from None


def read_offers(db_path: Path, date: dt.date | None, currency: str = "USD",
                max_age_days: int | None = None) -> tuple[dt.date, list[dict], float | None]:
    """What one could rent on `date` (default: the warehouse's today, latest_snapshot.as_of),
    priced in `currency` by the warehouse: each provider's latest snapshot on or before the day,
    as in cheapest_now and the weekly report (offers_priced_as_of, with is_stale past
    `max_age_days`: default $GPUPRICES_MAX_AGE_DAYS, else the warehouse's), and the USD ->
    currency factor of that day for the cost constants (fx_factor; None without a rate)."""
    from gpuprices.warehouse import db, queries

    max_age_days = config_max_age_days(max_age_days)
    con = db.connect(db_path, read_only=True)
    try:
        date = date or warehouse_today(con)
        max_age_days = db.age_limit(con, max_age_days)
        offers = queries.rows(queries.priced_offers(con, date, currency, max_age_days))
        usd = queries.usd_factor(con, currency, date)
    finally:
        con.close()
    return date, offers, usd


def read_measurements(db_path: Path) -> list[dict[str, Any]]:
    """The recorded benchmark results (measured_throughput; `gpuprices record`), none when
    there is no warehouse yet."""
    from gpuprices.warehouse import benchmarks, db

    if not db_path.exists():
        return []
    con = db.connect(db_path, read_only=True)
    try:
        return benchmarks.measured(con)
    finally:
        con.close()


def money(x: float, cur: str) -> str:
    return f"{x:,.2f} {cur}" if math.isfinite(x) else "—"


def fail(message: str) -> typer.Exit:
    """Print the error; the caller raises the returned exit (status 2, a usage error)."""
    err.print(f"[red]error:[/red] {message}")
    return typer.Exit(2)


def currency_option(currency: str | None) -> str:
    """--currency, else $GPUPRICES_CURRENCY, else USD (flows/config.py); USD or EUR here, the
    two the sizing engine prices in."""
    try:
        currency = config_default_currency(currency)
    except ValueError as exc:
        raise fail(escape(str(exc))) from None
    if currency not in ("USD", "EUR"):
        raise fail(f"currency must be USD or EUR, got {currency}")
    return currency


CurrencyOption = Annotated[str | None, typer.Option(
    "--currency", help="USD or EUR. Default: $GPUPRICES_CURRENCY, else USD")]


def date_option(date: str | None) -> dt.date | None:
    if not date:
        return None
    try:
        return dt.date.fromisoformat(date)
    except ValueError:
        raise fail(f"--date {date!r} is not YYYY-MM-DD") from None


def offers_or_exit(db_path: Path, day: dt.date | None, currency: str, max_age_days: int | None
                    ) -> tuple[dt.date, list[dict], float | None]:
    """read_offers, or exit 2 saying why there is nothing to rank."""
    import duckdb

    from gpuprices.flows.ops.warehouse_state import warehouse_problem

    problem = warehouse_problem(db_path)
    if problem:
        raise fail(escape(problem))
    try:
        day, offers, usd_factor = read_offers(db_path, day, currency, max_age_days)
    except (ValueError, duckdb.Error) as exc:
        raise fail(f"{db_path}: {exc}") from None
    if not offers:
        raise fail(f"no offers on {day}")
    return day, offers, usd_factor


def fx_missing(offers: list[dict], usd_factor: float | None) -> list[str]:
    """The currencies without a rate on the day: offers priced in them cannot be ranked."""
    missing = {str(o["price_currency"]) for o in offers if o["price_per_hour"] is None}
    if usd_factor is None:
        missing.add("USD")
    return sorted(missing)
