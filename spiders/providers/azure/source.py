"""Azure fetch plan: the keyless Retail Prices API, GPU (N-series) VM meters, all regions.

One query per N-series family prefix (NC, ND, NG, NV; NCC is inside NC) keeps each chain of
`NextPageLink` pages short, which matters because the API pages with `$skip` and is not
snapshot-consistent across a long chain (docs/providers.md). `contains()` on `armSkuName` is the
OData function the API accepts in `$filter` (gpuhunt's azure provider filters with contains()).
All price types are fetched (Consumption incl. Spot/Low Priority, Reservation, DevTest) and
Windows rows too: the parser decides what is an offer, the archive keeps what Azure said.
`api-version=2023-01-01-preview` adds the `savingsPlan` list to items (kept in the archive).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.sources import RequestSpec, json_field

API = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
FAMILIES = ("Standard_NC", "Standard_ND", "Standard_NG", "Standard_NV")


def filter_for(prefix: str) -> str:
    return f"serviceName eq 'Virtual Machines' and contains(armSkuName, '{prefix}')"


def url_for(prefix: str) -> str:
    return f"{API}?api-version={API_VERSION}&$filter={quote(filter_for(prefix), safe='')}"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [
        RequestSpec(url=url_for(p), headers={"Accept": "application/json"},
                    meta={"family": p})
        for p in FAMILIES
    ]


def follow(capture: Capture) -> list[RequestSpec]:
    """The next page while the response names one (`NextPageLink` absent or null at the end)."""
    nxt = json_field(capture, "NextPageLink")
    if not nxt:
        return []
    return [RequestSpec(url=str(nxt), headers={"Accept": "application/json"})]
