"""Google Cloud: the GPU pricing page, or the Cloud Billing Catalog API with a key
(docs/azure-gcp.md)."""

from spiders.registry import Provider

PROVIDER = Provider(
    id="gcp",
    name="Google Cloud",
    kind="hyperscaler",
    supply="own",
    source="spiders.providers.gcp.source",
    parser="spiders.providers.gcp.parser",
    parser_helpers=("spiders.providers.gcp.billing", "spiders.providers.gcp.machines"),
    history="spiders.providers.gcp.history",
    tables=("machines.csv",),  # machine type -> GPU model, count, memory
    wayback_urls=(
        # Server-rendered tables (us-central1 by default; the region picker is client-side).
        "https://cloud.google.com/compute/gpus-pricing",
        "https://cloud.google.com/compute/vm-instance-pricing",
        "https://cloud.google.com/spot-vms/pricing",
        "https://cloud.google.com/products/compute/pricing/accelerator-optimized",
    ),
)
