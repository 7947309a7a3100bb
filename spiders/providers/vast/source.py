"""Vast.ai fetch plan: the offer search `GET https://console.vast.ai/api/v0/bundles/?q=<JSON>`,
which answers without an API key.

One query per GPU name, on-demand rentable offers ordered by `dph_total` ascending. The server
clamps a page (a `limit` of 400 returned 64 offers: ../shared/PROVIDERS_MORE.md, Vast.ai), and
ordering by `dph_total` ranks instances, not GPUs, so cheap-per-GPU 8x boxes sort last: when an
ascending page comes back full, `follow` asks for the same book in descending order, as the
recording project does (`h100_sxm_desc`). The parser merges the windows (one listing counted
once, by offer id).

Vast rate-limits anonymous bursts (HTTP 429): the crawler's autothrottle and per-domain limit
(spiders/crawl.py) space the requests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from urllib.parse import parse_qs, quote, urlsplit

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.sources import RequestSpec, json_field

BUNDLES_URL = "https://console.vast.ai/api/v0/bundles/"
# Offers asked for per page, as the recording project asked (PROVIDERS_MORE.md, Vast.ai; the
# archived URLs in snapshots/manifest.csv carry "limit":50). The server answers at most about 64
# whatever is asked, so 50 loses nothing a larger limit would reliably give.
LIMIT = 50

# Vast's own `gpu_name` spellings. Seen in recorded answers: "H100 SXM", "H200 NVL", "B300"
# (tests/fixtures/raw/vast/). The others follow the same spelling and are unconfirmed until a live
# night reads them: a name Vast does not know, or one with no rentable offer, answers an empty
# book, which the parser reports as that page's error naming the GPU name.
GPU_NAMES = (
    "H100 SXM", "H100 PCIE", "H100 NVL", "H200", "H200 NVL", "B200", "B300",
    "A100 SXM4", "A100 PCIE", "L40S", "RTX 4090", "RTX 5090",
)


def query(gpu_name: str, order: str = "asc") -> dict:
    """The search document, as the recording project sent it (PROVIDERS_MORE.md, Vast.ai)."""
    return {"gpu_name": {"eq": gpu_name}, "rentable": {"eq": True}, "type": "on-demand",
            "order": [["dph_total", order]], "limit": LIMIT}


def url_for(q: dict) -> str:
    return f"{BUNDLES_URL}?q={quote(json.dumps(q, separators=(',', ':')))}"


def query_of(url: str) -> dict | None:
    """The search document of a bundles URL, or None when it has none."""
    values = parse_qs(urlsplit(url).query).get("q")
    try:
        return json.loads(values[0]) if values else None
    except json.JSONDecodeError:
        return None


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=url_for(query(name)), headers={"Accept": "application/json"})
            for name in GPU_NAMES]


def follow(capture: Capture) -> list[RequestSpec]:
    """The descending window of a book whose ascending page came back full."""
    q = query_of(capture.url)
    if not q or q.get("order") != [["dph_total", "asc"]]:
        return []
    offers = json_field(capture, "offers")
    if not isinstance(offers, list) or len(offers) < LIMIT:
        return []
    desc = {**q, "order": [["dph_total", "desc"]]}
    return [RequestSpec(url=url_for(desc), headers={"Accept": "application/json"})]
