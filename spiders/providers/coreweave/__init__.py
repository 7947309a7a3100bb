"""CoreWeave: the public pricing page (per instance, split per GPU)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="coreweave",
    name="CoreWeave",
    kind="gpu_cloud",
    supply="own",
    source="gpuprices.spiders.providers.coreweave.source",
    parser="gpuprices.spiders.providers.coreweave.parser",
    wayback_urls=(
        "https://www.coreweave.com/pricing",  # 2025+ per-instance prices
        "https://www.coreweave.com/gpu-cloud-pricing",  # 2023-24 GPU component prices
    ),
)
