"""Azure: the Retail Prices API, N-series filter (docs/azure-gcp.md)."""

from spiders.registry import Provider

PROVIDER = Provider(
    id="azure",
    name="Azure",
    kind="hyperscaler",
    supply="own",
    source="spiders.providers.azure.source",
    parser="spiders.providers.azure.parser",
    history="spiders.providers.azure.history",
    tables=("skus.csv", "unmapped.csv"),  # size -> GPU model, count, memory; known gaps
    wayback_urls=(
        # The Retail Prices API is only useful filtered and paged; Wayback holds at most some
        # unfiltered first pages. Listed for completeness: expect few or no GPU rows.
        "https://prices.azure.com/api/retail/prices",
    ),
)
