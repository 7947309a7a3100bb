"""The `gpuprices` command line."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from gpuprices.flows.cli import (
    api,
    bench,
    compare,
    plan,
    pull,
    quarantine,
    report,
    sizing,
    watch,
    worker,
)
from gpuprices.flows.cli import (
    archive as archive_commands,  # `archive` is each command's --archive option
)
from gpuprices.flows.cli import index as index_commands  # `index` is the command's function
from gpuprices.flows.cli.options import ArchiveDir, DataDir, ProviderOpt, providers_or_all
from gpuprices.flows.config import BadDataDir, Settings, prefect_env, settings_from
from gpuprices.flows.ops.lock import run_lock
from gpuprices.flows.redaction import redact

# Start-up time: every command starts this module, so what only some commands need (duckdb,
# pyarrow, the pipeline, Prefect...) is imported inside those commands, never here
# (tests/test_cli_startup.py checks it; bench/cli_startup.py measures it).
if TYPE_CHECKING:
    from gpuprices.flows.pipeline.results import DayResult

# rich_markup_mode=None: help texts are printed as written (rich markup would eat the
# `[[workload]]` of a TOML table name, and emoji codes the `:x:` in a text).
app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  help="GPU cloud price snapshots, a DuckDB price warehouse and sizing.")
# Wide enough for the status table when output goes to a file or CI log.
console = Console(width=None if os.isatty(1) else 160)
err = Console(stderr=True, soft_wrap=True)  # messages stay whole lines (a path never splits)

def _settings(data_dir: Path | None, archive: Path | None = None) -> Settings:
    return settings_from(data_dir, archive).ensure()


def _report(results: list[DayResult], settings: Settings, run_id: str) -> int:
    from gpuprices.flows.ops import run_journal
    from gpuprices.flows.ops.status import run_day, status_table
    from gpuprices.flows.ops.warehouse_state import (
        age_limit,
        coverage_line,
        interrupted_runs,
        last_good_on,
    )
    from gpuprices.flows.pipeline.results import not_run
    from gpuprices.spiders import registry

    max_age, day = age_limit(settings.db_path), run_day(results)
    others = not_run(results, registry.ids(), last_good_on(settings.db_path, day), day, max_age)
    # Runs that never finished, as far back as a snapshot counts as "now" (None: the warehouse
    # cannot be read).
    cut = [] if max_age is None else interrupted_runs(settings.db_path, max_age)
    line = coverage_line(settings.db_path)
    if line:  # first: how much of the market the figures are (the stale ones in the table)
        console.print(line, highlight=False, markup=False)
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
    from gpuprices.flows import loading
    from gpuprices.flows.ops import run_journal
    from gpuprices.flows.pipeline import live, progress
    from gpuprices.flows.pipeline import steps as pipeline
    from gpuprices.flows.pipeline.results import DayResult

    run_journal.begin(settings, run_id, providers)  # recorded as started before any work
    results: list[DayResult] = []
    listings = pipeline.Listings()  # the providers replay one after another: listed once
    if replay is None:
        problem = pipeline.fetch_fx_live(settings)
        if problem:
            err.print(f"warning: {problem}", highlight=False)
    for p in providers:
        try:
            if replay is None:
                results.append(live.live_day(settings, p))
            else:
                results.extend(pipeline.replay(settings, p, replay, on_day=progress.replayed,
                                               listings=listings))
        except Exception as exc:  # one provider that crashed never stops the others (nightly)
            results.append(DayResult(provider=p, snapshot_date=None, status="failed",
                                     errors=[redact(f"{p}: {type(exc).__name__}: {exc}")]))
    loading.load(settings, results, run_id, on_day=progress.loaded)
    return results


def _progress(settings: Settings, providers: list[str], replay: str | None):
    """The progress display of a replay (the archived days per provider); none for a live run,
    whose crawls report themselves."""
    from gpuprices.flows.pipeline import progress
    from gpuprices.flows.pipeline import steps as pipeline

    if replay is None:
        return contextlib.nullcontext()
    try:
        dates = pipeline.parse_dates(replay, settings, providers)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    days = dict.fromkeys(providers, 0)
    try:
        for _, p, _ in pipeline.archives(settings, providers, dates):
            days[p] += 1
    except Exception:  # an archive that cannot be listed: the run reports it per provider
        return contextlib.nullcontext()
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
    from gpuprices.flows.pipeline import steps as pipeline

    settings = _settings(data_dir, archive)
    replay = _mode(live, replay)
    providers = providers_or_all(provider)
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
    from gpuprices.flows.pipeline import steps as pipeline

    settings = _settings(data_dir, archive)
    providers = providers_or_all(provider)
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
    from gpuprices.flows.ops import publishing
    from gpuprices.flows.ops.warehouse_state import replay_hint
    from gpuprices.flows.pipeline import load_steps, provider_classes
    from gpuprices.flows.pipeline import steps as pipeline
    from gpuprices.warehouse import db, lake_sync

    settings = _settings(data_dir, archive)
    providers = providers_or_all(provider)
    with run_lock(settings):
        refused: list[tuple[Path, str]] = []
        # Waits, bounded, for a reader holding the warehouse; past the wait: busy, exit 2.
        con = load_steps.open_warehouse(settings)
        try:
            provider_classes.store(con)
            counts = db.load_lake(con, settings.lake_root,
                                  dates=[dt.date.fromisoformat(date)] if date else None,
                                  providers=providers, refused=refused)
            lake_sync.record_loaded(con, settings.lake_root, list(counts))
            rates = pipeline.load_fx(settings, con)
            publishing.publish_index(settings, con, "load")  # docs/index.md: as every load
        finally:
            con.close()
        publishing.after_load(settings)
    console.print(f"loaded {sum(counts.values())} rows from {len(counts)} partitions"
                  + (f"; {rates} ECB rates" if rates else ""))
    for _, problem in refused:
        err.print(f"REFUSED {problem}", highlight=False, markup=False)
    if not counts and not refused and not date and not provider:
        err.print(f"the lake at {settings.lake_root} holds no partitions: "
                  f"{replay_hint(settings.data_dir)}",
                  highlight=False, markup=False)
    raise typer.Exit(1 if refused else 0)


@app.command()
def compact(data_dir: DataDir = None) -> None:
    """Rewrite warehouse.duckdb into a fresh, smaller file (DuckDB never returns the space
    that deletes and updates free); safe against a crash: the new file replaces the old one
    only when complete."""
    from gpuprices.flows.ops.warehouse_state import warehouse_problem
    from gpuprices.warehouse import db

    settings = _settings(data_dir)
    if not settings.db_path.exists():
        err.print(warehouse_problem(settings.db_path), highlight=False, markup=False)
        raise typer.Exit(1)
    with run_lock(settings):
        before, after = db.compact(settings.db_path)
    console.print(f"{settings.db_path}: {before / 1e6:,.1f} MB -> {after / 1e6:,.1f} MB")


@app.command("compact-lake")
def compact_lake(
    month: Annotated[list[str] | None, typer.Option(
        "--month", help="Only this closed month (YYYY-MM); repeatable. Default: every closed "
                        "month with day files.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Merge the lake's day files of each closed month into one file per provider and month
    (warehouse/lake_compact.py): written, verified, switched by its manifest, then the day
    files deleted; a run killed at any point leaves the lake reading the same, and a rerun
    finishes it. The warehouse is not reloaded (the data did not change)."""
    from gpuprices.warehouse import lake_compact

    settings = _settings(data_dir)
    with run_lock(settings):
        try:
            done = lake_compact.compact_lake(settings.lake_root, months=month)
        except ValueError as exc:
            err.print(str(exc), highlight=False, markup=False)
            raise typer.Exit(2) from None
    folded = [r for r in done if not r.skipped]
    before = sum(r.bytes_before for r in folded)
    after = sum(r.bytes_after for r in folded)
    console.print(f"{settings.lake_root}: {len(folded)} provider-months compacted, "
                  f"{sum(r.files_removed for r in folded)} day files folded in, "
                  f"{before / 1e6:,.2f} MB -> {after / 1e6:,.2f} MB", highlight=False)


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
    providers = providers_or_all(provider)
    # The lock first: a second run on the data folder is refused at once, before Prefect's
    # import (seconds) and before it touches the folder's Prefect environment.
    with run_lock(settings):
        os.environ.update(prefect_env(settings))
        # Prefect reads PREFECT_HOME when first imported: the flow module is imported only now,
        # after the data folder's Prefect environment is set, never at the top of this module.
        from gpuprices.flows.nightly import head_start, nightly_flow
        from gpuprices.flows.pipeline import steps as pipeline

        with _progress(settings, providers, replay):
            run_id = pipeline.new_run_id()
            # The providers' work begins now, while the flow's Prefect server starts
            # (nightly.py).
            with head_start(settings, providers, replay, run_id):
                results = nightly_flow(settings, providers, replay, run_id)
    raise typer.Exit(_report(results, settings, run_id))


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="One SQL statement against warehouse.duckdb "
                                           "(read-only; no file, network or extension access).")],
    data_dir: DataDir = None,
    limit: Annotated[int, typer.Option(help="Rows to print at most.")] = 200,
    fmt: Annotated[str, typer.Option(
        "--format", "-f", help="table (every column at full width; one block per row when "
                               "wider than the terminal), csv, json or markdown")] = "table",
) -> None:
    """Run one query against the warehouse and print the result as a table, CSV, JSON or a
    Markdown table. It can read the warehouse and nothing else: no writes, no files (COPY,
    read_csv), no INSTALL, no SET."""
    import duckdb

    from gpuprices.flows.cli import sql_output
    from gpuprices.flows.ops.warehouse_state import warehouse_problem
    from gpuprices.warehouse import db

    if fmt not in sql_output.FORMATS:
        err.print(f"--format must be one of {', '.join(sql_output.FORMATS)}, got {fmt!r}",
                  highlight=False, markup=False)
        raise typer.Exit(2)
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
    # highlighting ('[red]hi[/red]' and 'a:x:b' print as written). One line per row even in a
    # log file: a wrapped price table is unreadable. The width a terminal (or $COLUMNS) has
    # decides only between the table and one block per row.
    width = (shutil.get_terminal_size().columns if os.isatty(1) or "COLUMNS" in os.environ
             else None)
    typer.echo(sql_output.render(names, (rows or [])[:limit], fmt, width))
    if rows and len(rows) > limit:
        err.print(f"(first {limit} rows shown; use --limit)", highlight=False, markup=False)


# Commands defined beside the code they drive: the archive (import, backfill), operations
# (quarantine review), sizing, the benchmark plan, recording measured benchmark results,
# rent/reserve/own, the weekly report with the served schedules, and the team mode's worker.
# `pull` fetches the latest warehouse published to object storage; `index` the price index;
# `watch` evaluates price rules and sends their news; `api` serves the warehouse over HTTP
# (and `mcp` to AI assistants).
for _module in (archive_commands, quarantine, sizing, plan, bench, compare, report, worker, pull,
                index_commands, watch, api):
    _module.register(app)


def main() -> None:
    try:
        app()
    except BadDataDir as exc:  # `--data-dir ''`, or a file: said, never a traceback
        err.print(f"error: {exc}", highlight=False, markup=False)
        raise SystemExit(2) from None
    except Exception as exc:
        # A load holds the file: a state to wait out, not a crash; or a setting of the
        # warehouse's is unusable. Only a command that opened the warehouse can meet either,
        # and that command imported the module that defines them.
        connection = sys.modules.get("gpuprices.warehouse.connection")
        if connection is None or not isinstance(exc, (connection.WarehouseBusy,
                                                       connection.BadSetting)):
            raise
        err.print(str(exc), highlight=False, markup=False)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
