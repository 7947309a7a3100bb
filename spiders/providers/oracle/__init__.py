"""Oracle Cloud Infrastructure: the keyless price-list API behind oracle.com's compute pricing."""

from gpuprices.spiders.registry import NodeShapes, Provider

PROVIDER = Provider(
    id="oracle",
    name="Oracle Cloud (OCI)",
    kind="hyperscaler",
    # OCI runs its own regions ("Oracle Cloud Infrastructure ... regions", oracle.com/cloud/
    # public-cloud-regions) and prices GPUs on its own list.
    supply="own",
    source="gpuprices.spiders.providers.oracle.source",
    parser="gpuprices.spiders.providers.oracle.parser",
    tables=("chips.csv",),
    wayback_urls=(
        "https://www.oracle.com/cloud/compute/pricing/",  # page cells are filled from the API
        "https://www.oracle.com/cloud/price-list/",
        "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD",
    ),
    node_shapes=NodeShapes(
        (1, 2, 4, 8),
        "OCI prices GPUs per GPU-hour ('GPU Per Hour') and sells VM shapes of 1, 2 or 4 GPUs "
        "(VM.GPU.A10.1/.2, VM.GPU.L40S.1..4) and bare-metal shapes of 4 or 8 (BM.GPU.H100.8 "
        "costs 8 x the GPU price): docs.oracle.com, Compute > Compute Shapes > GPU Shapes",
    ),
)
