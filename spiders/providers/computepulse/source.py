"""Compute Pulse fetch plan: the listings API per GPU slug, paged, and the supply board.

`GET https://compute-pulse.com/api/listings?gpu=<slug>&sort=price_asc&limit=200&offset=N` (no
key; OpenAPI at https://compute-pulse.com/openapi.json). `limit` is at most 200; a book longer
than a page answers `page.next_offset`, which `follow` asks for (the H100 book held 1025 rows:
../shared/PROVIDERS_MORE2.md, Compute Pulse). The supply board is one page:
`GET https://compute-pulse.com/api/supply?intent=selling&include_ended=false&limit=200&offset=0`
(it takes no `sort`: the listings' sort names answer HTTP 400 there).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qs, urlencode, urlsplit

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.sources import RequestSpec, json_field

LISTINGS_URL = "https://compute-pulse.com/api/listings"
SUPPLY_URL = ("https://compute-pulse.com/api/supply?intent=selling&include_ended=false"
              "&limit=200&offset=0")
LIMIT = 200  # the API's cap per page (PROVIDERS_MORE2.md, Compute Pulse)

# GPU slugs as Compute Pulse spells them. Seen in recorded answers: nvidia-h100, nvidia-b300,
# nvidia-rtx-4090 (tests/fixtures/raw/computepulse/; amd-mi325x answered an empty book and is
# left out). The others follow the same spelling and are unconfirmed until a live night reads
# them: a slug the API does not know, or an empty book, is that page's error naming the slug.
SLUGS = ("nvidia-h100", "nvidia-h200", "nvidia-b200", "nvidia-b300", "nvidia-a100",
         "nvidia-l40s", "nvidia-rtx-4090")


def listings_url(slug: str, offset: int = 0) -> str:
    return f"{LISTINGS_URL}?" + urlencode(
        {"gpu": slug, "sort": "price_asc", "limit": LIMIT, "offset": offset})


def slug_of(url: str) -> str | None:
    values = parse_qs(urlsplit(url).query).get("gpu")
    return values[0] if values else None


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    heads = {"Accept": "application/json"}
    return ([RequestSpec(url=listings_url(s), headers=heads) for s in SLUGS]
            + [RequestSpec(url=SUPPLY_URL, headers=heads)])


def follow(capture: Capture) -> list[RequestSpec]:
    """The next page of a listings book, from the answer's `page.next_offset`."""
    slug = slug_of(capture.url)
    if not slug or not urlsplit(capture.url).path.endswith("/listings"):
        return []
    nxt = (json_field(capture, "page") or {}).get("next_offset")
    if not isinstance(nxt, int) or nxt <= 0:
        return []
    return [RequestSpec(url=listings_url(slug, nxt), headers={"Accept": "application/json"})]
