"""Scaleway: the keyless Instance API product catalog (EUR per node-hour)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="scaleway",
    name="Scaleway",
    kind="gpu_cloud",
    # Scaleway (Iliad group) runs its own data centres in the Paris region and rents its own
    # Instance types from one price list (scaleway.com, "Data centers"; Instance API catalog).
    supply="own",
    source="gpuprices.spiders.providers.scaleway.source",
    parser="gpuprices.spiders.providers.scaleway.parser",
    wayback_urls=(
        "https://www.scaleway.com/en/pricing/gpu/",
        "https://www.scaleway.com/en/pricing/",
    ),
    # Each row prices one Instance type (node) as sold, 1 to 8 GPUs: no node shapes needed.
)
