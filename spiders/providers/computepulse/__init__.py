"""Compute Pulse: a public GPU price index (listings of other clouds' offers) and a board of
seller-declared capacity classifieds, both keyless JSON APIs."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="computepulse",
    name="Compute Pulse",
    kind="gpu_cloud",
    # Compute Pulse sells nothing itself: every listing row names the cloud that sells it
    # (`provider`: Vast.ai, Verda, Scaleway, Cyfuture AI...) and links its source page, and the
    # supply board carries sellers' own classifieds (../shared/PROVIDERS_MORE2.md, Compute
    # Pulse). Each row keeps that seller (extra.underlying) and is not counted twice when we
    # read the seller first-party (spiders/resold.py).
    supply="aggregator",
    source="gpuprices.spiders.providers.computepulse.source",
    parser="gpuprices.spiders.providers.computepulse.parser",
    parser_helpers=("gpuprices.spiders.providers.computepulse.supply",),
    wayback_urls=(
        "https://compute-pulse.com/",
        "https://compute-pulse.com/supply",
        "https://compute-pulse.com/gpu/nvidia-h100",
    ),
    # Listings price one GPU of an N-GPU listing (price_per_gpu_hour) with its gpu_count: no
    # node shapes.
)
