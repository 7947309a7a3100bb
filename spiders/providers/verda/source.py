"""Verda fetch plan: the public pricing page.

https://verda.com/pricing is server-rendered; every price is also in one
`<script type="application/ld+json">` block (schema.org Offer nodes), which the parser reads.
No key, no browser. Verda's API (api.verda.com, formerly api.datacrunch.io) needs OAuth client
credentials for its instance-types prices, so it is not fetched.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://verda.com/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
