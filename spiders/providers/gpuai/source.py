"""GPU.ai fetch plan: `GET https://api.gpu.ai/v1/pricing?limit=200`, then the same with
`&cursor=<next_cursor>` until `next_cursor` is null (no key; the production host, not
api.demo.gpu.ai). About 272 rows, 200 a page (../shared/PROVIDERS_MORE2.md, GPU.ai)."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.sources import RequestSpec, json_field

PRICING_URL = "https://api.gpu.ai/v1/pricing"
LIMIT = 200  # rows per page the API serves (PROVIDERS_MORE2.md, GPU.ai)


def page_url(cursor: str | None = None) -> str:
    query = {"limit": LIMIT, **({"cursor": cursor} if cursor else {})}
    return f"{PRICING_URL}?{urlencode(query)}"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=page_url(), headers={"Accept": "application/json"})]


def follow(capture: Capture) -> list[RequestSpec]:
    """The next page, from the answer's `next_cursor`."""
    cursor = json_field(capture, "next_cursor")
    if not isinstance(cursor, str) or not cursor:
        return []
    return [RequestSpec(url=page_url(cursor), headers={"Accept": "application/json"})]
