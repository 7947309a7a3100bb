"""Pagers: serve one archived listing as several pages, in the API's own paging convention, so
the crawler's pagination runs over real items. Synthetic only in where the pages break: every
item is a real archived one, each exactly once."""

from __future__ import annotations

import json
import urllib.parse

from gpuprices.spiders.archive import Capture
from tests.replay.server import Pager

AZURE_PRICES = "https://prices.azure.com/api/retail/prices"


def azure_pages(size: int) -> Pager:
    """Azure Retail Prices API paging: `{"Items": [...], "NextPageLink": <url with $skip> or
    null, "Count": n}` (learn.microsoft.com/rest/api/cost-management/retail-prices/
    azure-retail-prices: "the API returns 1000 records per page ... NextPageLink"). The link
    names the host with its port, as Azure's do."""

    def page(url: str, cap: Capture) -> bytes:
        data = json.loads(cap.body)
        items = data if isinstance(data, list) else data.get("Items", [])
        parts = urllib.parse.urlsplit(url)
        query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "$skip"]
        skip = int(dict(urllib.parse.parse_qsl(parts.query)).get("$skip", 0))
        chunk = items[skip:skip + size]
        nxt = None
        if skip + size < len(items):
            q = urllib.parse.urlencode([*query, ("$skip", str(skip + size))], safe="$'")
            nxt = f"https://prices.azure.com:443{parts.path}?{q}"
        return json.dumps({"BillingCurrency": "USD", "CustomerEntityId": "Default",
                           "CustomerEntityType": "Retail", "Items": chunk,
                           "NextPageLink": nxt, "Count": len(chunk)}).encode()

    return page
