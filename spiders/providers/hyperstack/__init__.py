"""Hyperstack: the public GPU pricing page (USD per GPU-hour; on-demand, reservation, spot)."""

from gpuprices.spiders.registry import NodeShapes, Provider

PROVIDER = Provider(
    id="hyperstack",
    name="Hyperstack",
    kind="gpu_cloud",
    # Hyperstack is NexGen Cloud's GPU cloud: NexGen Cloud owns the GPUs and runs them in its
    # European and North American data centres (hyperstack.cloud, "About": operated by
    # NexGen Cloud), one price list; not a marketplace.
    supply="own",
    source="gpuprices.spiders.providers.hyperstack.source",
    parser="gpuprices.spiders.providers.hyperstack.parser",
    wayback_urls=(
        "https://www.hyperstack.cloud/gpu-pricing",
        "https://www.hyperstack.cloud/pricing",
    ),
    node_shapes=NodeShapes(
        (1, 2, 4, 8),
        "Hyperstack prices per GPU-hour and sells VM flavors of 1, 2, 4 and 8 GPUs of one type "
        "(Hyperstack docs, Flavors: n3-H100x1 ... n3-H100x8, n3-A100x1 ... n3-A100x8)",
    ),
)
