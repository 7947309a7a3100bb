"""GPU.ai: the public pricing API, a marketplace of secure and community hosts."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="gpuai",
    name="GPU.ai",
    kind="gpu_cloud",
    # GPU.ai lists hosts' offerings, "secure" and "community" capacity at different prices per
    # region and configuration (capacity_class / community, ../shared/PROVIDERS_MORE2.md,
    # GPU.ai); its rows do not name an upstream cloud, so none is kept.
    supply="marketplace",
    source="gpuprices.spiders.providers.gpuai.source",
    parser="gpuprices.spiders.providers.gpuai.parser",
    wayback_urls=(
        "https://gpu.ai/",
        "https://gpu.ai/pricing",
    ),
    # Each row prices a whole configuration of gpu_count GPUs: no node shapes.
    # Hourly: a marketplace whose hosts' listings come and go within the day (docs/providers.md,
    # "Crawl cadence").
    cadence="hourly",
)
