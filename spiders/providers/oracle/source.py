"""Oracle fetch plan: `GET https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/
?currencyCode=USD`, no key. It is the list that fills oracle.com/cloud/compute/pricing (whose
price cells are empty placeholders keyed by part number). Only `currencyCode` and `partNumber`
filter on the server; without `currencyCode` the answer is a ~2.8 MB list in every currency, so
the plan asks for USD only (../shared/PROVIDERS_MORE.md, Oracle). One answer, no paging."""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PRODUCTS_URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=PRODUCTS_URL, headers={"Accept": "application/json"})]
