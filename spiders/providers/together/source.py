"""Together AI fetch plan: the public pricing page (Webflow, server-rendered; every table is in
the HTML, no browser needed). There is no keyless price API for GPU clusters."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://www.together.ai/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
