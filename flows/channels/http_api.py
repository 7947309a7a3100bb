"""`gpuprices api`: a read-only HTTP API over the query layer (gpuprices.warehouse.queries).

FastAPI: its parameters are typed Python arguments that pydantic checks (a wrong type or a
limit past the maximum is a 422 naming the field, before any query runs), and it writes the
OpenAPI document and the /docs page from the same signatures. Prefect already brings FastAPI
and uvicorn into the environment, so the API adds no server stack of its own. Swagger UI's
files come from the fastapi-offline package, not a CDN: /docs works on a machine without
internet.

Every answer is a table: JSON (a list of objects, as `gpuprices sql --format json`), CSV or
Parquet, by ?format= or the Accept header. Its ETag is derived from the warehouse's last load
(copies.py) and the request, so If-None-Match answers 304 until the next load. Rows are
capped (a default and a maximum `limit`; X-Truncated says when rows were left out) and each
question has a time limit. There is no SQL endpoint: only the questions below.
"""

# No `from __future__ import annotations`: FastAPI reads the parameter types at run time, and
# Limit and Fmt are local to create_app.

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import duckdb
import pyarrow as pa
import uvicorn
from fastapi import Body, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline

from gpuprices.flows.channels import formats
from gpuprices.flows.channels.copies import NoWarehouse, WarehouseCopies
from gpuprices.flows.channels.ranking import rank_workload
from gpuprices.sizing.workload import WorkloadError
from gpuprices.warehouse import index_method, queries
from gpuprices.warehouse.contract import PRICING_MODELS

DEFAULT_ROWS = 1000
MAX_ROWS = 10_000
TIMEOUT_S = 10.0

Pricing = Literal[PRICING_MODELS]  # type: ignore[valid-type]
Segment = Literal[index_method.SEGMENTS]  # type: ignore[valid-type]
Format = Literal[formats.FORMATS]  # type: ignore[valid-type]

_TABLE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "The rows: JSON (a list of objects), CSV or Parquet.",
          "content": {"application/json": {}, "text/csv": {},
                      "application/vnd.apache.parquet": {}}},
    304: {"description": "Not modified since the ETag sent in If-None-Match (no load since)."},
    406: {"description": "No format the Accept header allows is written here."},
    503: {"description": "No warehouse to answer from yet, or the question took too long."},
}

WORKLOAD_EXAMPLE = {
    "name": "qlora-llama3.1-8b", "model": "Llama 3.1 8B", "method": "qlora",
    "precision": "bf16-true", "seq_len": 2048, "micro_batch": 4, "grad_checkpointing": True,
    "lora_rank": 16, "tokens": 15_000_000, "checkpoint_every_tokens": 1_500_000,
}


