"""Hyperbolic fetch plan: `GET https://api.hyperbolic.ai/v2/alpha/on-demand/rental-options`,
anonymous (the logged-out GPU page calls it; access re-verified by the recording project on
2026-08-29, ../shared/fixtures/raw/SOURCES.md). One bare JSON list, no paging; its membership
changes with the suppliers' inventory."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

RENTAL_OPTIONS_URL = "https://api.hyperbolic.ai/v2/alpha/on-demand/rental-options"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=RENTAL_OPTIONS_URL, headers={"Accept": "application/json"})]
