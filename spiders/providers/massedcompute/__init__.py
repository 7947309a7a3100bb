"""Massed Compute: the VM pricing page's Next.js RSC rows, USD per VM-hour."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="massedcompute",
    name="Massed Compute",
    kind="gpu_cloud",
    # A US operator renting VMs on its own fleet from one price list (Tier III data centre, SOC 2;
    # ../shared/PROVIDERS_MORE2.md, "Who sells what": own fleet, marketplace-style book). One
    # price per VM shape, not many hosts' prices: `own`, not `marketplace`.
    supply="own",
    source="gpuprices.spiders.providers.massedcompute.source",
    parser="gpuprices.spiders.providers.massedcompute.parser",
    wayback_urls=(
        "https://vm.massedcompute.com/pricing",
        "https://massedcompute.com/pricing/",
    ),
    # Each row prices a VM of 1 to 8 GPUs as sold: no node shapes needed.
)
