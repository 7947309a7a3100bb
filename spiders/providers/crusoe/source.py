"""Crusoe fetch plan: the public price page only.

https://www.crusoe.ai/cloud/pricing is a server-rendered Webflow page (prices in the served
HTML, no browser needed). Crusoe's API (api.crusoecloud.com, HMAC-signed) lists VM types and
capacity but no prices, so it is not fetched.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://www.crusoe.ai/cloud/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
