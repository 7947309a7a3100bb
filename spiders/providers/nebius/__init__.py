"""Nebius: the public prices page (per GPU-hour)."""

from gpuprices.spiders.registry import NodeShapes, Provider

PROVIDER = Provider(
    id="nebius",
    name="Nebius",
    kind="gpu_cloud",
    supply="own",
    source="gpuprices.spiders.providers.nebius.source",
    parser="gpuprices.spiders.providers.nebius.parser",
    wayback_urls=(
        "https://nebius.com/prices",  # 2024 cards + instance table; 2025-26 per-GPU tables
    ),
    node_shapes=NodeShapes(
        (1, 8),
        "Nebius prices per GPU-hour; GPU presets have 1 or 8 GPUs, e.g. 8gpu-128vcpu-1600gb "
        "(docs.nebius.com compute VM types; SkyPilot's Nebius catalog tests/fixtures-era vms.csv "
        "lists 1gpu and 8gpu presets; the 2024 page's 8 x H100 row = 8 x the 1-GPU price)",
    ),
)
