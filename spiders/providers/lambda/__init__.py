"""Lambda: the public pricing page. (`lambda` is a Python keyword: this package is imported with
`importlib.import_module("gpuprices.spiders.providers.lambda")`, as the registry does.)"""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="lambda",
    name="Lambda",
    kind="gpu_cloud",
    supply="own",
    source="gpuprices.spiders.providers.lambda.source",
    parser="gpuprices.spiders.providers.lambda.parser",
    # Each row prices one instance shape (1x..8x), so no per-GPU node shapes are needed.
    wayback_urls=(
        "https://lambda.ai/pricing",  # 2025+ (tabs per GPU count)
        "https://lambda.ai/service/gpu-cloud",  # 2024-25 after the move to lambda.ai
        "https://lambda.ai/instances",
        "https://lambdalabs.com/service/gpu-cloud",  # 2023-24 plain table
        "https://lambdalabs.com/service/gpu-cloud/pricing",  # "(and /pricing)": docs/providers.md
    ),
)
