"""GMI Cloud: the pricing page's GPU cards (USD "from" floors) and the public datacenter roster."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="gmicloud",
    name="GMI Cloud",
    kind="gpu_cloud",
    # GMI runs its own GPU clusters in its own datacenters (US, Taiwan, Singapore, Japan: the
    # public roster console.gmicloud.ai/api/v1/idcs; ../shared/PROVIDERS_MORE2.md, GMI Cloud).
    supply="own",
    source="gpuprices.spiders.providers.gmicloud.source",
    parser="gpuprices.spiders.providers.gmicloud.parser",
    wayback_urls=(
        "https://www.gmicloud.ai/en/pricing",
        "https://www.gmicloud.ai/pricing",  # redirects by locale today
    ),
    # Each card prices one GPU-hour with no node size printed: no node shapes claimed.
)
