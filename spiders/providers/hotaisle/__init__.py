"""Hot Aisle: the public pricing page (AMD MI300X, USD per GPU-hour per plan card)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="hotaisle",
    name="Hot Aisle",
    kind="gpu_cloud",
    # Hot Aisle owns and operates its AMD MI300X servers (hotaisle.xyz: its own clusters,
    # "Dedicated full-node access" for bare metal on the pricing page), one price list.
    supply="own",
    source="gpuprices.spiders.providers.hotaisle.source",
    parser="gpuprices.spiders.providers.hotaisle.parser",
    # Each row prices one plan's whole VM or node (1x, 2x, 4x, 8x), so no node shapes needed.
    wayback_urls=(
        "https://hotaisle.xyz/pricing",
        "https://hotaisle.xyz/compute",  # earlier compute/pricing overview
    ),
)
