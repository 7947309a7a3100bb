"""Vast.ai: the public offer search (bundles API), a marketplace of independent hosts."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="vast",
    name="Vast.ai",
    kind="gpu_cloud",
    # "Vast.ai is a marketplace for renting GPU compute": hosts list their own machines at their
    # own prices (docs.vast.ai, "Overview" and "Hosting > Overview").
    supply="marketplace",
    source="gpuprices.spiders.providers.vast.source",
    parser="gpuprices.spiders.providers.vast.parser",
    wayback_urls=(
        # The offer list is an API answer rendered by the console; the Wayback Machine holds the
        # console's shell and the public pricing page, not the book.
        "https://vast.ai/pricing",
        "https://console.vast.ai/create/",
    ),
    # Each summary row prices an N-GPU listing as listed (gpu_count = num_gpus): no node shapes.
    # Hourly: hosts set and change their own prices and machines are rented out within hours,
    # so the offer book moves within the day (docs/providers.md, "Crawl cadence"); one API call.
    cadence="hourly",
)
