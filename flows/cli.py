"""The `gpuprices` command line."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from pathlib import Path
from typing import Annotated

import duckdb
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from flows import (
    load_steps,
    ops_cli,
    pipeline,
    plan_cli,
    progress,
    provider_classes,
    report_cli,
    run_journal,
    sizing_cli,
)
from flows.config import Settings, prefect_env, settings_from
from flows.lock import run_lock
from flows.results import DayResult, not_run
from flows.status import run_day, status_table
from flows.warehouse_state import (
    REPLAY_HINT,
    age_limit,
    interrupted_runs,
    last_good_on,
    warehouse_problem,
)
from spiders import registry
from spiders.archive import FutureCaptureError
from spiders.importer import archive_new, import_manifest, parse_timestamp
from spiders.importer import import_capture as archive_capture
from spiders.providers.aws.history import captures_from_p5_series
from spiders.providers.azure.history import captures_from_azure_history
from spiders.providers.gcp.history import captures_from_gcp_history
from spiders.wayback import backfill as wayback_backfill
from warehouse import db, lake, lake_sync
from warehouse.contract import PROVIDERS

# rich_markup_mode=None: help texts are printed as written (rich markup would eat the
# `[[workload]]` of a TOML table name, and emoji codes the `:x:` in a text).
app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  help="GPU cloud price snapshots, a DuckDB price warehouse and sizing.")
# Wide enough for the status table when output goes to a file or CI log.
console = Console(width=None if os.isatty(1) else 160)
err = Console(stderr=True, width=None if os.isatty(2) else 160)

DataDir = Annotated[Path | None, typer.Option(
    "--data-dir", help="Data folder (lake, warehouse.duckdb, Prefect home). "
                       "Default: $GPUPRICES_HOME or ./data")]
ArchiveDir = Annotated[Path | None, typer.Option(
    "--archive", help="Raw archive root. Default: $GPUPRICES_ARCHIVE or the repo's snapshots/")]
ProviderOpt = Annotated[list[str] | None, typer.Option(
    "--provider", "-p", help="Provider (repeatable). Default: all eight.")]


def _settings(data_dir: Path | None, archive: Path | None = None) -> Settings:
    return settings_from(data_dir, archive).ensure()


def _providers(names: list[str] | None) -> list[str]:
    names = names or list(PROVIDERS)
    unknown = [n for n in names if n not in PROVIDERS]
    if unknown:
        raise typer.BadParameter(f"unknown provider(s) {unknown}; known: {', '.join(PROVIDERS)}")
    return names


def _report(results: list[DayResult], settings: Settings, run_id: str) -> int:
    max_age, day = age_limit(settings.db_path), run_day(results)
    others = not_run(results, registry.ids(), last_good_on(settings.db_path, day), day, max_age)
    # Runs that never finished, as far back as a snapshot counts as "now" (None: the warehouse
    # cannot be read).
    cut = [] if max_age is None else interrupted_runs(settings.db_path, max_age)
    console.print(status_table(results, max_age, others, cut))
    unmapped: dict[str, set[str]] = {}
    for r in results:
        unmapped.setdefault(r.provider, set()).update(r.unmapped)
    for provider, names in unmapped.items():
        if names:
            console.print(f"[yellow]{provider}: unmapped GPU names (rows quarantined):[/yellow] "
                          + escape(", ".join(sorted(names))), highlight=False)
    failed = [r for r in results if r.status == "failed"]
    for r in failed:
        for e in r.errors:
            err.print(f"[red]FAILED[/red] {escape(e)}", markup=True, highlight=False)
    # Complete: its summary written and its run closed in the warehouse (journal gone).
    if (not (settings.runs_dir / f"{run_id}.md").exists()
            or run_journal.journal_path(settings, run_id).exists()):
        err.print(f"run {run_id} did not finish recording itself (see the errors above); "
                  "the next run cleans up after it and loads what the lake holds",
                  highlight=False, markup=False)
        return 1
    return 1 if failed else 0


def _run_direct(settings: Settings, providers: list[str], replay: str | None, run_id: str
                ) -> list[DayResult]:
    run_journal.begin(settings, run_id, providers)  # recorded as started before any work
    results: list[DayResult] = []
    if replay is None:
        problem = pipeline.fetch_fx_live(settings)
        if problem:
            err.print(f"warning: {problem}", highlight=False)
    for p in providers:
        if replay is None:
            results.append(pipeline.live_day(settings, p))
        else:
            results.extend(pipeline.replay(settings, p, replay, on_day=progress.replayed))
    pipeline.load(settings, results, run_id, on_day=progress.loaded)
    return results


def _progress(settings: Settings, providers: list[str], replay: str | None):
    """The progress display of a replay (the archived days per provider); none for a live run,
    whose crawls report themselves."""
    if replay is None:
        return contextlib.nullcontext()
    try:
        dates = pipeline.parse_dates(replay, settings, providers)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    days = dict.fromkeys(providers, 0)
    for _, p, _ in pipeline.archives(settings, providers, dates):
        days[p] += 1
    return progress.shown(err, days)


def _mode(live: bool, replay: str | None) -> str | None:
    if live and replay:
        raise typer.BadParameter("--live and --replay exclude each other")
    return replay


@app.command()
def crawl(
    provider: ProviderOpt = None,
    live: Annotated[bool, typer.Option("--live", help="Fetch from the real sites (default).")]
    = False,
    replay: Annotated[str | None, typer.Option(
        "--replay", help="Parse archived captures instead: a date YYYY-MM-DD or 'all'.")] = None,
    data_dir: DataDir = None,
    archive: ArchiveDir = None,
) -> None:
    """Crawl (or replay) providers without Prefect: crawl → parse → check → load."""
    settings = _settings(data_dir, archive)
    replay = _mode(live, replay)
    providers = _providers(provider)
    with run_lock(settings), _progress(settings, providers, replay):
        results = _run_direct(settings, providers, replay, run_id := pipeline.new_run_id())
    raise typer.Exit(_report(results, settings, run_id))


@app.command()
def reparse(
    provider: ProviderOpt = None,
    date: Annotated[str, typer.Option(help="A date YYYY-MM-DD or 'all'.")] = "all",
    data_dir: DataDir = None,
    archive: ArchiveDir = None,
) -> None:
    """Rebuild offers from the raw archive with today's parsers and reload them."""
    settings = _settings(data_dir, archive)
    providers = _providers(provider)
    with run_lock(settings), _progress(settings, providers, date):
        results = _run_direct(settings, providers, date, run_id := pipeline.new_run_id())
    raise typer.Exit(_report(results, settings, run_id))


