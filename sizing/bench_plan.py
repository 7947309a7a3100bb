"""The benchmark plan to run on an offer before committing to it: memory fit, micro-batch sweep,
one-node step benchmark with NCCL tests, checkpoint write and restore, multi-node collectives
(when the job spans nodes) and a simulated preemption with recovery.

Each step's duration comes from the workload's own estimate on that offer (the RankRow that
gpuprices.sizing.rank built: tokens/s, layout) and the run plan of gpuprices.sizing.cost
(checkpoint size and write time, restart time); its cost is the offer's node price over the hours
the provider bills (gpuprices.sizing.cost.billed_hours: increment, minimum). Every duration
assumption is a named constant below. Pure Python: the caller hands in ranked rows.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from gpuprices.sizing.cost import billed_hours, plan_run
from gpuprices.sizing.memory import estimate_memory
from gpuprices.sizing.rank_row import RankRow
from gpuprices.sizing.workload import Workload

# Optimizer steps run at the job's micro-batch to read the peak memory: allocator peaks settle
# after the first optimizer step has created its states (PyTorch's torch.cuda.max_memory_allocated
# is read after step 1); 10 leaves room for the first steps' compilation and warm-up. Assumption.
MEMORY_FIT_STEPS = 10
# Micro-batch sizes tried, as multiples of the workload's own: half (when >= 1), itself, twice and
# four times, to find the throughput knee and the out-of-memory edge. The first point that runs
# out of memory ends the sweep, so this is the longest it takes. Assumption.
MICRO_BATCH_FACTORS = (0.5, 1, 2, 4)
# Steps per sweep point: 5 warm-up steps then 15 timed ones, the pattern of PyTorch's
# torch.utils.benchmark (warm-up first, then timed runs). Assumption.
STEPS_PER_POINT = 20
# Optimizer steps of the one-node and multi-node step benchmarks, enough to read the step-time
# variance (a coefficient of variation from 100 samples). Assumption.
STEP_BENCH_STEPS = 100
# nccl-tests (github.com/NVIDIA/nccl-tests) all_reduce_perf, all_gather_perf and
# reduce_scatter_perf, each sweeping 8 B..8 GB (-b 8 -e 8G -f 2) with the default 20 timed
# iterations: seconds each over NVLink; 10 minutes covers the container start and the three runs.
# Assumption, not measured here.
NCCL_TESTS_MINUTES = 10.0
# Checkpoint write + restore cycles: two, so a slow first write (cold filesystem cache, bucket
# creation) shows beside a steady one. A restore is taken to read at the write rate of
# sizing/cost.py (CHECKPOINT_WRITE_GBS, or the workload's checkpoint_write_minutes). Assumption.
CHECKPOINT_CYCLES = 2
# The simulated preemption: train this many steps, checkpoint, kill the job, restart it on fresh
# nodes, restore and train this many steps again to confirm the loss continues. Assumption.
PREEMPTION_STEPS = 20
# How much warning a reclaimed spot node gets, by provider (the drill should handle it):
# AWS 2 minutes (docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices
# .html); GCP 30 seconds (cloud.google.com/compute/docs/instances/spot, "Preemption process");
# Azure 30 seconds through Scheduled Events (learn.microsoft.com/azure/virtual-machines/spot-vms).
SPOT_NOTICE = {"aws": "2 minutes", "gcp": "30 seconds", "azure": "30 seconds"}
# A step is said to be dear when the provider bills this many times its working hours or more.
DEAR_BILLING = 1.5


@dataclass
class BenchStep:
    step: str
    gpus: int  # GPUs the test runs on
    nodes: int  # nodes paid for while it runs (a node is paid whole)
    hours: float  # working hours
    billed_hours: float  # hours the provider bills for it run alone
    cost: float  # at the offer's price, run alone
    duration: str  # how the hours were derived
    record: list[str]
    notes: list[str] = field(default_factory=list)


# What a plan says of its offer: these fields of the ranked row it was made from.
OFFER_FIELDS = ("workload", "provider", "sku", "region", "pricing_model", "gpu_model",
                "gpus_per_node", "nodes", "gpus", "currency", "price_per_hour")


@dataclass
class OfferPlan:
    row: RankRow  # the ranked offer (price_per_hour is per node)
    rank: int  # 1 = the best offer (cost per successful checkpoint)
    billing_increment_s: int | None
    min_billing_s: int | None
    steps: list[BenchStep]
    hours: float
    billed_hours: float  # node-hours billed, steps on the same node count run back to back
    cost: float  # the plan run back to back per node count (one billing session each)
    cost_steps_alone: float  # the sum of the steps each billed alone
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Flat: the offer's fields, then the plan's."""
        plan = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "row"}
        plan["steps"] = [asdict(s) for s in self.steps]
        return {**{k: getattr(self.row, k) for k in OFFER_FIELDS}, **plan}


