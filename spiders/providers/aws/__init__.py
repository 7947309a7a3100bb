"""AWS EC2: Price List offer files, the page and spot feeds, the spot advisor (docs/aws.md)."""

from gpuprices.spiders.registry import Provider

PROVIDER = Provider(
    id="aws",
    name="AWS",
    kind="hyperscaler",
    supply="own",
    source="gpuprices.spiders.providers.aws.source",
    parser="gpuprices.spiders.providers.aws.parser",
    parser_helpers=("gpuprices.spiders.providers.aws.offer_file",
                    "gpuprices.spiders.providers.aws.offer_stream",
                    "gpuprices.spiders.providers.aws.offer_csv",
                    "gpuprices.spiders.providers.aws.tables"),
    history="gpuprices.spiders.providers.aws.history",
    tables=("instances.csv",),  # instance type -> GPU model, count, memory
    wayback_urls=(
        # The EC2 pricing page is filled in by JavaScript from these feeds; the Bulk API offer
        # files (hundreds of MB) are backfilled from AWS's own version index, not from Wayback.
        "https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/"
        "ec2-ondemand-without-sec-sel/US%20East%20(N.%20Virginia)/Linux/index.json",
        "https://website.spot.ec2.aws.a2z.com/spot.json",  # spot prices, current feed
        "http://spot-price.s3.amazonaws.com/spot.js",  # legacy JSONP feed, frozen 2024-05-13
    ),
    # Daily although it holds the spot feed: the same crawl fetches every region's on-demand offer
    # file (hundreds of MB each), which an hourly cadence would fetch 24 times a day for list
    # prices that change by announcement (docs/providers.md, "Crawl cadence").
    cadence="daily",
)
