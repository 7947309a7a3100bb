"""DeepInfra: the "Custom LLMs" GPU table of the public pricing page (USD per GPU-hour of a
dedicated inference deployment; the per-token model tables are not GPU rental)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="deepinfra",
    name="DeepInfra",
    # An inference host: its GPU hours run the buyer's own model as a dedicated deployment on
    # DeepInfra's serving stack (deepinfra.com/docs/advanced/custom_llms: a deployment fixes
    # model_name, gpu type, num_gpus, max_batch_size; "you pay per GPU/hours your model is up"),
    # not a VM with root access and not a multi-node training cluster.
    kind="inference_host",
    # Runs the hardware it sells under its own price list (one price per GPU type, no hosts).
    supply="own",
    source="gpuprices.spiders.providers.deepinfra.source",
    parser="gpuprices.spiders.providers.deepinfra.parser",
    wayback_urls=("https://deepinfra.com/pricing",),
    note=("GPU-hour rows are Custom LLMs: a dedicated deployment of your own model for "
          "inference, billed by the minute; no root VM, no multi-node training. Its per-token "
          "model prices ($ per 1M tokens) are inference APIs and never GPU-hour rows."),
)
