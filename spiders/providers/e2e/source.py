"""E2E Networks fetch plan: the public pricing page for US buyers.

https://www.e2enetworks.com/pricing?region=us is rendered on the server (Next.js): the USD table
and the INR JSON-LD OfferCatalog are both in the served HTML, no key needed.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://www.e2enetworks.com/pricing?region=us"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
