"""Hyperstack fetch plan: the public GPU pricing page.

https://www.hyperstack.cloud/gpu-pricing is a HubSpot page rendered on the server: every price
card is in the served HTML, one global list (no region or currency switch), no key. The
Infrahub API's flavor and pricebook endpoints need an API key, so they are not fetched.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://www.hyperstack.cloud/gpu-pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
