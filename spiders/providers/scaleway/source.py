"""Scaleway fetch plan: the Instance API product catalog and its stock levels, keyless.

- `GET https://api.scaleway.com/instance/v1/zones/fr-par-2/products/servers?per_page=100&page=N`
  (~136 types, two pages);
- `GET .../products/servers/availability?per_page=100&page=N` (available / scarce / shortage per
  type, no prices; read beside the catalog of the same day).

Zone fr-par-2 lists every GPU type at the same prices as the other zones, which carry subsets
(../shared/PROVIDERS_MORE.md, Scaleway). A page of `per_page` entries may be followed by more:
`follow` asks for the next page then, and stops at a shorter page (an empty page also ends it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from urllib.parse import parse_qs, urlencode, urlsplit

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.sources import RequestSpec

ZONE = "fr-par-2"
BASE = f"https://api.scaleway.com/instance/v1/zones/{ZONE}/products/servers"
CATALOG = BASE
AVAILABILITY = f"{BASE}/availability"
PER_PAGE = 100


def page_url(base: str, page: int) -> str:
    return f"{base}?{urlencode({'per_page': PER_PAGE, 'page': page})}"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=page_url(base, 1), headers={"Accept": "application/json"})
            for base in (CATALOG, AVAILABILITY)]


def follow(capture: Capture) -> list[RequestSpec]:
    """The next page after a full one."""
    if capture.status != 200:
        return []
    parts = urlsplit(capture.url)
    try:
        page = int(parse_qs(parts.query).get("page", ["1"])[0])
        servers = json.loads(capture.body).get("servers")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return []
    if not isinstance(servers, dict) or len(servers) < PER_PAGE:
        return []
    base = f"{parts.scheme}://{parts.netloc}{parts.path}"
    return [RequestSpec(url=page_url(base, page + 1), headers={"Accept": "application/json"})]
