"""`record`: measured benchmark results into the warehouse (warehouse/benchmarks.py), which
`rank`, `size` and the report then use over the sizing estimate."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from gpuprices.flows.cli.options import DataDir
from gpuprices.flows.cli.user_file import read_or_exit
from gpuprices.flows.config import settings_from

console = Console(width=None if os.isatty(1) else 160)
err = Console(stderr=True, soft_wrap=True)  # messages stay whole lines (a path never splits)


def record(
    results: Annotated[Path, typer.Argument(
        help="CSV (or TOML of [[result]] tables) of measured runs: provider, sku, date, "
             "workload, gpu_model, gpus, tokens_per_s, and optionally mfu, step_time_cv, "
             "allreduce_busbw_gbs, checkpoint_write_s, checkpoint_restore_s, recovery_min, "
             "cost, currency, notes (docs/sizing.md, 'Measured results')")],
    data_dir: DataDir = None,
) -> None:
    """Record measured benchmark results in the warehouse's `benchmarks` table. Every row is
    checked first (an error names each bad line, and nothing is recorded); a row recorded
    again replaces the earlier one."""
    from gpuprices.warehouse import benchmarks, db

    rows = read_or_exit(benchmarks.read_results, results, benchmarks.ResultsError)
    db_path = settings_from(data_dir).db_path
    con = db.connect(db_path)
    try:
        db.init_schema(con)
        given, replaced = benchmarks.record(con, rows, source=str(results))
        unknown = benchmarks.unknown_offers(con, rows)
        total = con.execute("SELECT count(*) FROM benchmarks").fetchone()[0]
    finally:
        con.close()
    for line in unknown:
        err.print(f"[yellow]warning:[/yellow] {escape(line)} (recorded all the same)",
                  highlight=False)
    console.print(f"recorded {given} result(s) from {results} ({replaced} replaced an earlier "
                  f"record of the same run); {total} in {db_path}", highlight=False)


def register(target: typer.Typer) -> None:
    """Add `record` to another Typer app (the main gpuprices CLI)."""
    target.command("record")(record)
