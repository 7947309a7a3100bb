"""TensorPool: its own column of the public pricing page (USD per GPU-hour, on-demand)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="tensorpool",
    name="TensorPool",
    kind="gpu_cloud",
    # A GPU cloud selling its own on-demand capacity under one price per GPU type
    # (tensorpool.dev/pricing, its column beside Lambda's and the hyperscalers'; shared
    # PROVIDERS_MORE2.md "Cloud renting its own GPUs by the hour").
    supply="own",
    source="gpuprices.spiders.providers.tensorpool.source",
    parser="gpuprices.spiders.providers.tensorpool.parser",
    wayback_urls=("https://tensorpool.dev/pricing",),
)
