"""`gpuprices quarantine list|release`: review rows the quality gates held back and load the
ones a person judged right.

release moves the selected rows of one (date, provider) from lake/quarantine into the offers
partition and reloads that partition into DuckDB. It is safe to rerun after a crash at any
point: rows already in the offers partition are not added twice, and the release is recorded
(lake/quarantine/released.jsonl) so a later reparse of that day lets the same rows through.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from gpuprices.flows.cli.options import DataDir
from gpuprices.flows.config import owner_only_writes, settings_from
from gpuprices.flows.ops.lock import (
    run_lock,  # the same lock as the nightly run: never both at once
)
from gpuprices.flows.redaction import redact
from gpuprices.warehouse.provider_ids import PROVIDERS

# pyarrow, the lake and the pipeline are imported inside the commands: every `gpuprices`
# command imports this module (bench/cli_startup.py).
if TYPE_CHECKING:
    import pyarrow as pa

quarantine_app = typer.Typer(no_args_is_help=True, add_completion=False,
                             help="Review and release rows held back by the quality gates.")
console = Console(width=None if os.isatty(1) else 200)
err = Console(stderr=True, soft_wrap=True)  # messages stay whole lines (a path never splits)



def _row_key(row: dict) -> tuple:
    """What identifies a row inside one partition: its offer identity, the page it was read
    from and its price (a released row equal to one already loaded is the same row)."""
    from gpuprices.warehouse import identity

    return identity.of_row(row), row["source_url"], row["price_per_hour"]


def register(app: typer.Typer) -> None:
    """Add the `quarantine` command group to the main command line."""
    # Every gpuprices command writes owner-only files (archive, lake, warehouse, run summaries).
    owner_only_writes()
    app.add_typer(quarantine_app, name="quarantine")


def _select(table: pa.Table, reason_like: str | None) -> pa.Array:
    import pyarrow as pa
    import pyarrow.compute as pc

    if not reason_like:
        return pa.array([True] * table.num_rows)
    return pc.match_substring(table.column("reason"), reason_like, ignore_case=True)


@quarantine_app.command("list")
def list_cmd(
    date: Annotated[str | None, typer.Option(help="Only this snapshot date (YYYY-MM-DD).")]
    = None,
    provider: Annotated[str | None, typer.Option("--provider", "-p")] = None,
    data_dir: DataDir = None,
    limit: Annotated[int, typer.Option(help="Rows to print per partition at most.")] = 50,
) -> None:
    """List quarantined rows with their reason."""
    from gpuprices.warehouse import lake

    settings = settings_from(data_dir)
    day = dt.date.fromisoformat(date) if date else None
    found = [(d, p, path) for d, p, path in lake.list_quarantine(settings.lake_root)
             if (day is None or d == day) and (provider is None or p == provider)]
    total = 0
    for d, p, _ in found:
        q = lake.read_quarantine(settings.lake_root, d, p)
        if not q.num_rows:
            continue
        total += q.num_rows
        t = Table(title=f"{p} {d}: {q.num_rows} quarantined rows")
        for col in ("sku", "region", "gpu_model", "pricing_model", "price_per_hour", "currency",
                    "reason"):
            t.add_column(col, no_wrap=col != "reason")
        for row in q.slice(0, limit).to_pylist():
            t.add_row(*(redact("" if row[c] is None else str(row[c])) for c in
                        ("sku", "region", "gpu_model", "pricing_model", "price_per_hour",
                         "currency", "reason")))
        console.print(t)
        if q.num_rows > limit:
            console.print(f"(first {limit} of {q.num_rows} rows shown; use --limit)")
    console.print(f"{total} quarantined rows in {len(found)} partitions", highlight=False)


def release_rows(settings, day: dt.date, provider: str, reason_like: str | None
                 ) -> tuple[int, int]:
    """Move the matching quarantined rows of one provider-day into its offers partition and
    reload that partition. Returns (rows released, rows still quarantined). Raises ContractError
    when a selected row cannot be an offer (e.g. no GPU model: fix the alias and reparse)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from gpuprices.flows.pipeline import steps as pipeline
    from gpuprices.warehouse import db, identity, lake, objstore
    from gpuprices.warehouse.contract import OFFER_SCHEMA, ContractError

    q = lake.read_quarantine(settings.lake_root, day, provider)
    mask = _select(q, reason_like)
    chosen, keep = q.filter(mask), q.filter(pc.invert(mask))
    if not chosen.num_rows:
        return 0, keep.num_rows
    rows = chosen.drop_columns(["reason"])
    unmapped = rows.column("gpu_model").null_count
    if unmapped:
        raise ContractError(f"{unmapped} selected rows have no GPU model: add the alias to "
                            "warehouse/gpu_aliases.csv and run `gpuprices reparse` instead")
    rows = lake.validate_offers(rows)  # refuse rows that break the contract, before any write
    try:  # the day's own file, or its rows in a compacted month
        current = lake.read_partition(settings.lake_root, day, provider)
    except FileNotFoundError:
        current = OFFER_SCHEMA.empty_table()
    have = {_row_key(r) for r in current.to_pylist()}
    new = [r for r in rows.to_pylist() if _row_key(r) not in have]
    merged = pa.concat_tables([current, pa.Table.from_pylist(new, schema=current.schema)])
    # Record first: a crash after it leaves rows that a rerun of release (or a reparse) lets in.
    lines = "".join(json.dumps({"date": day.isoformat(), "provider": provider,
                                "identity": identity.to_record(identity.of_row(r)),
                                "price_per_hour": r["price_per_hour"],
                                "released_at": dt.datetime.now(dt.UTC).isoformat()},
                               default=str) + "\n" for r in rows.to_pylist())
    where = pipeline.releases_path(settings)
    if isinstance(where, objstore.StorePath):
        where.append(lines.encode(), what="quarantine releases")
    else:
        with where.open("a") as fh:
            fh.write(lines)
            fh.flush()
            os.fsync(fh.fileno())
    lake.write_partition(settings.lake_root, day, provider, merged)
    lake.write_quarantine(settings.lake_root, day, provider, keep)
    con = db.connect(settings.db_path)
    try:
        db.init_schema(con)
        db.load_partition(con, day, provider, lake.read_partition(settings.lake_root, day,
                                                                  provider))
    finally:
        con.close()
    return chosen.num_rows, keep.num_rows


@quarantine_app.command("release")
def release_cmd(
    date: Annotated[str, typer.Option(help="Snapshot date (YYYY-MM-DD).")],
    provider: Annotated[str, typer.Option("--provider", "-p")],
    reason_like: Annotated[str | None, typer.Option(
        help="Only rows whose reason contains this text (case-insensitive).")] = None,
    data_dir: DataDir = None,
) -> None:
    """Load reviewed quarantined rows of one date and provider into the warehouse."""
    from gpuprices.warehouse import lake
    from gpuprices.warehouse.contract import ContractError

    if provider not in PROVIDERS:
        raise typer.BadParameter(f"unknown provider {provider!r}")
    settings = settings_from(data_dir).ensure()
    day = dt.date.fromisoformat(date)
    if not lake.partition_path(settings.lake_root, day, provider,
                               lake.QUARANTINE_AREA).exists():
        err.print(f"nothing quarantined for {provider} on {day}")
        raise typer.Exit(2)
    with run_lock(settings):
        try:
            released, left = release_rows(settings, day, provider, reason_like)
        except ContractError as exc:
            err.print(f"not released: {exc}", highlight=False)
            raise typer.Exit(2) from None
    console.print(f"released {released} rows of {provider} {day} into offers; "
                  f"{left} still quarantined", highlight=False)
