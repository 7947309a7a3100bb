"""Latitude.sh: bare-metal plans from the pricing page's Next.js flight data, USD per node-hour
per region (BRL beside it)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="latitude",
    name="Latitude.sh",
    kind="gpu_cloud",
    # Latitude.sh rents its own bare-metal servers from its own locations (Sao Paulo, Dallas,
    # Tokyo, London ... : the plans' `locations`; ../shared/PROVIDERS_MORE2.md, Latitude.sh).
    supply="own",
    source="gpuprices.spiders.providers.latitude.source",
    parser="gpuprices.spiders.providers.latitude.parser",
    wayback_urls=(
        "https://www.latitude.sh/pricing",
        "https://www.latitude.sh/accelerate/pricing",
    ),
    # Each row prices a whole server (1x or 8x GPUs) as sold: no node shapes needed.
)
