"""Lium fetch plan: three keyless JSON GETs on lium.io (../shared/PROVIDERS_MORE2.md, Lium).

- `/api/executors`: the whole machine book, one JSON list (~86 machines live), no paging: the
  prices.
- `/api/machines`: the per-model catalog (`name`, `price`, `base_price`, `p_min`, `p_max`,
  `rental_rate`, `total_gpu_count`): no offer to buy; the parser passes over it and adds the
  fleet size and rented share to the day's rows of the same exact model name.
- `/api/machines/capacity`: `base_model` x bucket {1, 8} estimates with collapsed names ("H100",
  "RTX PRO 6000") that must not be joined to machine names: archived for the record only.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

EXECUTORS_URL = "https://lium.io/api/executors"
MACHINES_URL = "https://lium.io/api/machines"
CAPACITY_URL = "https://lium.io/api/machines/capacity"


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    return [RequestSpec(url=u, headers={"Accept": "application/json"})
            for u in (EXECUTORS_URL, MACHINES_URL, CAPACITY_URL)]
