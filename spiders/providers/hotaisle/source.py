"""Hot Aisle fetch plan: the public pricing page.

https://hotaisle.xyz/pricing is an Astro site rendered on the server: the plan cards and their
prices are in the served HTML, no browser or key needed.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://hotaisle.xyz/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
