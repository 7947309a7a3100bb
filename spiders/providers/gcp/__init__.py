"""Google Cloud: the GPU pricing page, or the Cloud Billing Catalog API with a key
(docs/azure-gcp.md)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="gcp",
    name="Google Cloud",
    kind="hyperscaler",
    supply="own",
    source="gpuprices.spiders.providers.gcp.source",
    parser="gpuprices.spiders.providers.gcp.parser",
    parser_helpers=("gpuprices.spiders.providers.gcp.billing",
                    "gpuprices.spiders.providers.gcp.machines"),
    history="gpuprices.spiders.providers.gcp.history",
    tables=("machines.csv",),  # machine type -> GPU model, count, memory
    wayback_urls=(
        # Server-rendered tables (us-central1 by default; the region picker is client-side).
        "https://cloud.google.com/compute/gpus-pricing",
        "https://cloud.google.com/compute/vm-instance-pricing",
        "https://cloud.google.com/spot-vms/pricing",
        "https://cloud.google.com/products/compute/pricing/accelerator-optimized",
    ),
    # Daily: Spot VM prices "can change up to once every 30 days" (cloud.google.com/compute/
    # docs/instances/spot, "Pricing"), and the rest are list prices (docs/providers.md,
    # "Crawl cadence").
    cadence="daily",
)