def _step_s(tokens_per_step: float, per_gpu_tps: float, model_parallel: int) -> float:
    """Seconds per optimizer step: a step's tokens over the GPUs of one replica."""
    return tokens_per_step / (per_gpu_tps * model_parallel)


def _first_fit_gpus(w: Workload, row: RankRow) -> int:
    """The smallest test that holds the job: one GPU for a one-GPU job, else one node when the
    memory estimate at one node's shard count fits, else the whole job."""
    if row.gpus <= 1:
        return 1
    per_node = min(row.gpus, row.gpus_per_node)
    mp = w.tensor_parallel * w.pipeline_parallel * w.context_parallel
    if per_node < row.gpus and per_node % mp == 0 and estimate_memory(
            w, gpu=row.gpu_model, gpus=per_node, capacity_gb=row.capacity_gb).fits:
        return per_node
    return row.gpus if per_node < row.gpus else per_node


class _Pricer:
    """One offer's billing: hours -> (billed hours, cost) for a step on `nodes` nodes."""

    def __init__(self, row: RankRow) -> None:
        self.price = row.price_per_hour
        self.inc = row.inputs.get("billing_increment_s")
        self.min_s = row.inputs.get("min_billing_s")

    def step(self, name: str, gpus: int, nodes: int, hours: float, duration: str,
             record: list[str], notes: list[str] | None = None) -> BenchStep:
        billed = billed_hours(hours, self.inc, self.min_s)  # no term: see _plan_notes
        notes = list(notes or [])
        if billed >= DEAR_BILLING * hours:
            notes.append(f"billed {billed:.2f} h for {hours:.2f} h of work "
                         f"({_billing_words(self.inc, self.min_s)}): short tests are dear here")
        return BenchStep(name, gpus, nodes, hours, billed, billed * self.price * nodes,
                         duration, record, notes)


def _billing_words(inc: int | None, min_s: int | None) -> str:
    parts = []
    if min_s:
        parts.append(f"minimum {_span(min_s)}")
    if inc and inc > 1 and inc != min_s:
        parts.append(f"billed per {_span(inc)}")
    return ", ".join(parts) or "per second"


