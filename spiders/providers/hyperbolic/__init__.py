"""Hyperbolic: the anonymous on-demand rental-options API, a marketplace of suppliers' machines."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="hyperbolic",
    name="Hyperbolic",
    kind="gpu_cloud",
    # Hyperbolic rents suppliers' machines on its GPU marketplace: the rental-options answer
    # names each option's supplier cost beside the customer price (providerCostPerHourCents,
    # ../shared/PROVIDERS_MORE.md, Hyperbolic), and one GPU model is offered at different
    # prices by region and machine.
    supply="marketplace",
    source="gpuprices.spiders.providers.hyperbolic.source",
    parser="gpuprices.spiders.providers.hyperbolic.parser",
    wayback_urls=(
        "https://app.hyperbolic.ai/rent",  # the logged-out GPU page that calls the API
        "https://hyperbolic.ai/pricing",
    ),
    # Each option is priced whole (gpuCount GPUs): no node shapes.
    # Hourly: a marketplace of suppliers' machines whose listings and prices move within the
    # day (docs/providers.md, "Crawl cadence"); one small API answer per crawl.
    cadence="hourly",
)
