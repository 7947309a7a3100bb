"""The network of one offer as the warehouse hands it over (offers_priced_as_of's net_* columns,
from warehouse/offer_networks.csv through staging/offer_network), and what it means for a job
that spans nodes: the bandwidth per GPU the gradient and parameter collectives cross
(sizing/throughput.py, sizing/parallel.py time them), and the reason a job gives when it spans
nodes without a fast fabric.

A fast fabric is one built for GPU collectives: InfiniBand, RoCE, EFA (RDMA) and GCP's
GPUDirect-TCPX/TCPXO (GPU-to-NIC without the host). Ethernet, none or unknown is not one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpuprices.sizing.throughput import ETHERNET_NODE_GBS

FAST_FABRICS = ("InfiniBand", "RoCE", "EFA", "GPUDirect-TCPX", "GPUDirect-TCPXO")


@dataclass(frozen=True)
class OfferNetwork:
    fabric: str  # one of warehouse/networks.py FABRICS; "unknown" when the row has none
    fabric_gbps_per_gpu: float | None
    label: str  # the report's short text, e.g. "NVSwitch 900 GB/s; EFA 400 Gb/s/GPU"
    source: str | None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _gbps(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    v = float(value)
    return v if math.isfinite(v) and v > 0 else None


def of_offer(o: dict[str, Any]) -> OfferNetwork:
    """The offer's network; a row without the net_* columns has an unknown one."""
    return OfferNetwork(_text(o.get("net_fabric")) or "unknown",
                        _gbps(o.get("net_fabric_gbps_per_gpu")),
                        _text(o.get("net_label")) or "network unknown",
                        _text(o.get("net_source")))


def is_fast(net: OfferNetwork) -> bool:
    return net.fabric in FAST_FABRICS


def internode_gbs(net: OfferNetwork, gpus_per_node: int) -> float | None:
    """GB/s per GPU per direction between nodes from what the provider publishes: its figure
    per GPU / 8; a slower network without a figure as 25 Gb/s per node; None when the fabric is
    unknown (throughput.internode_gbs_per_gpu then assumes one and the reason says so)."""
    if net.fabric_gbps_per_gpu:
        return net.fabric_gbps_per_gpu / 8
    if net.fabric == "unknown" or is_fast(net):
        return None
    # a published Ethernet network with no figure: the 25 Gb/s per node of sizing/throughput.py
    return ETHERNET_NODE_GBS / max(1, gpus_per_node)


def spans_nodes_reason(net: OfferNetwork, nodes: int, link_gbs: float,
                       scaling: float) -> str | None:
    """What a job across `nodes` nodes should know about the fabric it runs over (None on one
    node or over a fast fabric)."""
    if nodes <= 1 or is_fast(net):
        return None
    timed = f"{link_gbs * 8:.3g} Gb/s per GPU, scaling {scaling:.0%}"
    if net.fabric == "unknown":
        return (f"spans {nodes} nodes, but the provider publishes no fabric for this offer: "
                f"timed at an assumed {timed}; ask for InfiniBand/RoCE/EFA before buying")
    return (f"spans {nodes} nodes over {net.fabric}, no fast fabric (InfiniBand, RoCE, EFA): "
            f"{timed}")
