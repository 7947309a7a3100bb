"""Cost of one offer for one workload: to the first good checkpoint, per checkpoint, to finish.

Every figure is returned with the inputs it was computed from (`CostEstimate.inputs`).
Money is in the offer's currency; the USD constants below are converted by the caller.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from gpuprices.sizing.memory import ADAM8_BYTES, lora_params
from gpuprices.sizing.workload import Workload

# Object storage for checkpoints: AWS S3 Standard, first 50 TB/month, us-east-1
# (aws.amazon.com/s3/pricing): $0.023 per GB-month.
STORAGE_USD_PER_GB_MONTH = 0.023
# Data out to the internet: AWS EC2 first 10 TB/month $0.09/GB (aws.amazon.com/ec2/pricing/
# on-demand "Data Transfer"); data in is free at AWS, GCP and Azure (same pages).
EGRESS_USD_PER_GB = 0.09
INGEST_USD_PER_GB = 0.0
# Training text on disk: ~4 characters (bytes) of English per token (OpenAI "What are tokens"
# help article), so tokens x 4 bytes.
BYTES_PER_TOKEN = 4.0
# Checkpoint write throughput to local NVMe / a network filesystem: 1 GB/s per node. An
# assumption (not measured here); set checkpoint_write_minutes in the workload to override.
CHECKPOINT_WRITE_GBS = 1.0
# AWS Spot Instance Advisor bands = share of instances reclaimed over the trailing month
# (aws.amazon.com/ec2/spot/instance-advisor). Midpoints; ">20%" taken as 25%.
BAND_MONTHLY = {"<5%": 0.025, "5-10%": 0.075, "10-15%": 0.125, "15-20%": 0.175, ">20%": 0.25}
# No band published (every provider but AWS): Google's preemptible VM documentation gives the
# historical preemption rate as 5-15% of VMs per day per project (cloud.google.com/compute/docs/
# instances/preemptible, "Preemption selection"); the upper end is used. Far above any AWS
# monthly band: spot GPUs without a published band are treated as risky.
DEFAULT_BAND = "15%/day"
DEFAULT_BAND_SOURCE = ("assumed: 15%/day, the upper end of Google's published 5-15%/day "
                       "(cloud.google.com/compute/docs/instances/preemptible)")
ADVISOR_SOURCE = "AWS Spot Instance Advisor band of the snapshot day"
HOURS_PER_MONTH = 730.0


def spot_band(extra: dict[str, Any]) -> tuple[str, str]:
    """The per-node interruption band of a spot offer and where it comes from: the AWS advisor
    band the parser stored (extra.interruption_band), else the assumed default."""
    band = extra.get("interruption_band")
    if band:
        return str(band), ADVISOR_SOURCE
    return DEFAULT_BAND, DEFAULT_BAND_SOURCE


def preemptions_per_hour(band: str) -> float:
    """Reclaim share p over the band's period (a month for AWS bands, a day for "x%/day") ->
    Poisson rate -ln(1 - p) / hours in the period."""
    key = band.replace(" ", "")
    period = HOURS_PER_MONTH
    if key.endswith("/day"):
        key, period = key[: -len("/day")], 24.0
    p = BAND_MONTHLY.get(key) if period == HOURS_PER_MONTH else None
    if p is None:
        nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", key)]
        if not nums:
            raise ValueError(f"unknown interruption band {band!r}")
        p = (sum(nums) / len(nums)) / 100
    return -math.log(1 - min(p, 0.99)) / period


def billed_hours(hours: float, increment_s: int | None, min_s: int | None,
                 term_h: float = 0.0) -> float:
    """Hours charged for one continuous run of `hours`: rounded up to the billing increment,
    and at least the minimum. A missing increment means per-second billing. A committed or
    reserved price is paid for its whole term (`term_h`) however little of it the job uses."""
    if not math.isfinite(hours):
        return math.inf
    seconds = hours * 3600
    inc = increment_s or 1
    billed = math.ceil(seconds / inc - 1e-9) * inc
    billed = max(billed, min_s or 0)
    return max(billed / 3600, term_h)


def term_hours(commitment_months: float | None) -> float:
    """Hours a committed price is paid for (0 for prices without a term)."""
    return (commitment_months or 0) * HOURS_PER_MONTH


def checkpoint_gb(w: Workload) -> float:
    """A resumable checkpoint: trainable weights + optimizer state (+ frozen base excluded)."""
    if w.method in ("lora", "qlora"):
        n = lora_params(w)
        wbytes = 4.0
        opt = 8.0 if w.optimizer == "adamw" else ADAM8_BYTES
    else:
        n = w.arch.params
        wbytes = 2.0 if w.precision == "bf16-true" else 4.0
        opt = 2 * wbytes if w.optimizer == "adamw" else ADAM8_BYTES
    return n * (wbytes + opt) / 1e9


def export_gb(w: Workload) -> float:
    """What leaves the cloud at the end: adapters, or 16-bit weights for full training."""
    if w.method in ("lora", "qlora"):
        return lora_params(w) * 2 / 1e9
    return w.arch.params * 2 / 1e9


@dataclass
class CostEstimate:
    """`cost_per_checkpoint` is per successful checkpoint: everything the run costs to finish
    divided by the checkpoints it delivers. `marginal_checkpoint_cost` is what one more
    checkpoint interval adds (GPU hours with their rework, and the checkpoint's storage)."""

    cost_first_checkpoint: float
    cost_per_checkpoint: float
    cost_to_finish: float
    marginal_checkpoint_cost: float
    wall_hours: float
    billed_hours: float
    checkpoints: int
    expected_preemptions: float
    rework_hours: float
    currency: str
    inputs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunPlan:
    """The price-independent part of a run: times and sizes (money constants converted)."""

    n_ckpt: int
    ckpt_gb: float
    write_h: float
    interval_h: float
    train_h: float
    restart_h: float
    run_h: float
    dataset_gb: float
    egress_gb: float
    storage_per_ckpt: float
    ingest: float
    egress: float
    orch_per_h: float
    engineer: float


def plan_run(w: Workload, tokens_per_s: float, usd_to_currency: float = 1.0) -> RunPlan:
    n_ckpt = max(1, math.ceil(w.tokens / w.checkpoint_every_tokens))
    ckpt_gb = checkpoint_gb(w)
    write_h = (w.checkpoint_write_minutes / 60 if w.checkpoint_write_minutes is not None
               else ckpt_gb / CHECKPOINT_WRITE_GBS / 3600)
    interval_h = w.checkpoint_every_tokens / tokens_per_s / 3600 + write_h
    train_h = w.tokens / tokens_per_s / 3600 + n_ckpt * write_h
    restart_h = w.restart_minutes / 60
    dataset_gb = w.dataset_gb if w.dataset_gb is not None else w.tokens * BYTES_PER_TOKEN / 1e9
    egress_gb = w.egress_gb if w.egress_gb is not None else export_gb(w)
    return RunPlan(
        n_ckpt=n_ckpt, ckpt_gb=ckpt_gb, write_h=write_h, interval_h=interval_h,
        train_h=train_h, restart_h=restart_h,
        run_h=restart_h + train_h,  # the first start loads the model like a restart does
        dataset_gb=dataset_gb, egress_gb=egress_gb,
        storage_per_ckpt=(ckpt_gb * STORAGE_USD_PER_GB_MONTH * w.checkpoint_retention_days / 30
                          * usd_to_currency),
        ingest=dataset_gb * INGEST_USD_PER_GB * usd_to_currency,
        egress=egress_gb * EGRESS_USD_PER_GB * usd_to_currency,
        orch_per_h=w.orchestration_usd_per_hour * usd_to_currency,
        engineer=w.engineer_hours * w.engineer_usd_per_hour * usd_to_currency,
    )


def rework_fraction(plan: RunPlan, lam: float) -> float:
    """Share of extra hours per hour of progress: each preemption loses the restart time plus,
    on average, half a checkpoint interval."""
    frac = lam * (plan.restart_h + plan.interval_h / 2)
    return frac if frac < 1 else math.inf


def marginal_checkpoint(plan: RunPlan, rate_node_h: float, lam: float,
                        sunk: bool = False) -> float:
    """One more checkpoint: GPU hours of one interval (with its share of spot rework) + storage
    of one checkpoint. `sunk`: the hours fall inside a committed term already paid for."""
    gpu = 0.0 if sunk else rate_node_h
    return (plan.interval_h * (1 + rework_fraction(plan, lam)) * (gpu + plan.orch_per_h)
            + plan.storage_per_ckpt)


@dataclass(frozen=True)
class RunTotals:
    """Hours and money of a whole run on one offer (the job's rate over all its nodes)."""

    expected_preemptions: float
    rework_h: float
    total_h: float
    billed_h: float
    gpu_cost: float
    cost_to_finish: float


def run_totals(plan: RunPlan, rate_node_h: float, lam: float, increment_s: int | None,
               min_s: int | None, term_h: float = 0.0) -> RunTotals:
    """`lam` is the job's preemption rate (per node x nodes: any node reclaimed stops the job).
    Expected preemptions = lam x run / (1 - lam x loss), so rework that is itself preempted is
    counted; each costs the restart plus half a checkpoint interval."""
    frac = rework_fraction(plan, lam)
    if frac >= 1:  # preempted faster than it recovers: the run never finishes
        inf = math.inf
        return RunTotals(inf, inf, inf, inf, inf, inf)
    expected = lam * plan.run_h / (1 - frac)
    rework_h = expected * (plan.restart_h + plan.interval_h / 2)
    total_h = plan.run_h + rework_h
    billed = billed_hours(total_h, increment_s, min_s, term_h)
    gpu = billed * rate_node_h
    finish = (gpu + plan.n_ckpt * plan.storage_per_ckpt + plan.ingest + plan.egress
              + plan.orch_per_h * total_h + plan.engineer)
    return RunTotals(expected, rework_h, total_h, billed, gpu, finish)


def estimate_cost(w: Workload, *, price_per_hour: float, nodes: int, tokens_per_s: float,
                  pricing_model: str, billing_increment_s: int | None = None,
                  min_billing_s: int | None = None, extra: dict[str, Any] | None = None,
                  currency: str = "USD", usd_to_currency: float = 1.0,
                  plan: RunPlan | None = None,
                  commitment_months: float | None = None) -> CostEstimate:
    """`price_per_hour` is per instance (node); the job uses `nodes` of them. A spot job is
    interrupted when any of its nodes is reclaimed: the per-node rate x nodes."""
    extra = extra or {}
    rate_node_h = price_per_hour * nodes
    if tokens_per_s <= 0:
        inf = math.inf
        return CostEstimate(inf, inf, inf, inf, inf, inf, 0, 0.0, 0.0, currency,
                            {"reason": "no throughput estimate"})
    p = plan or plan_run(w, tokens_per_s, usd_to_currency)
    band = band_source = None
    lam_node = 0.0
    if pricing_model == "spot":
        band, band_source = spot_band(extra)
        lam_node = preemptions_per_hour(band)
    lam = lam_node * nodes
    term_h = term_hours(commitment_months)
    t = run_totals(p, rate_node_h, lam, billing_increment_s, min_billing_s, term_h)
    frac = rework_fraction(p, lam)
    first_h = (p.restart_h + p.interval_h) * (1 + frac)
    first = (billed_hours(first_h, billing_increment_s, min_billing_s, term_h) * rate_node_h
             + p.storage_per_ckpt + p.ingest + p.orch_per_h * first_h)
    sunk = term_h > 0 and t.total_h + p.interval_h <= term_h
    inputs = {
        "price_per_hour": price_per_hour, "nodes": nodes, "tokens_per_s": tokens_per_s,
        "tokens": w.tokens, "checkpoint_every_tokens": w.checkpoint_every_tokens,
        "checkpoints": p.n_ckpt, "checkpoint_gb": round(p.ckpt_gb, 3),
        "checkpoint_write_h": round(p.write_h, 4), "interval_h": round(p.interval_h, 4),
        "restart_h": p.restart_h, "billing_increment_s": billing_increment_s,
        "min_billing_s": min_billing_s, "pricing_model": pricing_model,
        "commitment_months": commitment_months, "term_hours": term_h,
        "interruption_band": band, "interruption_band_source": band_source,
        "preemptions_per_node_hour": lam_node, "preemptions_per_hour": lam,
        "storage_per_gb_month_usd": STORAGE_USD_PER_GB_MONTH,
        "retention_days": w.checkpoint_retention_days, "dataset_gb": round(p.dataset_gb, 3),
        "ingest_per_gb_usd": INGEST_USD_PER_GB, "egress_gb": round(p.egress_gb, 3),
        "egress_per_gb_usd": EGRESS_USD_PER_GB,
        "orchestration_usd_per_hour": w.orchestration_usd_per_hour,
        "engineer_hours": w.engineer_hours, "engineer_usd_per_hour": w.engineer_usd_per_hour,
        "usd_to_currency": usd_to_currency, "gpu_cost_to_finish": t.gpu_cost,
        "storage_cost": p.n_ckpt * p.storage_per_ckpt, "ingest_cost": p.ingest,
        "egress_cost": p.egress,
    }
    return CostEstimate(
        cost_first_checkpoint=first, cost_per_checkpoint=t.cost_to_finish / p.n_ckpt,
        cost_to_finish=t.cost_to_finish,
        marginal_checkpoint_cost=marginal_checkpoint(p, rate_node_h, lam, sunk),
        wall_hours=t.total_h, billed_hours=t.billed_h, checkpoints=p.n_ckpt,
        expected_preemptions=t.expected_preemptions, rework_hours=t.rework_h,
        currency=currency, inputs=inputs,
    )
