"""Latitude.sh fetch plan: `GET https://www.latitude.sh/pricing`, keyless. The plans are in the
page's escaped Next.js flight data (`\\"plansData\\":{\\"servers\\":[...]}`); no separate
JSON is public without an API token."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://www.latitude.sh/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL, headers={"Accept": "text/html,application/xhtml+xml"})]
