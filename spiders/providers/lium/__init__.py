"""Lium (Bittensor subnet 51): the public machine book, a marketplace of miners' GPU servers."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="lium",
    name="Lium",
    kind="gpu_cloud",
    # Lium is Bittensor subnet 51: independent miners list their own machines at their own
    # prices (`miner_hotkey`, `price_per_gpu` set per machine in the executors book;
    # ../shared/PROVIDERS_MORE2.md, "Who sells what": marketplace of third-party hosts).
    supply="marketplace",
    source="gpuprices.spiders.providers.lium.source",
    parser="gpuprices.spiders.providers.lium.parser",
    wayback_urls=(
        # The book is an API answer; the Wayback Machine holds the site's shell at best.
        "https://lium.io/",
        "https://lium.io/api/executors",
    ),
    # Each summary row prices an N-GPU machine as listed (gpu_count = gpu_count): no node shapes.
    # Hourly: miners list and reprice their executors at will, and rented ones leave the list
    # (docs/providers.md, "Crawl cadence"); one API answer per crawl.
    cadence="hourly",
)