@app.command()
def load(
    provider: ProviderOpt = None,
    date: Annotated[str | None, typer.Option(help="Only this date (YYYY-MM-DD).")] = None,
    data_dir: DataDir = None,
    archive: ArchiveDir = None,
) -> None:
    """Load the Parquet lake into DuckDB (idempotent per snapshot date and provider), and the
    archived ECB rates into fx_rates. A partition whose bytes differ from the checksum recorded
    when the pipeline wrote it is refused and named (exit 1); the others load."""
    settings = _settings(data_dir, archive)
    providers = _providers(provider)
    with run_lock(settings):
        refused = [(path, problem) for d, p, path in lake.list_partitions(settings.lake_root)
                   if p in providers and (date is None or d.isoformat() == date)
                   and (problem := lake.checksum_problem(path))]
        # Waits, bounded, for a reader holding the warehouse; past the wait: busy, exit 2.
        con = load_steps.open_warehouse(settings)
        try:
            provider_classes.store(con)
            counts = db.load_lake(con, settings.lake_root,
                                  dates=[dt.date.fromisoformat(date)] if date else None,
                                  providers=providers, exclude=[path for path, _ in refused])
            lake_sync.record_loaded(con, settings.lake_root, list(counts))
            rates = pipeline.load_fx(settings, con)
        finally:
            con.close()
    console.print(f"loaded {sum(counts.values())} rows from {len(counts)} partitions"
                  + (f"; {rates} ECB rates" if rates else ""))
    for _, problem in refused:
        err.print(f"REFUSED {problem}", highlight=False, markup=False)
    if not counts and not refused and not date and not provider:
        err.print(f"the lake at {settings.lake_root} holds no partitions: {REPLAY_HINT}",
                  highlight=False, markup=False)
    raise typer.Exit(1 if refused else 0)


@app.command()
def compact(data_dir: DataDir = None) -> None:
    """Rewrite warehouse.duckdb into a fresh, smaller file (DuckDB never returns the space
    that deletes and updates free); safe against a crash: the new file replaces the old one
    only when complete."""
    settings = _settings(data_dir)
    if not settings.db_path.exists():
        err.print(warehouse_problem(settings.db_path), highlight=False, markup=False)
        raise typer.Exit(1)
    with run_lock(settings):
        before, after = db.compact(settings.db_path)
    console.print(f"{settings.db_path}: {before / 1e6:,.1f} MB -> {after / 1e6:,.1f} MB")


