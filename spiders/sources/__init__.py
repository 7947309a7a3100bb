"""Sources: the request a fetch plan asks for, shared by every provider and the ECB rates.

A provider's fetch plan is `spiders/providers/<id>/source.py` (found through
`gpuprices.spiders.registry.source_for`); the ECB's is `spiders/sources/ecb.py` (not a provider).
It exposes

- `start_requests(env: Mapping[str, str]) -> list[RequestSpec]`: the first requests of a live
  crawl (env is os.environ, for optional API keys);
- optionally `follow(capture: Capture) -> list[RequestSpec]`: further requests read off a fetched
  response (pagination such as Azure's NextPageLink or GCP's nextPageToken, links in an index).

The generic Scrapy spider in `spiders/crawl.py` runs them, archives every response before
anything parses it, and never needs to know a provider's details. Keeping the fetch plan as plain
data means it is testable without a network or a reactor.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuprices.spiders.archive import Capture


@dataclass(frozen=True)
class RequestSpec:
    url: str
    method: str = "GET"
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    browser: bool = False  # render in headless Chromium (scrapy-playwright); archive the DOM
    max_bytes: int | None = None  # override of the response size bound (huge AWS offer files)
    meta: dict[str, Any] = field(default_factory=dict)


def json_field(capture: Capture, key: str) -> Any:
    """`key` of a fetched answer's JSON object, what a `follow` reads the next page off; None
    when the fetch failed (status not 200), the body is not JSON, or not an object."""
    if capture.status != 200:
        return None
    try:
        data = json.loads(capture.body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data.get(key) if isinstance(data, dict) else None
