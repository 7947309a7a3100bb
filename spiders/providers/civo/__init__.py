"""Civo: the GPU tables of the public pricing page (USD per instance-hour, on-demand and
6/12/24/36-month commitments)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="civo",
    name="Civo",
    kind="gpu_cloud",
    # Civo runs its own cloud regions and hardware (civo.com/pricing: "launch NVIDIA GPUs on our
    # Compute and Kubernetes services"; shared PROVIDERS_MORE2.md, "Civo owns its clouds"), one
    # price list for every size: not a marketplace of hosts.
    supply="own",
    source="gpuprices.spiders.providers.civo.source",
    parser="gpuprices.spiders.providers.civo.parser",
    # Each row prices a whole instance of 1, 2, 4 or 8 GPUs: no node shapes needed.
    wayback_urls=("https://www.civo.com/pricing",),
)
