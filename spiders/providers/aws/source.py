"""What to fetch for AWS EC2 GPU prices (all public, no credentials).

- Price List bulk API: the AmazonEC2 region index, then each region's current offer file
  (hundreds of MB each: max_bytes raised, the parser streams it). China regions are published
  by the China partition's own endpoint and priced in CNY.
- The spot price feed behind aws.amazon.com/ec2/spot/pricing/ (spot.json).
- The Spot Instance Advisor's data (interruption bands and savings; no prices).

`AWS_REGIONS` (comma-separated region codes) limits the offer files fetched, e.g. for a quick
live check; by default every region in the index is fetched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.sources import RequestSpec

PRICING = "https://pricing.us-east-1.amazonaws.com"
PRICING_CN = "https://pricing.cn-north-1.amazonaws.com.cn"
# AWS docs, "Get price list files manually" (docs.aws.amazon.com/awsaccountbilling/latest/
# aboutv2/using-the-aws-price-list-bulk-api-fetching-price-list-files-manually.html).
REGION_INDEX = f"{PRICING}/offers/v1.0/aws/AmazonEC2/current/region_index.json"
REGION_INDEX_CN = f"{PRICING_CN}/offers/v1.0/cn/AmazonEC2/current/region_index.json"
# The feed the spot pricing page reads (website.spot.ec2.aws.a2z.com); the legacy
# spot-price.s3.amazonaws.com/spot.js stopped changing on 2024-05-13.
SPOT_FEED = "https://website.spot.ec2.aws.a2z.com/spot.json"
# The Spot Instance Advisor's data file (aws.amazon.com/ec2/spot/instance-advisor/).
SPOT_ADVISOR = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
# A region's JSON offer file is ~300-600 MB; allow 2 GB before the crawler gives up.
OFFER_FILE_MAX_BYTES = 2 * 1024**3


def body_cap(url: str) -> int | None:
    """A regional offer file may decode to OFFER_FILE_MAX_BYTES when replayed as when fetched
    (spiders/registry.py body_cap); every other AWS document keeps the common cap."""
    if "/AmazonEC2/current/" in url and url.endswith("/index.json"):
        return OFFER_FILE_MAX_BYTES
    return None


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [
        RequestSpec(REGION_INDEX, meta={"kind": "region_index"}),
        RequestSpec(REGION_INDEX_CN, meta={"kind": "region_index"}),
        RequestSpec(SPOT_FEED, meta={"kind": "spot"}),
        RequestSpec(SPOT_ADVISOR, meta={"kind": "spot_advisor"}),
    ]


def _wanted_regions(env: Mapping[str, str]) -> set[str] | None:
    regions = {r.strip() for r in env.get("AWS_REGIONS", "").split(",") if r.strip()}
    return regions or None


def follow(capture: Capture, env: Mapping[str, str] | None = None) -> list[RequestSpec]:
    """The region index lists every region's offer file; fetch each region's current one."""
    if not capture.url.endswith("/region_index.json"):
        return []
    wanted = _wanted_regions(env if env is not None else os.environ)
    data = json.loads(capture.body)
    base, partition = (PRICING_CN, "cn") if ".amazonaws.com.cn" in capture.url else (PRICING,
                                                                                     "aws")
    specs = []
    for code in sorted(data.get("regions", {})):
        if wanted is not None and code not in wanted:
            continue
        specs.append(RequestSpec(
            f"{base}/offers/v1.0/{partition}/AmazonEC2/current/{code}/index.json",
            max_bytes=OFFER_FILE_MAX_BYTES,
            meta={"kind": "offer_file", "region": code},
        ))
    return specs