def _span(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min" if seconds % 60 == 0 else f"{seconds} s"


def plan_offer(w: Workload, row: RankRow, position: int = 1) -> OfferPlan:
    """The benchmark plan of one ranked offer (a row of gpuprices.sizing.rank with verdict ok)."""
    run = plan_run(w, row.tokens_per_s)
    per_gpu_tps = row.tokens_per_s / row.gpus
    mp = w.tensor_parallel * w.pipeline_parallel * w.context_parallel
    start = run.restart_h  # every test starts the job: the workload's restart time
    micro = w.micro_batch * w.seq_len  # tokens of one micro-batch per replica
    full_step_s = _step_s(micro * w.grad_accum, per_gpu_tps, mp)
    per_node = min(row.gpus, row.gpus_per_node)
    fit_gpus = _first_fit_gpus(w, row)
    fit_nodes = math.ceil(fit_gpus / row.gpus_per_node)
    pay = _Pricer(row)
    steps = []

    h = start + MEMORY_FIT_STEPS * _step_s(micro, per_gpu_tps, mp) / 3600
    steps.append(pay.step(
        "memory fit", fit_gpus, fit_nodes, h,
        f"start {start * 60:.0f} min + {MEMORY_FIT_STEPS} steps of micro-batch {w.micro_batch}",
        ["peak memory per GPU (torch.cuda.max_memory_allocated) against the estimate "
         f"{row.per_gpu_gb} GB", "out-of-memory or not"],
        [] if fit_gpus == 1 else [f"the job shards over {row.gpus} GPUs: memory per GPU is "
                                  f"read at {fit_gpus} GPUs' shard count"]))

    points = sorted({int(w.micro_batch * f) for f in MICRO_BATCH_FACTORS} - {0})
    sweep_s = sum(STEPS_PER_POINT * _step_s(mb * w.seq_len, per_gpu_tps, mp) for mb in points)
    steps.append(pay.step(
        "micro-batch sweep", fit_gpus, fit_nodes, len(points) * start + sweep_s / 3600,
        f"micro-batches {points}: a start {start * 60:.0f} min + {STEPS_PER_POINT} steps each",
        ["tokens/s and peak memory per micro-batch", "the largest that fits",
         f"tokens/s against the estimate {per_gpu_tps * fit_gpus:,.0f}"]))

    node_h = NCCL_TESTS_MINUTES / 60 if per_node > 1 else 0.0
    fits_node = fit_gpus <= per_node
    if fits_node:
        node_h += start + STEP_BENCH_STEPS * full_step_s / 3600
    if node_h > 0:  # else one GPU per node that does not hold the job: nothing to run on it
        steps.append(_one_node_step(pay, per_node, node_h, fits_node, start, full_step_s))

    cycle_h = run.write_h * 2  # a restore read at the write rate
    steps.append(pay.step(
        "checkpoint write and restore", row.gpus, row.nodes,
        start + CHECKPOINT_CYCLES * cycle_h,
        f"start {start * 60:.0f} min + {CHECKPOINT_CYCLES} x (write + restore "
        f"{run.ckpt_gb:,.1f} GB at {run.write_h * 60:.1f} min each)",
        ["write and restore seconds", "checkpoint size on disk", "a bit-exact reload "
         "(same loss on the next step)"]))

    if row.nodes > 1:
        steps.append(pay.step(
            "multi-node collective test + step benchmark", row.gpus, row.nodes,
            NCCL_TESTS_MINUTES / 60 + start + STEP_BENCH_STEPS * full_step_s / 3600,
            f"NCCL tests {NCCL_TESTS_MINUTES:.0f} min over {row.nodes} nodes; start "
            f"{start * 60:.0f} min + {STEP_BENCH_STEPS} steps of {full_step_s:.1f} s",
            ["all-reduce bus bandwidth between nodes (against the fabric's rating)",
             "step time and tokens/s at full scale: the scaling efficiency"]))

    drill_h = (2 * start + 2 * PREEMPTION_STEPS * full_step_s / 3600 + cycle_h)
    steps.append(pay.step(
        "simulated preemption and recovery", row.gpus, row.nodes, drill_h,
        f"start, {PREEMPTION_STEPS} steps, checkpoint, kill; restart, restore, "
        f"{PREEMPTION_STEPS} steps",
        ["minutes from the kill to training again", "steps lost",
         "the loss continuing where it stopped"], _spot_notes(row)))
    return _totals(row, position, steps, pay)


def _one_node_step(pay: _Pricer, per_node: int, node_h: float, fits_node: bool,
                   start: float, full_step_s: float) -> BenchStep:
    """NCCL tests inside one node (none on a one-GPU node) and the job's steps when they fit."""
    return pay.step(
        "one-node step benchmark + NCCL tests", per_node, 1, node_h,
        (f"NCCL tests {NCCL_TESTS_MINUTES:.0f} min; " if per_node > 1 else "")
        + (f"start {start * 60:.0f} min + {STEP_BENCH_STEPS} steps of {full_step_s:.1f} s"
           if fits_node else "the job does not fit on one node: its steps run at the "
           "multi-node step"),
        (["step time: mean and variance", "tokens/s and MFU against the estimate"]
         if fits_node else [])
        + (["all-reduce / all-gather / reduce-scatter bus bandwidth inside the node"]
           if per_node > 1 else []),
        [] if per_node > 1 else ["one GPU: no collective to test"])


def _spot_notes(row: RankRow) -> list[str]:
    """The preemption rate the ranking used (sizing/cost.py) and the provider's warning."""
    if row.pricing_model != "spot":
        return []
    i = row.inputs
    band, source = str(i.get("interruption_band")), str(i.get("interruption_band_source"))
    out = [f"spot: the run expects {row.expected_preemptions:.2f} preemption(s) "
           f"({source if band in source else f'{band}, {source}'}; "
           f"{i.get('preemptions_per_hour') or 0:.3f}/h over {row.nodes} node(s)): rehearse it"]
    notice = SPOT_NOTICE.get(row.provider)
    if notice:
        out.append(f"{row.provider} warns a reclaimed node {notice} ahead: save on the notice")
    return out


def _totals(row: RankRow, position: int, steps: list[BenchStep],
            pay: _Pricer) -> OfferPlan:
    """The plan run back to back: one billing session per node count."""
    by_nodes: dict[int, float] = {}
    for s in steps:
        by_nodes[s.nodes] = by_nodes.get(s.nodes, 0.0) + s.hours
    billed = {n: billed_hours(h, pay.inc, pay.min_s) for n, h in by_nodes.items()}
    notes = []
    if row.commitment_months:
        notes.append(f"a committed price ({row.commitment_months:g} months): the hours are priced "
                     "at its hourly equivalent, but the term is bought whole; run the plan on "
                     "the same instance type on demand or in a trial before committing")
    if any(s.billed_hours >= DEAR_BILLING * s.hours for s in steps):
        notes.append(f"{row.provider} bills {_billing_words(pay.inc, pay.min_s)}: run the steps "
                     "back to back in one session")
    return OfferPlan(
        row=row, rank=position, billing_increment_s=pay.inc, min_billing_s=pay.min_s,
        steps=steps, hours=sum(s.hours for s in steps),
        billed_hours=sum(billed[n] * n for n in billed),
        cost=sum(billed[n] * n * pay.price for n in billed),
        cost_steps_alone=sum(s.cost for s in steps), notes=notes)


def plan_workload(w: Workload, rows: list[RankRow], top: int) -> list[OfferPlan]:
    """Plans for the `top` best recommendable rows (verdict ok) of one workload, best first."""
    ok = [r for r in rows if r.verdict == "ok"][:top]
    return [plan_offer(w, r, i) for i, r in enumerate(ok, 1)]
