"""Verda (formerly DataCrunch): the pricing page's JSON-LD offers (USD per N-GPU unit)."""

from gpuprices.spiders.registry import NodeShapes, Provider

PROVIDER = Provider(
    id="verda",
    name="Verda",
    kind="gpu_cloud",
    # Verda (DataCrunch until 2025) owns and runs its GPU clusters in Nordic data centres and sells
    # them under one price list (verda.com, company and data-centre pages); not a marketplace.
    supply="own",
    source="gpuprices.spiders.providers.verda.source",
    parser="gpuprices.spiders.providers.verda.parser",
    wayback_urls=(
        "https://verda.com/pricing",  # 2026 (renamed from DataCrunch; JSON-LD offers)
        "https://datacrunch.io/products",  # DataCrunch's former price list
    ),
    node_shapes=NodeShapes(
        (1, 2, 4, 8),
        "Verda prices 1x instances per GPU and sells 1x, 2x, 4x and 8x instances of one GPU "
        "type (DataCrunch/Verda API instance types, e.g. 1H100.80S.30V ... 8H100.80S.176V)",
    ),
)
