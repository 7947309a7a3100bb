"""The provider ids and pricing models the offer contract allows, without the contract's pyarrow
schema: the command line and the sizing tables check a name against them, and importing pyarrow
(about 0.2 s) for a tuple of strings is what every `gpuprices` command paid before
(bench/cli_startup.py). gpuprices.warehouse.contract re-exports both."""

PROVIDERS = ("aws", "gcp", "azure", "runpod", "lambda", "coreweave", "nebius", "crusoe",
             "vast", "hyperbolic", "oracle", "scaleway", "together",
             "verda", "hyperstack", "hotaisle", "voltagepark", "digitalocean",
             "civo", "deepinfra", "e2e", "fal", "tensorpool",
             "computepulse", "gpuai", "sesterce", "shadeform",
             "gmicloud", "latitude", "lium", "massedcompute")
PRICING_MODELS = ("on_demand", "spot", "reserved", "committed", "community")