@app.command()
def nightly(
    provider: ProviderOpt = None,
    live: Annotated[bool, typer.Option("--live", help="Fetch from the real sites (default).")]
    = False,
    replay: Annotated[str | None, typer.Option(
        "--replay", help="Replay archived captures: a date YYYY-MM-DD or 'all'.")] = None,
    data_dir: DataDir = None,
    archive: ArchiveDir = None,
) -> None:
    """The nightly Prefect flow: per provider crawl (own process), parse, check; then load.
    Prints a per-provider status table; exits non-zero when a provider failed."""
    settings = _settings(data_dir, archive)
    replay = _mode(live, replay)
    os.environ.update(prefect_env(settings))
    # Prefect reads PREFECT_HOME when first imported: the flow module is imported only now, after
    # the data folder's Prefect environment is set, never at the top of this module.
    from flows.nightly import nightly_flow

    providers = _providers(provider)
    with run_lock(settings), _progress(settings, providers, replay):
        results = nightly_flow(settings, providers, replay, run_id := pipeline.new_run_id())
    raise typer.Exit(_report(results, settings, run_id))


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="One SQL statement against warehouse.duckdb "
                                           "(read-only; no file, network or extension access).")],
    data_dir: DataDir = None,
    limit: Annotated[int, typer.Option(help="Rows to print at most.")] = 200,
) -> None:
    """Run one query against the warehouse and print the result as a table. It can read the
    warehouse and nothing else: no writes, no files (COPY, read_csv), no INSTALL, no SET."""
    settings = settings_from(data_dir)
    if not settings.db_path.exists():
        err.print(warehouse_problem(settings.db_path), highlight=False, markup=False)
        raise typer.Exit(2)
    try:
        statements = len(duckdb.extract_statements(query))
    except duckdb.Error as exc:
        err.print(f"query failed: {exc}", highlight=False, markup=False)
        raise typer.Exit(2) from None
    if statements != 1:
        err.print(f"one statement at a time, please (got {statements})", highlight=False,
                  markup=False)
        raise typer.Exit(2)
    con = db.connect(settings.db_path, read_only=True, config=db.QUERY_ONLY)
    try:
        cur = con.execute(query)
        names = [d[0] for d in cur.description] if cur.description else []
        rows = cur.fetchmany(limit + 1)
    except Exception as exc:
        err.print(f"query failed: {exc}", highlight=False, markup=False)
        rows = None
    finally:
        con.close()
    if not rows:  # a failed or empty answer from an empty warehouse: say what fills it
        problem = warehouse_problem(settings.db_path)
        if problem:
            err.print(problem, highlight=False, markup=False)
        if rows is None:
            raise typer.Exit(2)
    # Headers and cells are data, shown as they are: never rich markup, emoji codes or
    # highlighting ('[red]hi[/red]' and 'a:x:b' print as written).
    t = Table(show_lines=False)
    for n in names:
        t.add_column(Text(n), no_wrap=True)
    for row in rows[:limit]:
        t.add_row(*(Text("" if v is None else f"{v:.4f}" if isinstance(v, float) else str(v))
                    for v in row))
    # One line per row even in a log file: a wrapped price table is unreadable.
    Console(width=None if os.isatty(1) else 400).print(t)
    if len(rows) > limit:
        console.print(f"(first {limit} rows shown; use --limit)")


