"""A measured tokens/s over the estimate: the benchmark results recorded with `gpuprices record`
(the warehouse's measured_throughput view, one row per provider x gpu_model x workload, passed
in by the callers as plain dicts: no DuckDB here).

A run measures one layout (its `gpus`); an offer may be bought in another. The measurement
corrects the estimate by its ratio: tokens/s here = the estimate here x measured / the estimate
at the measured run's GPU count. On the measured layout that is the measured figure itself;
elsewhere the estimate's scaling over GPUs and nodes is kept. The estimate's error against the
measurement is estimate / measured - 1 on the measured layout (docs/sizing.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Key = tuple[str, str, str]  # provider, gpu_model, workload


@dataclass(frozen=True)
class Applied:
    """A measurement applied to one offer's layout."""

    sku: str
    measured_on: Any
    gpus: int  # GPUs of the measured run
    measured_tokens_per_s: float  # of the measured run, as recorded
    estimate_at_measured: float  # the estimate for the measured run's GPUs
    tokens_per_s: float  # at this offer's layout, corrected by the measurement
    estimate_tokens_per_s: float  # the estimate at this offer's layout
    record: Mapping[str, Any]

    @property
    def estimate_error(self) -> float:
        """estimate / measured - 1 on the measured layout (+0.25: the estimate 25 % high)."""
        return self.estimate_at_measured / self.measured_tokens_per_s - 1

    def reason(self) -> str:
        scaled = ("" if math.isclose(self.tokens_per_s, self.measured_tokens_per_s)
                  else f", {self.tokens_per_s:,.0f} at this layout")
        return (f"measured {self.measured_tokens_per_s:,.0f} tokens/s on {self.gpus} GPU(s) "
                f"of {self.sku} ({self.measured_on}){scaled}, used over the estimate "
                f"{self.estimate_tokens_per_s:,.0f}; the estimate is "
                f"{self.estimate_error:+.0%} against the measurement")

    def as_dict(self) -> dict[str, Any]:
        return dict(self.record, estimate_at_measured=round(self.estimate_at_measured, 1),
                    estimate_error=round(self.estimate_error, 4))


def index(measurements: Iterable[Mapping[str, Any]] | None) -> dict[Key, Mapping[str, Any]]:
    """{(provider, gpu_model, workload): measurement}; the later date wins a repeated key."""
    out: dict[Key, Mapping[str, Any]] = {}
    for m in measurements or ():
        key = (str(m["provider"]), str(m["gpu_model"]), str(m["workload"]))
        old = out.get(key)
        if old is None or str(m.get("measured_on")) >= str(old.get("measured_on")):
            out[key] = m
    return out


def measured_layout(gpus: int, per_node: int) -> tuple[int, int]:
    """(GPUs per node, nodes) of the measured run, on nodes of the offer's size."""
    used = max(1, min(gpus, per_node))
    return used, math.ceil(gpus / used)


def apply(m: Mapping[str, Any], estimate_here: float, estimate_at_measured: float) -> Applied:
    measured_tps = float(m["tokens_per_s"])
    factor = measured_tps / estimate_at_measured if estimate_at_measured > 0 else 0.0
    return Applied(sku=str(m.get("sku") or ""), measured_on=m.get("measured_on"),
                   gpus=int(m["gpus"]), measured_tokens_per_s=measured_tps,
                   estimate_at_measured=estimate_at_measured,
                   tokens_per_s=estimate_here * factor, estimate_tokens_per_s=estimate_here,
                   record=dict(m))


def beside_estimate(measurements: Iterable[Mapping[str, Any]], gpu: str, workload: str,
                    estimate_for: Any) -> list[dict[str, Any]]:
    """Every provider's measurement of `workload` on `gpu` (for `size`, which has no offer and
    so no provider to choose one by), each with the estimate for the measured run's GPUs
    (`estimate_for(gpus)`: tokens/s) and the estimate's error against it."""
    out = []
    for m in measurements:
        if (m["gpu_model"], m["workload"]) != (gpu, workload):
            continue
        a = apply(m, 0.0, float(estimate_for(int(m["gpus"]))))
        out.append(dict(provider=m["provider"], sku=a.sku, measured_on=str(a.measured_on),
                        gpus=a.gpus, tokens_per_s=a.measured_tokens_per_s,
                        estimate_tokens_per_s=round(a.estimate_at_measured, 1),
                        estimate_error=round(a.estimate_error, 4)))
    return out
