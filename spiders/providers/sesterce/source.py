"""Sesterce fetch plan: the homepage `GET https://www.sesterce.com/` (its #pricing table of
"From / GPU / hr" floors, cached about five minutes) and the console
`GET https://cloud.sesterce.com/compute`, which streams the whole offers book (82 offers) in its
flight data without a login (../shared/PROVIDERS_MORE2.md, Sesterce). No paging."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

HOME_URL = "https://www.sesterce.com/"
CONSOLE_URL = "https://cloud.sesterce.com/compute"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=HOME_URL), RequestSpec(url=CONSOLE_URL)]
