"""The network of each offer (offer_networks.csv): inside the node (NVLink/NVSwitch, Infinity
Fabric, PCIe only) and between nodes (InfiniBand, RoCE, EFA, GPUDirect-TCPX(O), Ethernet), per
provider and instance family, each row with the provider documentation it is read from.

A row names its family by a regular expression over the offer's `sku` (DuckDB's
regexp_matches, RE2 syntax; the first matching row in file order wins, so a specific pattern
goes before a general one). An offer no row matches has an unknown network: nothing is guessed
from the GPU model here; sizing says which figure it assumed instead (sizing/network.py).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gpuprices.warehouse.contract import PROVIDERS

NETWORKS_CSV = Path(__file__).parent / "offer_networks.csv"

INTRA_NODE = ("NVSwitch", "NVLink bridge", "Infinity Fabric", "PCIe", "none")
# "none": the family is one GPU per VM with no published cluster fabric; "unknown": the provider
# publishes no figure for it.
FABRICS = ("InfiniBand", "RoCE", "EFA", "GPUDirect-TCPX", "GPUDirect-TCPXO", "Ethernet", "none",
           "unknown")


@dataclass(frozen=True)
class OfferNetwork:
    row_order: int
    provider: str
    sku_pattern: str
    intra_node: str
    intra_node_gbs: float | None  # GB/s per GPU, bidirectional as datasheets print it
    fabric: str
    fabric_gbps_per_gpu: float | None  # Gb/s per GPU between nodes
    source: str


def _num(text: str, where: str) -> float | None:
    if not text.strip():
        return None
    value = float(text)
    if value <= 0:
        raise ValueError(f"{where}: bandwidth {text!r} is not positive")
    return value


def _row(i: int, r: dict[str, str]) -> OfferNetwork:
    where = f"{NETWORKS_CSV.name} row {i + 2} ({r.get('provider')!r}, {r.get('sku_pattern')!r})"
    if r["provider"] not in PROVIDERS:
        raise ValueError(f"{where}: unknown provider")
    if r["intra_node"] not in INTRA_NODE:
        raise ValueError(f"{where}: intra_node not one of {', '.join(INTRA_NODE)}")
    if r["fabric"] not in FABRICS:
        raise ValueError(f"{where}: fabric not one of {', '.join(FABRICS)}")
    if not r["source"].strip():
        raise ValueError(f"{where}: no source")
    try:
        re.compile(r["sku_pattern"])
    except re.error as exc:
        raise ValueError(f"{where}: bad pattern: {exc}") from None
    return OfferNetwork(i, r["provider"], r["sku_pattern"], r["intra_node"],
                        _num(r["intra_node_gbs"], where), r["fabric"],
                        _num(r["fabric_gbps_per_gpu"], where), r["source"])


@cache
def offer_networks() -> tuple[OfferNetwork, ...]:
    with NETWORKS_CSV.open(newline="") as fh:
        return tuple(_row(i, r) for i, r in enumerate(csv.DictReader(fh)))

