"""The GCP machine-type table (machines.csv beside this module): machine type -> GPU model, count
and the parts the Billing Catalog API prices separately (vCPU, RAM, GPU, bundled local SSD)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "machines.csv"


@dataclass(frozen=True)
class Machine:
    machine_type: str
    gpu_wording: str
    gpu_model: str
    gpu_count: float
    gpu_memory_gb: float
    vcpus: float
    ram_gib: float
    local_ssd_gib: float
    cpu_ram_family: str  # "A2" -> billing SKUs "A2 Instance Core/Ram running in ..."
    gpu_sku_prefix: str  # billing GPU SKU description up to the location
    interconnect: str | None


@cache
def machines() -> dict[str, Machine]:
    with TABLE.open(newline="") as fh:
        return {
            r["machine_type"]: Machine(
                machine_type=r["machine_type"],
                gpu_wording=r["gpu_wording"],
                gpu_model=r["gpu_model"],
                gpu_count=float(r["gpu_count"]),
                gpu_memory_gb=float(r["gpu_memory_gb"]),
                vcpus=float(r["vcpus"]),
                ram_gib=float(r["ram_gib"]),
                local_ssd_gib=float(r["local_ssd_gib"] or 0),
                cpu_ram_family=r["cpu_ram_family"],
                gpu_sku_prefix=r["gpu_sku_prefix"],
                interconnect=r["interconnect"] or None,
            )
            for r in csv.DictReader(fh)
        }
