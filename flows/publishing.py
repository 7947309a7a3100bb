"""One warehouse for the team: after each load the warehouse file is published to
$GPUPRICES_PUBLISH (an `s3://bucket/prefix`, warehouse/publish.py), and `gpuprices pull` fetches
the latest for local SQL and reports."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from flows import alerts
from flows.cli_options import DataDir
from flows.config import Settings, settings_from
from warehouse import objstore, publish

PUBLISH_ENV = "GPUPRICES_PUBLISH"


def publish_location(value: str | None = None) -> objstore.StorePath | None:
    """Where warehouses are published: the argument, else $GPUPRICES_PUBLISH; None: nowhere."""
    raw = (value or os.environ.get(PUBLISH_ENV, "")).strip()
    if not raw:
        return None
    where = objstore.location(raw)
    if not isinstance(where, objstore.StorePath):
        raise typer.BadParameter(f"{PUBLISH_ENV}={raw!r}: publishing needs an s3://bucket/prefix")
    return where


def after_load(settings: Settings) -> str | None:
    """Publish the warehouse a load just closed, when $GPUPRICES_PUBLISH is set. Returns what
    was done (or why not: said, never raised; the local warehouse is whole either way)."""
    where = publish_location()
    if where is None:
        return None
    try:
        pointer = publish.publish(settings.db_path, where)
    except (OSError, ValueError) as exc:
        msg = alerts.redact(f"warning: the warehouse was not published: {exc}")
        print(msg, file=sys.stderr)
        return msg
    msg = f"published {pointer['url']} ({pointer['size'] / 1e6:,.1f} MB)"
    print(msg, file=sys.stderr)
    return msg


def pull(
    to: Annotated[Path | None, typer.Option(
        "--to", help="Where to put it. Default: the data folder's warehouse.duckdb")] = None,
    source: Annotated[str | None, typer.Option(
        "--from", help=f"s3://bucket/prefix it was published to. Default: ${PUBLISH_ENV}")]
    = None,
    data_dir: DataDir = None,
) -> None:
    """Fetch the latest published warehouse (checked against its SHA-256, renamed into place
    whole) for local `gpuprices sql` and `gpuprices report`."""
    where = publish_location(source)
    if where is None:
        raise typer.BadParameter(f"no store to pull from: pass --from s3://bucket/prefix or set "
                                 f"{PUBLISH_ENV}")
    dest = to or settings_from(data_dir).ensure().db_path
    try:
        got = publish.pull(where, dest)
    except OSError as exc:
        print(alerts.redact(f"error: {exc}"), file=sys.stderr)
        raise typer.Exit(1) from None
    print(f"{got['path']}: {got['url']} published {got['published_at']}, "
          f"{got['size'] / 1e6:,.1f} MB, SHA-256 {got['sha256'][:12]}... checked")


def register(app: typer.Typer) -> None:
    app.command()(pull)
