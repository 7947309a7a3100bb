"""Voltage Park: the dashboard's keyless API (bare-metal locations per GPU-hour, VM presets per
instance-hour)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="voltagepark",
    name="Voltage Park",
    kind="gpu_cloud",
    # Voltage Park owns its H100 fleet (voltagepark.com: "24,000+ NVIDIA H100 GPUs" in its own
    # data-centre deployments) and rents it under one price list; not a marketplace.
    supply="own",
    source="gpuprices.spiders.providers.voltagepark.source",
    parser="gpuprices.spiders.providers.voltagepark.parser",
    # Rows price whole nodes and VMs (8-GPU bare-metal nodes, 1/2/4/8-GPU presets): no shapes.
    wayback_urls=(
        "https://cloud-api.voltagepark.com/api/v1/bare-metal/locations",
        "https://cloud-api.voltagepark.com/api/v1/instant-deploy-presets/",
        "https://www.voltagepark.com/pricing",  # marketing page: "Contact for pricing", no figures
    ),
)
