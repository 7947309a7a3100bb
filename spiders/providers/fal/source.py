"""fal fetch plan: the public pricing page (Next.js, rendered on the server: the GPU table is in
the served HTML, no key needed)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://fal.ai/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
