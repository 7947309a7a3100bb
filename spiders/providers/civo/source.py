"""Civo fetch plan: the public pricing page.

https://www.civo.com/pricing is rendered on the server: every GPU table and both price prints
(hourly and monthly) are in the served HTML, no browser or key needed.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://www.civo.com/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL)]