def create_app(db_path: Path, work_dir: Path, *, default_rows: int = DEFAULT_ROWS,
               max_rows: int = MAX_ROWS, timeout_s: float = TIMEOUT_S) -> FastAPIOffline:
    """The API over the warehouse at `db_path`; its copies live in `work_dir` (copies.py)."""
    copies = WarehouseCopies(db_path, work_dir)

    @asynccontextmanager
    async def lifespan(_app):
        yield
        copies.close()  # the copies go with the server

    app = FastAPIOffline(
        lifespan=lifespan,
        title="gpuprices API",
        summary="GPU cloud prices from the gpuprices warehouse, read-only.",
        description="Offers now, the cheapest offer per GPU model, an offer's price history, "
                    "price changes, the daily GPU rental price index, stale providers, and "
                    "offers ranked for a training workload. Every table comes as JSON, CSV or "
                    "Parquet (`?format=` or `Accept`), with an ETag that changes with each "
                    f"load. At most {max_rows} rows per answer (default {default_rows}).",
        version="1",
    )
    app.state.copies = copies

    Limit = Annotated[int, Query(ge=1, le=max_rows, description=(
        f"Rows at most (default {default_rows}, at most {max_rows}); X-Truncated: true when "
        "there were more."))]
    Fmt = Annotated[Format | None, Query(alias="format", description=(
        "json, csv or parquet; without it the Accept header decides (default json)."))]

    def table_answer(request: Request, fmt: str | None, limit: int,
                     ask: Callable[[duckdb.DuckDBPyConnection, int], pa.Table]) -> Response:
        try:
            chosen = formats.choose(fmt, request.headers.get("accept"))
        except formats.NotAcceptable as exc:
            raise HTTPException(406, str(exc)) from None
        try:
            with copies.cursor() as (cur, copy):
                key = "\n".join([copy.tag, request.url.path,
                                 "&".join(sorted(str(request.query_params).split("&"))),
                                 chosen])
                etag = '"' + hashlib.sha256(key.encode()).hexdigest()[:32] + '"'
                headers = {"ETag": etag, "Cache-Control": "no-cache",
                           "Vary": "Accept",
                           "Last-Modified": _http_date(copy.last_load["last_run_finished_at"])}
                if etag in _etags(request.headers.get("if-none-match")):
                    return Response(status_code=304, headers=headers)
                with queries.reading(cur, timeout_s) as con:
                    table = ask(con, limit + 1)
        except NoWarehouse as exc:
            raise HTTPException(503, str(exc)) from None
        except queries.QueryTimeout as exc:
            raise HTTPException(503, f"{exc} (the API's time limit)") from None
        truncated = table.num_rows > limit
        table = table.slice(0, limit)
        headers.update({"X-Rows": str(table.num_rows), "X-Row-Limit": str(limit),
                        "X-Truncated": str(truncated).lower()})
        return Response(formats.encode(table, chosen), media_type=formats.MEDIA[chosen],
                        headers=headers)

    @app.get("/healthz", tags=["service"])
    def healthz() -> JSONResponse:
        """Whether the API has a warehouse to answer from, and what its last load was."""
        try:
            copy = copies.current()
        except NoWarehouse as exc:
            return JSONResponse({"status": "no_warehouse", "detail": str(exc)}, 503)
        info = {k: formats.plain(v) for k, v in copy.last_load.items()}
        return JSONResponse({"status": "ok", **info, "copied_at": _iso(copy.made_at),
                             "load_in_progress_since": _iso(copies.busy_since)})

    @app.get("/offers/now", tags=["offers"], responses=_TABLE_RESPONSES)
    def offers_now(request: Request, gpu_model: str | None = None,
                   provider: str | None = None, pricing_model: Pricing | None = None,
                   region: str | None = None,
                   country: Annotated[str | None, Query(
                       min_length=2, max_length=2,
                       description="ISO 3166-1 alpha-2 country of the offer's region")] = None,
                   limit: Limit = default_rows, fmt: Fmt = None) -> Response:
        """Every offer of each provider's latest snapshot (latest_offers): stale, announced
        and not-firm prices included and flagged (is_stale, is_announced, firm_price), with
        price_per_gpu_hour_usd and the country of its region; cheapest first per GPU model
        and pricing model."""
        return table_answer(request, fmt, limit, lambda con, n: queries.offers_now(
            con, gpu_model=gpu_model, provider=provider, pricing_model=pricing_model,
            region=region, country=country, limit=n))

    @app.get("/offers/cheapest", tags=["offers"], responses=_TABLE_RESPONSES)
    def cheapest(request: Request, gpu_model: str | None = None,
                 pricing_model: Pricing | None = None, provider: str | None = None,
                 limit: Limit = default_rows, fmt: Fmt = None) -> Response:
        """Per GPU model and pricing model the cheapest firm, fresh offer now (cheapest_now),
        in USD and EUR per GPU-hour; cheapest first."""
        return table_answer(request, fmt, limit, lambda con, n: queries.cheapest_now(
            con, gpu_model=gpu_model, pricing_model=pricing_model, provider=provider, limit=n))

    @app.get("/offers/{offer:path}/history", tags=["offers"], responses=_TABLE_RESPONSES)
    def history(request: Request, offer: str, region: str | None = None,
                pricing_model: Pricing | None = None, limit: Limit = default_rows,
                fmt: Fmt = None) -> Response:
        """The runs of unchanged price of one offer (offer_history: valid_from .. valid_to),
        oldest first. `offer` is an offer_id (digits) or `provider:sku` (URL-encoded; a sku
        may hold `/`), narrowed by region and pricing_model."""
        if offer.isdigit():
            kw: dict[str, Any] = {"offer_id": int(offer)}
        elif ":" in offer:
            provider, sku = offer.split(":", 1)
            kw = {"provider": provider, "sku": sku}
        else:
            raise HTTPException(422, f"offer {offer!r}: an offer_id or provider:sku")
        return table_answer(request, fmt, limit, lambda con, n: queries.offer_history(
            con, region=region, pricing_model=pricing_model, limit=n, **kw))

    @app.get("/changes", tags=["history"], responses=_TABLE_RESPONSES)
    def changes(request: Request,
                days: Annotated[int, Query(ge=1, le=36600, description=(
                    "Changes first seen in this many days up to the warehouse's today"))] = 7,
                gpu_model: str | None = None, provider: str | None = None,
                pricing_model: Pricing | None = None, limit: Limit = default_rows,
                fmt: Fmt = None) -> Response:
        """Price changes (price_changes), newest first, largest move first within a day."""
        return table_answer(request, fmt, limit, lambda con, n: queries.price_changes(
            con, days=days, gpu_model=gpu_model, provider=provider,
            pricing_model=pricing_model, limit=n))

    @app.get("/index", tags=["history"], responses=_TABLE_RESPONSES)
    def index(request: Request, gpu_model: str | None = None,
              pricing_model: Literal["on_demand", "spot", "committed"] = "on_demand",
              segment: Segment = "all", start: dt.date | None = None, end: dt.date | None = None,
              currency: Annotated[str, Query(pattern="^[A-Za-z]{3}$")] = "USD",
              all_days: bool = False, limit: Limit = default_rows,
              fmt: Fmt = None) -> Response:
        """The daily GPU rental price index (docs/index.md): per GPU model and day its value,
        band (25th-75th percentile), panel and members (JSON text)."""
        return table_answer(request, fmt, limit, lambda con, n: queries.price_index(
            con, gpu_model=gpu_model, pricing_model=pricing_model, segment=segment,
            start=start, end=end, currency=currency, all_days=all_days, limit=n))

    @app.get("/stale", tags=["service"], responses=_TABLE_RESPONSES)
    def stale(request: Request, limit: Limit = default_rows, fmt: Fmt = None) -> Response:
        """Providers whose latest snapshot is older than the age limit (stale_providers):
        left out of the cheapest offers."""
        return table_answer(request, fmt, limit,
                            lambda con, n: queries.stale_providers(con).slice(0, n))

    @app.post("/rank", tags=["sizing"], responses={
        422: {"description": "A workload the sizing engine refuses (the field is named)."}})
    def rank(workload: Annotated[dict[str, Any], Body(
                 description="One [[workload]] table of a workloads TOML file, as JSON "
                             "(sizing/workloads.toml; docs/sizing.md)",
                 examples=[WORKLOAD_EXAMPLE])],
             date: dt.date | None = None,
             currency: Literal["USD", "EUR"] = "USD",
             top: Annotated[int, Query(ge=1, le=100)] = 10,
             set_apart: bool = False) -> JSONResponse:
        """Offers ranked for the workload by cost per successful checkpoint, as `gpuprices
        rank --json` lists them (the as-of day on each row)."""
        try:
            with copies.cursor() as (cur, _):
                rows = rank_workload(cur, workload, date=date, currency=currency, top=top,
                                     set_apart=set_apart, timeout_s=timeout_s)
        except NoWarehouse as exc:
            raise HTTPException(503, str(exc)) from None
        except queries.QueryTimeout as exc:
            raise HTTPException(503, f"{exc} (the API's time limit)") from None
        except (WorkloadError, ValueError, TypeError) as exc:
            raise HTTPException(422, str(exc)) from None
        return JSONResponse(json.loads(json.dumps(rows, default=formats.plain)))

    return app


def _etags(header: str | None) -> set[str]:
    if not header:
        return set()
    return {t.strip().removeprefix("W/") for t in header.split(",")}


def _iso(t: float | None) -> str | None:
    return None if t is None else dt.datetime.fromtimestamp(t, dt.UTC).isoformat()


def _http_date(t: dt.datetime | None) -> str:
    t = t or dt.datetime.now(dt.UTC)
    return t.astimezone(dt.UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")


def run(app: FastAPIOffline, host: str, port: int) -> None:
    """Serve `app` until SIGTERM or Ctrl-C (uvicorn stops cleanly on both)."""
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
