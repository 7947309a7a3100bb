"""Shadeform: the homepage's embedded instance-types book, a marketplace of other clouds'
instances (Lambda, Hyperstack, Verda, Crusoe...) bookable through one account."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="shadeform",
    name="Shadeform",
    kind="gpu_cloud",
    # Every instance type names the cloud that runs it (`cloud`: lambdalabs, hyperstack,
    # verda...; ../shared/PROVIDERS_MORE2.md, Shadeform): Shadeform lists and books other
    # clouds' machines. Each row keeps that cloud (extra.underlying) and is not counted twice
    # when we read the cloud first-party (spiders/resold.py).
    supply="aggregator",
    source="gpuprices.spiders.providers.shadeform.source",
    parser="gpuprices.spiders.providers.shadeform.parser",
    wayback_urls=(
        "https://www.shadeform.ai/",
        "https://shadeform.com/",
        "https://www.shadeform.com/",
    ),
    # Each instance type is priced whole (num_gpus GPUs): no node shapes.
)
