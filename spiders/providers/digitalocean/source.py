"""DigitalOcean fetch plan: the docs pricing page of Droplets.

https://docs.digitalocean.com/products/droplets/details/pricing/ is a Hugo page rendered on the
server, one `<table>` per GPU tier, no key. The marketing page
(www.digitalocean.com/pricing/gpu-droplets) mixes "12 Month Reserved Price" teasers into its
on-demand figures inside a JS-heavy blob, so it is not read. The docs host answers 403 to
Python's default urllib User-Agent (reported by the price index whose capture we ship); the
crawler sends its own descriptive User-Agent (spiders/crawl.py USER_AGENT), never urllib's.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRICING_URL = "https://docs.digitalocean.com/products/droplets/details/pricing/"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRICING_URL, headers={"Accept": "text/html,application/xhtml+xml"})]
