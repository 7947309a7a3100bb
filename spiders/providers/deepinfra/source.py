"""DeepInfra fetch plan: the public pricing page (MUI, rendered on the server: every table is in
the served HTML, no key needed)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://deepinfra.com/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
