"""Runpod fetch plan: the public GraphQL API and the pricing page.

`gpuTypes` answers without an API key (no key is sent; the SDK's RUNPOD_API_KEY is not needed
for prices). The page is fetched too because it and the API disagree at times (2026: H100 SXM
secure 2.99 on the page, 3.49 in the API); the parser records which source each row came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

GRAPHQL_URL = "https://api.runpod.io/graphql"
PRICING_URL = "https://www.runpod.io/pricing"

# Field names as in Runpod's GraphQL schema (GpuType, LowestPrice); lowestPrice without a
# dataCenterId is the global minimum for one GPU. The stock probes are those of the keyless
# ~2026-08-25 recording (tests/fixtures/raw/runpod/cgi_runpod_gputypes.json): `lp1s` = the
# secure cloud at 1 GPU, `lp8` = 8 GPUs, and `dataCenters { gpuAvailability }` per data centre
# (LowestPriceInput's `secureCloud`, `gpuCount`: Runpod's GraphQL schema).
GPU_TYPES_QUERY = """
query GpuTypes {
  gpuTypes {
    id
    displayName
    memoryInGb
    secureCloud
    communityCloud
    securePrice
    communityPrice
    secureSpotPrice
    communitySpotPrice
    oneMonthPrice
    threeMonthPrice
    sixMonthPrice
    lowestPrice(input: {gpuCount: 1}) {
      minimumBidPrice
      uninterruptablePrice
      stockStatus
    }
    lp1s: lowestPrice(input: {gpuCount: 1, secureCloud: true}) {
      stockStatus
    }
    lp8: lowestPrice(input: {gpuCount: 8}) {
      stockStatus
    }
  }
  dataCenters {
    id
    gpuAvailability {
      gpuTypeId
      available
      stockStatus
    }
  }
}
""".strip()


def graphql_body() -> bytes:
    return json.dumps({"query": GPU_TYPES_QUERY, "variables": {}}).encode()


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [
        RequestSpec(
            url=GRAPHQL_URL,
            method="POST",
            body=graphql_body(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        ),
        # Server-rendered (Webflow); prices sit in attributes and JSON-LD, no browser needed.
        RequestSpec(url=PRICING_URL),
    ]
