"""Crusoe: the public cloud pricing page (per GPU-hour)."""

from gpuprices.spiders.registry import NodeShapes, Provider

PROVIDER = Provider(
    id="crusoe",
    name="Crusoe",
    kind="gpu_cloud",
    supply="own",
    source="gpuprices.spiders.providers.crusoe.source",
    parser="gpuprices.spiders.providers.crusoe.parser",
    wayback_urls=(
        "https://www.crusoe.ai/cloud/pricing",  # late 2025+ cards
        "https://crusoe.ai/cloud/pricing",  # to mid-2025 table (same CDX key as www.)
        "https://crusoecloud.com/pricing",  # former domain
    ),
    node_shapes=NodeShapes(
        (1, 2, 4, 8),
        "Crusoe prices per GPU-hour; VM types come as 1x, 2x, 4x and 8x GPU shapes, e.g. "
        "h100-80gb-sxm-ib.8x (docs.crusoecloud.com, Compute > VM types)",
    ),
)
