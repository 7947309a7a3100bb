"""`gpuprices api`: the read-only HTTP API (flows/channels/http_api.py) under uvicorn, and
`gpuprices mcp`: the MCP server (flows/channels/mcp_server.py) on stdio."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuprices.flows.cli.options import DataDir
from gpuprices.flows.config import settings_from


def api(
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0: every interface).")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    data_dir: DataDir = None,
    default_rows: Annotated[int, typer.Option(
        "--default-rows", min=1, help="Rows per answer when the request names no limit.")]
    = 1000,
    max_rows: Annotated[int, typer.Option(
        "--max-rows", min=1, help="The largest limit a request may ask for.")] = 10_000,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=0.1, help="Seconds a question may take before it is stopped (503).")]
    = 10.0,
) -> None:
    """Serve the warehouse read-only over HTTP: /offers/now, /offers/cheapest,
    /offers/{id}/history, /changes, /index, /stale, POST /rank, /healthz; JSON, CSV or Parquet;
    OpenAPI at /docs. It answers from its own copy of warehouse.duckdb, renewed after each
    load, so it never holds up a load and keeps serving while one runs."""
    # FastAPI and uvicorn load in about a second: only this command imports them.
    from gpuprices.flows.channels import http_api

    settings = settings_from(data_dir)
    app = http_api.create_app(settings.db_path, settings.data_dir / "api",
                              default_rows=min(default_rows, max_rows), max_rows=max_rows,
                              timeout_s=timeout)
    typer.echo(f"gpuprices api: http://{host}:{port}/docs (warehouse {settings.db_path})")
    http_api.run(app, host, port)


def mcp(data_dir: DataDir = None) -> None:
    """Serve the warehouse to AI assistants as a Model Context Protocol server on stdio
    (tools: cheapest_now, offers_now, offer_history, price_changes, price_index,
    stale_providers, rank). An MCP client starts it as a command, e.g.
    `gpuprices mcp --data-dir /srv/gpuprices/data`."""
    from gpuprices.flows.channels import mcp_server  # the mcp package: only this command

    settings = settings_from(data_dir)
    mcp_server.serve(settings.db_path)


def register(app: typer.Typer) -> None:
    """Add `api` and `mcp` to the main gpuprices app."""
    app.command("api")(api)
    app.command("mcp")(mcp)
