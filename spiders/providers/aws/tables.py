"""AWS reference tables: instance type -> GPU, location names -> region codes.

The GPU table is `instances.csv` beside this module (one row per instance type, a public source
per row). It wins over whatever the Price List says about a GPU: the Price List names the p5en GPU
just "NVIDIA" and often leaves `gpuMemory` as "NA".
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gpuprices.warehouse.gpus import gpu_models

INSTANCES_CSV = Path(__file__).resolve().parent / "instances.csv"


@dataclass(frozen=True)
class AwsGpu:
    instance_type: str
    family: str
    gpu_model: str | None  # None: a GPU gpus.csv does not have (K80, M60, V520): quarantined
    gpu_wording: str
    gpu_count: float  # fractional for GPU slices (g6f, gr6f)
    gpu_memory_gib: float  # per GPU as AWS states it (usable memory, e.g. 22 GiB for L4)
    source: str


@cache
def instance_table() -> dict[str, AwsGpu]:
    known = gpu_models()
    table: dict[str, AwsGpu] = {}
    with INSTANCES_CSV.open(newline="") as fh:
        for r in csv.DictReader(fh):
            model = r["gpu_model"] or None
            if model is not None and model not in known:
                raise ValueError(f"aws/instances.csv: {model!r} is not in warehouse/gpus.csv")
            table[r["instance_type"]] = AwsGpu(
                instance_type=r["instance_type"],
                family=r["family"],
                gpu_model=model,
                gpu_wording=r["gpu_wording"],
                gpu_count=float(r["gpu_count"]),
                gpu_memory_gib=float(r["gpu_memory_gib"]),
                source=r["source"],
            )
    return table


@cache
def gpu_families() -> frozenset[str]:
    return frozenset(g.family for g in instance_table().values())


def family_of(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def lookup(instance_type: str) -> AwsGpu | None:
    return instance_table().get(instance_type)


def is_gpu_type(instance_type: str) -> bool:
    """In the table by type or by family (a new size of a known family is still a GPU type)."""
    return instance_type in instance_table() or family_of(instance_type) in gpu_families()


def canonical_memory_gb(gpu_model: str | None) -> float | None:
    if gpu_model is None:
        return None
    return gpu_models()[gpu_model].memory_gb


# Location names used by the page feed and the Price List `location` attribute, and their region
# codes. Source: the Price List offer files carry both `location` and `regionCode` on every
# product (e.g. the us-east-1 fixture: "US East (N. Virginia)" / us-east-1); AWS docs "Regions and
# Zones" (docs.aws.amazon.com/AWSEC2/latest/UserGuide/using-regions-availability-zones.html).
LOCATION_TO_REGION = {
    "US East (N. Virginia)": "us-east-1",
    "US East (Ohio)": "us-east-2",
    "US West (N. California)": "us-west-1",
    "US West (Oregon)": "us-west-2",
    "Africa (Cape Town)": "af-south-1",
    "Asia Pacific (Hong Kong)": "ap-east-1",
    "Asia Pacific (Hyderabad)": "ap-south-2",
    "Asia Pacific (Jakarta)": "ap-southeast-3",
    "Asia Pacific (Malaysia)": "ap-southeast-5",
    "Asia Pacific (Melbourne)": "ap-southeast-4",
    "Asia Pacific (Mumbai)": "ap-south-1",
    "Asia Pacific (Osaka)": "ap-northeast-3",
    "Asia Pacific (Seoul)": "ap-northeast-2",
    "Asia Pacific (Singapore)": "ap-southeast-1",
    "Asia Pacific (Sydney)": "ap-southeast-2",
    "Asia Pacific (Taipei)": "ap-east-2",
    "Asia Pacific (Thailand)": "ap-southeast-7",
    "Asia Pacific (Tokyo)": "ap-northeast-1",
    "Canada (Central)": "ca-central-1",
    "Canada West (Calgary)": "ca-west-1",
    "China (Beijing)": "cn-north-1",
    "China (Ningxia)": "cn-northwest-1",
    "EU (Frankfurt)": "eu-central-1",
    "EU (Ireland)": "eu-west-1",
    "EU (London)": "eu-west-2",
    "EU (Milan)": "eu-south-1",
    "EU (Paris)": "eu-west-3",
    "EU (Spain)": "eu-south-2",
    "EU (Stockholm)": "eu-north-1",
    "EU (Zurich)": "eu-central-2",
    "Israel (Tel Aviv)": "il-central-1",
    "Mexico (Central)": "mx-central-1",
    "Middle East (Bahrain)": "me-south-1",
    "Middle East (UAE)": "me-central-1",
    "South America (Sao Paulo)": "sa-east-1",
    "AWS GovCloud (US-East)": "us-gov-east-1",
    "AWS GovCloud (US-West)": "us-gov-west-1",
}

# Region ids of the legacy spot.js feed (and of AWS's old pricing JS) that are not region codes.
# Source: the mapping AWS's own pricing pages used, as kept by ec2instances.info
# (powdahound/ec2instances.info, "JSON_NAME_TO_EC2_REGIONS_API") and alexei-led/spotinfo.
LEGACY_SPOT_REGIONS = {
    "us-east": "us-east-1",
    "us-west": "us-west-1",
    "eu-ireland": "eu-west-1",
    "eu-frankfurt": "eu-central-1",
    "apac-sin": "ap-southeast-1",
    "apac-syd": "ap-southeast-2",
    "apac-tokyo": "ap-northeast-1",
    "apac-seoul": "ap-northeast-2",
    "apac-osaka": "ap-northeast-3",
}
