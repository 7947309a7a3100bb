"""One warehouse for the team: after each load the warehouse file is published to
$GPUPRICES_PUBLISH (an `s3://bucket/prefix`, warehouse/publish.py), and `gpuprices pull` fetches
the latest for local SQL and reports."""

from __future__ import annotations

import os
import sys

import typer

from gpuprices.flows.config import Settings
from gpuprices.flows.redaction import redact
from gpuprices.warehouse import objstore, publish

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
        msg = redact(f"warning: the warehouse was not published: {exc}")
        print(msg, file=sys.stderr)
        return msg
    msg = f"published {pointer['url']} ({pointer['size'] / 1e6:,.1f} MB)"
    print(msg, file=sys.stderr)
    return msg
