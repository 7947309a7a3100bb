"""`gpuprices mcp`: a Model Context Protocol server on stdio, so an AI assistant can ask the
warehouse the same questions as the HTTP API, as tools with typed arguments. Built on the
`mcp` package's MCPServer (called FastMCP before mcp 2.0). Each call opens the warehouse
read-only for its question only (the query layer), so the server never holds up a load; a call
made while a load holds the file answers that it is busy."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer

from gpuprices.flows.channels import formats
from gpuprices.flows.channels.ranking import rank_workload
from gpuprices.warehouse import queries

MAX_ROWS = 500  # an assistant's context is small: answers past this are cut (and say so)
TIMEOUT_S = 30.0

Pricing = Literal["on_demand", "spot", "reserved", "committed", "community"]


def build(db_path: Path) -> MCPServer:
    server = MCPServer(
        name="gpuprices",
        instructions="GPU cloud rental prices from the gpuprices warehouse (31 providers, "
                     "daily snapshots): what is cheapest now, every current offer, an offer's "
                     "price history, recent price changes, the daily GPU rental price index, "
                     "providers whose data is stale, and offers ranked for a training "
                     "workload by cost per checkpoint. Prices are per GPU-hour unless the "
                     "column says per hour (a whole instance). GPU models use canonical names "
                     "such as H100-SXM-80GB, H200-141GB, B200-180GB, A100-SXM-80GB, L40S-48GB.")

    def table(t: Any, limit: int) -> list[dict[str, Any]]:
        return formats.records(t.slice(0, min(limit, MAX_ROWS)))

    @server.tool()
    def cheapest_now(gpu_model: str | None = None, pricing_model: Pricing | None = None,
                     provider: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Per GPU model and pricing model, the cheapest firm, fresh offer now, with its price
        per GPU-hour in USD and EUR, provider, SKU, region and snapshot date; cheapest first."""
        return table(queries.cheapest_now(db_path, gpu_model=gpu_model, provider=provider,
                                          pricing_model=pricing_model, limit=limit,
                                          timeout_s=TIMEOUT_S), limit)

    @server.tool()
    def offers_now(gpu_model: str | None = None, provider: str | None = None,
                   pricing_model: Pricing | None = None, region: str | None = None,
                   country: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Every current offer (each provider's latest snapshot) matching the filters;
        country is an ISO 3166-1 alpha-2 code. Stale or not-firm prices are flagged
        (is_stale, firm_price). Cheapest first per GPU model and pricing model."""
        return table(queries.offers_now(db_path, gpu_model=gpu_model, provider=provider,
                                        pricing_model=pricing_model, region=region,
                                        country=country, limit=limit, timeout_s=TIMEOUT_S),
                     limit)

    @server.tool()
    def offer_history(provider: str | None = None, sku: str | None = None,
                      region: str | None = None, pricing_model: Pricing | None = None,
                      offer_id: int | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """An offer's runs of unchanged price (valid_from .. valid_to), oldest first: name it
        by provider and sku (as offers_now lists them), or by offer_id."""
        return table(queries.offer_history(db_path, offer_id=offer_id, provider=provider,
                                           sku=sku, region=region, pricing_model=pricing_model,
                                           limit=limit, timeout_s=TIMEOUT_S), limit)

    @server.tool()
    def price_changes(days: int = 7, gpu_model: str | None = None, provider: str | None = None,
                      pricing_model: Pricing | None = None, limit: int = 50
                      ) -> list[dict[str, Any]]:
        """Price changes first seen in the last `days` days (up to the warehouse's newest
        snapshot): old and new price, dates and percent change; newest first."""
        return table(queries.price_changes(db_path, days=days, gpu_model=gpu_model,
                                           provider=provider, pricing_model=pricing_model,
                                           limit=limit, timeout_s=TIMEOUT_S), limit)

    @server.tool()
    def price_index(gpu_model: str, pricing_model: Literal["on_demand", "spot", "committed"]
                    = "on_demand", segment: Literal["all", "neocloud", "hyperscaler"] = "all",
                    start: dt.date | None = None, end: dt.date | None = None,
                    currency: str = "USD", limit: int = 60) -> list[dict[str, Any]]:
        """The daily GPU rental price index of one GPU model: per day its value (interquartile
        mean per GPU-hour), band (25th-75th percentile), panel size and members."""
        return table(queries.price_index(db_path, gpu_model=gpu_model,
                                         pricing_model=pricing_model, segment=segment,
                                         start=start, end=end, currency=currency, limit=limit,
                                         timeout_s=TIMEOUT_S), limit)

    @server.tool()
    def stale_providers() -> list[dict[str, Any]]:
        """Providers whose latest snapshot is too old to count as now (left out of
        cheapest_now): last snapshot date, age in days, offers."""
        return table(queries.stale_providers(db_path, timeout_s=TIMEOUT_S), MAX_ROWS)

    @server.tool()
    def rank(workload: dict[str, Any], currency: Literal["USD", "EUR"] = "USD", top: int = 10,
             date: dt.date | None = None) -> list[dict[str, Any]]:
        """Offers ranked for a training workload by cost per successful checkpoint. The
        workload is one [[workload]] table of a gpuprices workloads file as an object, e.g.
        {"name": "ft", "model": "Llama 3.1 8B", "method": "qlora", "tokens": 15000000,
        "checkpoint_every_tokens": 1500000}."""
        rows = rank_workload(db_path, workload, date=date, currency=currency,
                             top=min(top, MAX_ROWS), timeout_s=TIMEOUT_S)
        return [{k: formats.plain(v) for k, v in r.items()} for r in rows]

    return server


def serve(db_path: Path) -> None:
    """Run the server on stdio until the client closes it."""
    build(db_path).run("stdio")
