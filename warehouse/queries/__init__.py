"""One query layer over the warehouse's named views: typed functions that answer a buyer's
questions (cheapest now, offers now, an offer's history, price changes, the price index, stale
providers, the offers priced for a ranking) as Arrow tables, or pandas with `pandas=True`.

Each function takes a `Source`: the warehouse file's path, opened read-only with no file,
network or extension access for the one question and closed after it, or an open connection
the caller keeps. The command line, the report, `gpuprices api` and `gpuprices mcp` ask through
these functions instead of writing SQL of their own. Ranking offers for a workload needs the
sizing engine, a layer above this one: `gpuprices.flows.channels.ranking` combines
`priced_offers` here with `gpuprices.sizing.rank`.
"""

from __future__ import annotations

from gpuprices.warehouse.queries.health import last_load, stale_providers
from gpuprices.warehouse.queries.history import offer_history, price_changes
from gpuprices.warehouse.queries.index import price_index
from gpuprices.warehouse.queries.offers import (
    cheapest_now,
    offers_now,
    priced_offers,
    usd_factor,
    warehouse_today,
)
from gpuprices.warehouse.queries.source import QueryTimeout, Source, reading, rows

__all__ = [
    "QueryTimeout",
    "Source",
    "cheapest_now",
    "last_load",
    "offer_history",
    "offers_now",
    "price_changes",
    "price_index",
    "priced_offers",
    "reading",
    "rows",
    "stale_providers",
    "usd_factor",
    "warehouse_today",
]
