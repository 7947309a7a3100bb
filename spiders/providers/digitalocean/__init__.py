"""DigitalOcean: the GPU Droplet price tables of its docs pricing page (USD per Droplet-hour)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="digitalocean",
    name="DigitalOcean",
    # A general-purpose cloud (Droplets, databases, storage, Kubernetes, App Platform on
    # digitalocean.com/pricing) that sells GPUs among its other products.
    kind="hyperscaler",
    # GPU Droplets run in DigitalOcean's own data-centre regions (docs.digitalocean.com,
    # Droplets > GPU Droplets: availability per datacenter region, e.g. NYC2, TOR1, ATL1).
    supply="own",
    source="gpuprices.spiders.providers.digitalocean.source",
    parser="gpuprices.spiders.providers.digitalocean.parser",
    # Each row prices a whole Droplet (1 GPU, or "(8x)" = 8 GPUs): no node shapes needed.
    wayback_urls=(
        "https://docs.digitalocean.com/products/droplets/details/pricing/",
        "https://www.digitalocean.com/pricing/gpu-droplets",  # marketing page (JS-heavy)
    ),
)
