"""Together AI: the GPU Clusters prices on the public pricing page (USD per GPU-hour)."""

from gpuprices.spiders.registry import NodeShapes, Provider

PROVIDER = Provider(
    id="together",
    name="Together AI",
    kind="gpu_cloud",
    # Together operates its own GPU clusters (together.ai/gpu-clusters: "Together GPU Clusters",
    # hardware it deploys and runs in colocation data centres, as Lambda does) and sells them
    # under its own price list, one price per GPU model and term: not a marketplace of hosts.
    supply="own",
    source="gpuprices.spiders.providers.together.source",
    parser="gpuprices.spiders.providers.together.parser",
    wayback_urls=(
        "https://www.together.ai/pricing",
        "https://www.together.ai/gpu-clusters",
    ),
    node_shapes=NodeShapes(
        (8,),
        "Together prices per GPU-hour ('All prices are per GPU per hour', together.ai/pricing, "
        "GPU Clusters) for NVIDIA HGX H100/H200/B200 systems, which carry 8 GPUs each (NVIDIA "
        "HGX platform page): a cluster is bought in whole 8-GPU nodes",
    ),
)
