"""One ranked row: an offer x layout for one workload, its costs, verdict and reasons (what
`gpuprices rank --json` prints and the report shows)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class RankRow:
    workload: str
    provider: str
    sku: str
    region: str | None
    pricing_model: str
    gpu_model: str
    gpus_per_node: int
    nodes: int
    gpus: int  # the GPUs the job uses (gpus_per_node x nodes are paid for)
    per_gpu_gb: float | None
    capacity_gb: float | None
    fits: bool
    headroom_gb: float | None
    tokens_per_s: float
    hours: float
    currency: str
    price_per_hour: float
    cost_first_checkpoint: float
    cost_per_checkpoint: float  # per successful checkpoint: cost to finish / checkpoints
    cost_to_finish: float
    verdict: str
    reason: str
    marginal_checkpoint_cost: float = math.inf
    expected_preemptions: float = 0.0
    commitment_months: float | None = None
    snapshot_date: Any = None
    age_days: int | None = None
    firm: bool = True
    stale: bool = False
    # the source's stock at the snapshot: True, False (sold out: listed apart, never a
    # choice) or None (not published)
    available: bool | None = None
    choice: str | None = None  # on_demand, spot or committed when it is that choice's best
    # tokens/s rests on an HFU with no published training measurement for the GPU's class
    # (sizing/efficiency.py); inputs["hfu_source"] says where the figure comes from.
    efficiency_assumed: bool = False
    compat: str = "compatible"  # sizing/compat.py: compatible, caveat (ranked) or incompatible
    fit_verdict: str | None = None  # fits, tight or no (sizing/fit.py); None: not sized
    network: str = "network unknown"  # the offer's network (staging/offer_network, net_label)
    # tokens_per_s is the measured figure where `gpuprices record` holds one for the offer's
    # provider, GPU and workload (sizing/measured.py); the estimate is always kept beside it.
    estimated_tokens_per_s: float | None = None
    measured_tokens_per_s: float | None = None  # at this row's layout
    estimate_error: float | None = None  # estimate / measured - 1 on the measured layout
    measured: dict[str, Any] | None = None  # the measured_throughput row applied
    # ISO 3166-1 alpha-2 country of the offer's region (warehouse/regions.csv); None: unknown.
    country: str | None = None
    # The committed choice this row would have been, set aside because it costs more than the
    # on-demand choice for this run: which term would pay, and from what usage
    # (sizing/commitment_pays.py). Rendered in the headline's committed cell.
    choice_note: str | None = None
    # Priced from the buyer's discounts file (sizing/discounts.py): what it says, and the list
    # price per node-hour the warehouse holds.
    negotiated: str | None = None
    list_price_per_hour: float | None = None
    reasons: list[str] = field(default_factory=list)
    inputs: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
