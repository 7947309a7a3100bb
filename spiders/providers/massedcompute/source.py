"""Massed Compute fetch plan: `GET https://vm.massedcompute.com/pricing`, keyless. There is no
public JSON price list (`/api/pricing` needs sign-in); the rows are in the page's Next.js RSC
flight stream (../shared/PROVIDERS_MORE2.md, Massed Compute)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://vm.massedcompute.com/pricing"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL, headers={"Accept": "text/html,application/xhtml+xml"})]
