"""Runpod: GraphQL API and the public pricing page (per GPU-hour)."""

from gpuprices.spiders.registry import NodeShapes, Provider

PROVIDER = Provider(
    id="runpod",
    name="Runpod",
    kind="gpu_cloud",
    # Runpod's docs: Secure Cloud runs "in T3/T4 data centers operated by trusted partners",
    # Community Cloud on vetted individual hosts, both under Runpod's one price list
    # (https://docs.runpod.io/pods/choose-a-pod, "Secure Cloud vs Community Cloud").
    supply="reseller",
    source="gpuprices.spiders.providers.runpod.source",
    parser="gpuprices.spiders.providers.runpod.parser",
    wayback_urls=(
        "https://www.runpod.io/pricing",  # 2025+ (Webflow attributes, then JSON-LD)
        "https://www.runpod.io/gpu-instance/pricing",  # 2023-24 (Next.js __NEXT_DATA__)
        # The GraphQL API is a POST: the Wayback Machine does not hold its answers.
    ),
    node_shapes=NodeShapes(
        (1, 2, 4, 8),
        "Runpod prices are per GPU-hour and a Pod takes 1 to 8 GPUs of one type (docs.runpod.io, "
        "Pods > Choose a Pod: GPU count); an 8-GPU Pod costs 8 x the listed price",
    ),
)
