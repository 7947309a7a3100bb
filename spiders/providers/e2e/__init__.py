"""E2E Networks: the USD GPU table of the public pricing page (?region=us), with the INR list
prices of the page's JSON-LD kept beside each on-demand row and cross-checked at ECB rates."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="e2e",
    name="E2E Networks",
    kind="gpu_cloud",
    # An Indian cloud running its own data centres (e2enetworks.com: GPUs "in Indian data
    # centers"; shared PROVIDERS_MORE2.md), one price list per GPU: not a marketplace.
    supply="own",
    source="gpuprices.spiders.providers.e2e.source",
    parser="gpuprices.spiders.providers.e2e.parser",
    # The INR cross-check (INR JSON-LD price -> USD at the ECB rate of the day, spiders/fx.py).
    parser_helpers=("gpuprices.spiders.providers.e2e.inr_check",),
    # Each row is one GPU's price (the page's footnote: "Prices are per GPU-hour"); the page's
    # 1x/2x/4x/8x control multiplies it: no node shapes needed for a per-GPU instance.
    wayback_urls=(
        "https://www.e2enetworks.com/pricing?region=us",
        "https://www.e2enetworks.com/pricing",
    ),
)
