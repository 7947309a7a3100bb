"""Shadeform fetch plan: the homepage `GET https://shadeform.com/`, which embeds the whole
instance-types book (about 276 entries) in its server-rendered React-Query state; no key, no
paging. When the apex answers an error, `follow` asks `https://www.shadeform.com/`, the
fallback host (../shared/PROVIDERS_MORE2.md, Shadeform)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.sources import RequestSpec

HOME_URL = "https://shadeform.com/"
FALLBACK_URL = "https://www.shadeform.com/"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=HOME_URL)]


def follow(capture: Capture) -> list[RequestSpec]:
    if capture.url == HOME_URL and capture.status != 200:
        return [RequestSpec(url=FALLBACK_URL)]
    return []
