"""Azure: the Retail Prices API, N-series filter (docs/azure-gcp.md)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="azure",
    name="Azure",
    kind="hyperscaler",
    supply="own",
    source="gpuprices.spiders.providers.azure.source",
    parser="gpuprices.spiders.providers.azure.parser",
    history="gpuprices.spiders.providers.azure.history",
    tables=("skus.csv", "unmapped.csv"),  # size -> GPU model, count, memory; known gaps
    wayback_urls=(
        # The Retail Prices API is only useful filtered and paged; Wayback holds at most some
        # unfiltered first pages. Listed for completeness: expect few or no GPU rows.
        "https://prices.azure.com/api/retail/prices",
    ),
    # Hourly: "Pricing for Azure Spot Virtual Machines is variable, based on region and SKU"
    # (learn.microsoft.com, "Use a template to deploy Azure Spot Virtual Machines"), and the plan
    # asks only GPU meters (four filtered queries and their pages), so an hourly crawl is cheap
    # (docs/providers.md, "Crawl cadence").
    cadence="hourly",
)
