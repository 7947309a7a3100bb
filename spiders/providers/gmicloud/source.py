"""GMI Cloud fetch plan: the English pricing page and the datacenter roster, both keyless.

- `https://www.gmicloud.ai/en/pricing`: server-rendered cards "NVIDIA <chip>" / "from $X.XX" /
  "/GPU-hour". Bare `/pricing` redirects by locale, so the `/en/` page is asked for. The host
  answers 403 to Python's default urllib User-Agent (../shared/PROVIDERS_MORE2.md, GMI Cloud);
  the crawler sends its own descriptive User-Agent (spiders/crawl.py USER_AGENT), never urllib's
  and never a browser's disguise: if GMI refuses it too, the night reports that page's 403.
- `https://console.gmicloud.ai/api/v1/idcs`: `{"idcs": [{country, countrySubdivision, idcId,
  name, status}]}`, no prices; the parser passes over it (`wants`) and `postprocess` names the
  countries of the datacenters that are `available` on every row of the day.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://www.gmicloud.ai/en/pricing"
IDCS_URL = "https://console.gmicloud.ai/api/v1/idcs"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [
        RequestSpec(url=PRICING_URL, headers={"Accept": "text/html,application/xhtml+xml"}),
        RequestSpec(url=IDCS_URL, headers={"Accept": "application/json"}),
    ]
