"""One warehouse for the team: after each load the warehouse file is published to
$GPUPRICES_PUBLISH (an `s3://bucket/prefix`, warehouse/publish.py), and `gpuprices pull` fetches
the latest for local SQL and reports."""

from __future__ import annotations

import os
import sys

import duckdb
import typer

from gpuprices.flows.config import PUBLISH_ENV, Settings
from gpuprices.flows.redaction import redact
from gpuprices.warehouse import index_files, index_store, objstore, publish


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


def publish_index(settings: Settings, con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    """The price index after a load (docs/index.md): new days and series published into
    price_index_daily, differing recomputations of published rows recorded as revisions, and
    the index written as CSV and Parquet beside the warehouse (<data>/index/). A failure is
    said, never raised: the run's loads stand either way."""
    try:
        new, revised = index_store.update(con, run_id)
        files = index_files.write(con, settings.data_dir)
    except (duckdb.Error, OSError, ValueError) as exc:
        msg = redact(f"warning: the price index was not updated: {exc}")
        print(msg, file=sys.stderr)
        return msg
    return (f"price index: {new} rows published, {revised} revisions recorded; "
            + ", ".join(str(f) for f in files))
