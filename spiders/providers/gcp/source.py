"""Google Cloud fetch plan.

Without a key: the public GPU pricing page (machine-type tables, served HTML, us-central1; the
region picker is client-side so other regions need the API).
With GOOGLE_CLOUD_API_KEY: the Cloud Billing Catalog API SKU list of Compute Engine (service
6F81-5844-456A), 5000 SKUs per page, following nextPageToken. The key is NEVER put in the URL:
it travels in RequestSpec.meta["secret_params"] and the crawler appends it at request time, so
archived URLs, logs and ParseErrors only ever show the key-less URL.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import quote

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.sources import RequestSpec, json_field

PAGE = "https://cloud.google.com/compute/gpus-pricing"
SKUS = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus"
PAGE_SIZE = 5000  # the API's maximum pageSize
KEY_ENV = "GOOGLE_CLOUD_API_KEY"


def _sku_request(key: str, token: str | None = None) -> RequestSpec:
    url = f"{SKUS}?pageSize={PAGE_SIZE}&currencyCode=USD"
    if token:
        url += f"&pageToken={quote(token, safe='')}"
    return RequestSpec(url=url, headers={"Accept": "application/json"},
                       meta={"secret_params": {"key": key}})


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    key = (env.get(KEY_ENV) or "").strip()
    if key:
        return [_sku_request(key)]
    return [RequestSpec(url=PAGE)]


def follow(capture: Capture, env: Mapping[str, str] | None = None) -> list[RequestSpec]:
    """The next SKU page while the response carries a non-empty nextPageToken. The key is read
    again from the environment: it is never stored with the capture."""
    token = json_field(capture, "nextPageToken") if capture.url.startswith(SKUS) else None
    if not token:
        return []
    key = ((env if env is not None else os.environ).get(KEY_ENV) or "").strip()
    return [_sku_request(key, str(token))] if key else []
