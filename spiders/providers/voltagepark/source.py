"""Voltage Park fetch plan: two keyless JSON endpoints the logged-out dashboard
(dashboard.voltagepark.com) calls; the marketing /pricing page prints no figures.

- `GET /api/v1/bare-metal/locations`: bare-metal locations with per-GPU prices, paged
  (`total_result_count`, `has_previous`, `has_next`): `follow` asks for the next page while
  `has_next` is true. One page today.
- `GET /api/v1/instant-deploy-presets/`: VM presets with per-instance prices (deprecated in
  their OpenAPI spec in favour of `/virtual-machines/instant/locations`, whose answers we have
  not seen yet; read while it answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.sources import RequestSpec, json_field

API = "https://cloud-api.voltagepark.com/api/v1"
LOCATIONS_URL = f"{API}/bare-metal/locations"
PRESETS_URL = f"{API}/instant-deploy-presets/"
_JSON = {"Accept": "application/json"}


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=LOCATIONS_URL, headers=dict(_JSON)),
            RequestSpec(url=PRESETS_URL, headers=dict(_JSON))]


def _with_page(url: str, page: int) -> str:
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    query["page"] = str(page)
    return urlunsplit(parts._replace(query=urlencode(query)))


def follow(capture: Capture) -> list[RequestSpec]:
    """The next locations page while the answer says `has_next` (pages counted from 1)."""
    if not capture.url.startswith(LOCATIONS_URL) or json_field(capture, "has_next") is not True:
        return []
    current = parse_qs(urlsplit(capture.url).query).get("page", ["1"])[-1]
    page = int(current) + 1 if current.isdigit() else 2
    return [RequestSpec(url=_with_page(capture.url, page), headers=dict(_JSON))]