@app.command("import-capture")
def import_capture(
    file: Annotated[Path | None, typer.Argument(help="The captured body (HTML, JSON, CSV…).")]
    = None,
    provider: Annotated[str | None, typer.Option(help="Provider id.")] = None,
    url: Annotated[str | None, typer.Option(help="The ORIGINAL URL the body was served at.")]
    = None,
    captured_at: Annotated[str | None, typer.Option(
        help="Capture time: ISO date/time or a Wayback timestamp (UTC).")] = None,
    method: Annotated[str, typer.Option(help="HTTP method of the request.")] = "GET",
    request_body: Annotated[str | None, typer.Option(help="Request body (POST).")] = None,
    origin: Annotated[str | None, typer.Option(help="Where the bytes came from.")] = None,
    manifest: Annotated[Path | None, typer.Option(
        help="Import every row of a manifest CSV instead of one file.")] = None,
    archive: ArchiveDir = None,
) -> None:
    """Wrap an existing capture into the raw archive under its original URL and date."""
    settings = settings_from(None, archive)
    if manifest:
        try:
            done = import_manifest(settings.archive_root, manifest)
        except (ValueError, OSError) as exc:
            err.print(f"manifest refused: {exc}", highlight=False, markup=False)
            raise typer.Exit(2) from None
        added = sum(1 for _, new in done if new)
        console.print(f"{added} captures archived, {len(done) - added} already there")
        return
    if not (file and provider and url and captured_at):
        raise typer.BadParameter("give FILE with --provider, --url and --captured-at, "
                                 "or --manifest")
    if provider not in PROVIDERS:
        raise typer.BadParameter(f"unknown provider {provider!r}")
    try:
        path, new = archive_capture(settings.archive_root, file, provider, url,
                                    parse_timestamp(captured_at), method=method,
                                    request_body=request_body.encode() if request_body else None,
                                    origin=origin)
    except FutureCaptureError as exc:
        err.print(f"not archived: {exc}", highlight=False, markup=False)
        raise typer.Exit(2) from None
    console.print(f"{'archived in' if new else 'already in'} {path}")


# The bundled real history series (copies with their origin in tests/fixtures/SOURCES.md).
HISTORY = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
P5_SERIES = HISTORY / "raw" / "aws" / (
    "amorton45_p5.48xlarge_us-east-1_ondemand_daily_2025-04_2026-08.csv")


@app.command()
def backfill(
    wayback: Annotated[bool, typer.Option(
        "--wayback", help="Fetch the provider's old pricing pages from the Wayback Machine.")]
    = False,
    provider: ProviderOpt = None,
    since: Annotated[str | None, typer.Option(help="Wayback: captures on or after this date.")]
    = None,
    gcp: Annotated[Path, typer.Option(help="Folder of dated GCP history CSVs (Cyclenerd).")]
    = HISTORY / "history" / "gcp",
    azure: Annotated[Path, typer.Option(help="Folder of dated Azure radar CSVs.")]
    = HISTORY / "history" / "azure",
    aws_p5: Annotated[Path, typer.Option(help="The daily p5.48xlarge on-demand CSV series.")]
    = P5_SERIES,
    archive: ArchiveDir = None,
) -> None:
    """Bring dated price history into the raw archive (then `gpuprices reparse`).

    Without --wayback: the bundled real series (GCP pricing.yml history, Azure EU radar exports,
    AWS daily p5.48xlarge prices), one dated snapshot per day with its origin. With --wayback:
    every archived capture of the provider's pricing URLs, one request at a time. Both are
    resumable: what is already archived is skipped.
    """
    settings = settings_from(None, archive)
    if wayback:
        failed = 0
        for p in _providers(provider):
            s = wayback_backfill(p, settings.archive_root,
                                 since=dt.date.fromisoformat(since) if since else None)
            failed += len(s.failed)
            console.print(f"{p}: {s.cdx_rows} captures listed, {len(s.archived)} archived, "
                          f"{s.skipped} already there, {len(s.failed)} failed")
            for url, ts, reason in s.failed:
                err.print(f"FAILED {p}: {url} @ {ts}: {reason}", highlight=False)
        raise typer.Exit(1 if failed else 0)

    series = [("gcp", captures_from_gcp_history, gcp),
              ("azure", captures_from_azure_history, azure),
              ("aws", captures_from_p5_series, aws_p5)]
    for name, reader, path in series:
        if provider and name not in provider:
            continue
        if not path.exists():
            err.print(f"{name}: {path} not found")
            raise typer.Exit(2)
        caps = reader(path)
        added, skipped = archive_new(settings.archive_root, caps)
        days = sorted({c.snapshot_date for c in caps})
        console.print(f"{name}: {len(caps)} dated captures {days[0]} .. {days[-1]}: "
                      f"{added} archived, {skipped} already there")


# Commands defined beside the code they drive: operations (quarantine review), sizing, and
# the weekly report with the served schedules.
for _module in (ops_cli, sizing_cli, report_cli, plan_cli):
    _module.register(app)


def main() -> None:
    try:
        app()
    except db.WarehouseBusy as exc:  # a load holds the file: a state to wait out, not a crash
        err.print(str(exc), highlight=False, markup=False)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
