"""TensorPool fetch plan: the public pricing page (rendered on the server: the comparison grid
and the mobile cards are in the served HTML, no key needed)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://tensorpool.dev/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
