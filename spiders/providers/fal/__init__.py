"""fal: the serverless GPU table of the public pricing page (USD per GPU-hour for the buyer's own
app on fal's serverless runtime; the per-output model-API tables are not GPU rental)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="fal",
    name="fal",
    # An inference host: the GPU hours run the buyer's own app as a serverless fal.App
    # (docs.fal.ai/private-serverless-models: machine_type + num_gpus per app, scaled by fal),
    # billed per second; no VM with root access, no multi-node training cluster.
    kind="inference_host",
    # fal sells its own GPU fleet under one list price per GPU ("our competitively priced GPU
    # fleet", fal.ai/pricing): not a marketplace of hosts.
    supply="own",
    source="gpuprices.spiders.providers.fal.source",
    parser="gpuprices.spiders.providers.fal.parser",
    wayback_urls=("https://fal.ai/pricing",),
    note=("GPU-hour rows are serverless compute for your own app (fal.App), billed per second; "
          "no root VM, no multi-node training. 'As low as' prices are contact-sales floors kept "
          "in extra, never rows; per-second-of-video and per-image model prices are never "
          "GPU-hour rows."),
)
