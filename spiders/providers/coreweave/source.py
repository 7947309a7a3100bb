"""CoreWeave fetch plan: the public pricing page (Webflow, server-rendered: no browser needed).

CoreWeave has no public price API. The page moved from /gpu-cloud-pricing (2023-24) to /pricing
(2025+); older captures are reached through the Wayback backfill.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://www.coreweave.com/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
