"""Nebius fetch plan: the public price page only.

https://nebius.com/prices is server-rendered (Next.js): the tables are in the served HTML, so no
browser is needed. The gRPC billing API (CalculatorService) needs a service account and prices
presets, not the page's per-GPU offers; it is not used here.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICES_URL = "https://nebius.com/prices"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICES_URL)]
