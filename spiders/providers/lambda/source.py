"""Lambda fetch plan: the public pricing page (server-rendered HubSpot: every tab is in the HTML,
no browser needed).

The instance-types API (`https://cloud.lambda.ai/api/v1/instance-types`) needs a Bearer key and
prices per instance in US cents; it is not fetched here, so a crawl needs no secret.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

# Current home of the price table; earlier captures are at
# https://lambdalabs.com/service/gpu-cloud (2024), reached through the Wayback backfill.
PRICING_URL = "https://lambda.ai/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
