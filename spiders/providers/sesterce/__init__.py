"""Sesterce: the homepage's live-offers table ("From" floors per GPU) and the console's offers
book, capacity of upstream clouds booked through Sesterce."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="sesterce",
    name="Sesterce",
    kind="gpu_cloud",
    # The console's book lists each offer with the upstream cloud that runs it, under
    # anonymised labels (`cloud.name` "AZ_02", "AZ_22"), several clouds per GPU at different
    # prices (../shared/PROVIDERS_MORE2.md, Sesterce console): an aggregator of other clouds'
    # machines whose clouds are not named, so no row can say which first-party offer it repeats.
    supply="aggregator",
    source="gpuprices.spiders.providers.sesterce.source",
    parser="gpuprices.spiders.providers.sesterce.parser",
    parser_helpers=("gpuprices.spiders.providers.sesterce.console",),
    wayback_urls=(
        "https://www.sesterce.com/",
        "https://cloud.sesterce.com/compute",
    ),
    # Console offers are priced whole (gpuCount GPUs); homepage floors are per GPU and say no
    # node size: no node shapes.
)
