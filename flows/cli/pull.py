"""`gpuprices pull`: the latest warehouse the team published (flows/ops/publishing.py) fetched
for local `sql` and `report`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from gpuprices.flows.cli.options import DataDir
from gpuprices.flows.config import PUBLISH_ENV, settings_from
from gpuprices.flows.redaction import redact


def pull(
    to: Annotated[Path | None, typer.Option(
        "--to", help="Where to put it. Default: the data folder's warehouse.duckdb")] = None,
    source: Annotated[str | None, typer.Option(
        "--from", help=f"s3://bucket/prefix it was published to. Default: ${PUBLISH_ENV}")]
    = None,
    allow_older: Annotated[bool, typer.Option(
        "--allow-older", help="Accept a warehouse older than the one already here (published "
                              "earlier, or with an older newest snapshot)")] = False,
    data_dir: DataDir = None,
) -> None:
    """Fetch the latest published warehouse for local `gpuprices sql` and `gpuprices report`:
    the pointer checked (a copy under the published prefix), the bytes fetched checked against
    its size and SHA-256, the file opened as a warehouse, never older than the local one without
    --allow-older, then renamed into place whole."""
    from gpuprices.flows.ops.publishing import publish_location
    from gpuprices.warehouse import publish

    where = publish_location(source)
    if where is None:
        raise typer.BadParameter(f"no store to pull from: pass --from s3://bucket/prefix or set "
                                 f"{PUBLISH_ENV}")
    dest = to or settings_from(data_dir).ensure().db_path
    try:
        got = publish.pull(where, dest, allow_older=allow_older)
    except OSError as exc:
        print(redact(f"error: {exc}"), file=sys.stderr)
        raise typer.Exit(1) from None
    print(f"{got['path']}: {got['url']} published {got['published_at']}, "
          f"{got['size'] / 1e6:,.1f} MB fetched, SHA-256 {got['sha256'][:12]}... checked, "
          "opened as a warehouse")


def register(app: typer.Typer) -> None:
    app.command()(pull)
