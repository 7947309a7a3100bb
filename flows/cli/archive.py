"""`gpuprices import-capture` and `gpuprices backfill`: bringing captures made elsewhere and
dated history series into the raw archive."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gpuprices.flows.cli.options import ArchiveDir, ProviderOpt, providers_or_all
from gpuprices.flows.config import REPO_ROOT, settings_from
from gpuprices.warehouse.provider_ids import PROVIDERS

# The archive's modules (warcio, the providers' history readers) are imported inside the two
# commands: every `gpuprices` command imports this module (bench/cli_startup.py).

console = Console(width=None if os.isatty(1) else 160)
err = Console(stderr=True, soft_wrap=True)  # messages stay whole lines (a path never splits)


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
    partial: Annotated[str | None, typer.Option(
        help="What the file leaves out of what its source listed (an excerpt, one page of "
             "several): offers absent from it never count as withdrawn.")] = None,
    manifest: Annotated[Path | None, typer.Option(
        help="Import every row of a manifest CSV instead of one file.")] = None,
    archive: ArchiveDir = None,
) -> None:
    """Wrap an existing capture into the raw archive under its original URL and date."""
    from gpuprices.spiders.archive import FutureCaptureError
    from gpuprices.spiders.importer import (
        BodyTooLargeError,
        import_manifest,
        parse_timestamp,
    )
    from gpuprices.spiders.importer import import_capture as archive_capture

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
                                    origin=origin, partial=partial)
    except (FutureCaptureError, BodyTooLargeError) as exc:
        err.print(f"not archived: {exc}", highlight=False, markup=False)
        raise typer.Exit(2) from None
    console.print(f"{'archived in' if new else 'already in'} {path}")


# The bundled real history series (copies with their origin in tests/fixtures/SOURCES.md).
HISTORY = REPO_ROOT / "tests" / "fixtures"
P5_SERIES = HISTORY / "raw" / "aws" / (
    "amorton45_p5.48xlarge_us-east-1_ondemand_daily_2025-04_2026-08.csv")


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
    from gpuprices.spiders.importer import archive_new
    from gpuprices.spiders.providers.aws.history import captures_from_p5_series
    from gpuprices.spiders.providers.azure.history import captures_from_azure_history
    from gpuprices.spiders.providers.gcp.history import captures_from_gcp_history
    from gpuprices.spiders.wayback import backfill as wayback_backfill

    settings = settings_from(None, archive)
    if wayback:
        failed = 0
        for p in providers_or_all(provider):
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


def register(app: typer.Typer) -> None:
    app.command("import-capture")(import_capture)
    app.command()(backfill)
