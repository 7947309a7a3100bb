"""Pipeline schedules: how many micro-batches' activations a pipeline rank holds at once, and the
share of a step the pipeline stands idle (docs/sizing.md, "Pipeline schedules").

Both from Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
Using Megatron-LM" (sec. 2.2), with p = pipeline_parallel, m = micro-batches per step
(`grad_accum`) and v = virtual stages (model chunks) per rank:

* `1f1b` (PipeDream-Flush, sec. 2.2.1): each rank runs at most p forward passes before its first
  backward; the first stage keeps min(p, m) micro-batches of its L/p layers in flight, i.e. about
  the whole model's layers of activations for one micro-batch. Bubble: (p - 1) / m of the ideal
  step time.
* `interleaved` (sec. 2.2.2): each rank holds v chunks of L/(p v) layers. The first rank's
  warm-up runs (v - 1) p + 2 (p - 1) chunk forwards before its first backward (Megatron-Core
  `schedules.py`, `forward_backward_pipelining_with_interleaving`: num_warmup_microbatches =
  (pp_size - pp_rank - 1) * 2 + (num_model_chunks - 1) * pp_size), plus the one in its steady
  state: v p + p - 1 chunks of L/(p v) layers = L (1 + (p - 1)/(p v)) layers, the factor
  Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
  sec. 4.2.3) give for the interleaved schedule's extra activation memory. Bubble: (p - 1)/(m v).
  Megatron-LM asks m to be a multiple of p for it (`arguments.py`: "number of microbatches should
  be divisible by pipeline-model-parallel-size when using interleaved schedule"); here m < p
  is only capped (no more chunks than the step has: m v).

Not modelled: the v-fold point-to-point traffic of the interleaved schedule (sec. 2.2.2: "the
amount of communication also increases by v"); it runs over the stage boundary links and is
small beside the tensor-parallel collectives at these sizes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuprices.sizing.workload import Workload

def flush_micro_batches(w: Workload) -> int:
    """Micro-batches one pipeline schedule runs between flushes: `pipeline_micro_batches`, else
    every micro-batch of the step (`grad_accum`). Megatron-LM runs all of a step's micro-batches
    through one schedule (num_microbatches = global / (micro x dp)); torchtitan runs one schedule
    per gradient-accumulation step over local_batch_size / pipeline_parallel_microbatch_size
    micro-batches (torchtitan distributed/pipeline_parallel.py build_pipeline_schedule:
    n_microbatches = batch_size // microbatch_size), each with its own warm-up and bubble."""
    return max(1, w.pipeline_micro_batches or w.grad_accum)


def virtual_stages(w: Workload) -> int:
    return w.virtual_stages if w.pipeline_schedule == "interleaved" else 1


def chunk_layers(w: Workload, pp: int) -> int:
    """Layers in one model chunk of the heaviest rank: L / (p v), rounded up."""
    return math.ceil(w.arch.num_layers / (pp * virtual_stages(w)))


def chunks_in_flight(w: Workload, pp: int) -> int:
    """Model chunks (each of one micro-batch) whose activations the first rank holds at its
    peak: 1F1B min(p, m); interleaved min(v p + p - 1, m v)."""
    m = flush_micro_batches(w)
    if pp <= 1:
        return 1
    v = virtual_stages(w)
    if v == 1:
        return min(pp, m)
    return min(v * pp + pp - 1, m * v)


def layers_held(w: Workload, pp: int) -> int:
    """Layers' worth of one micro-batch's activations on the heaviest pipeline rank."""
    if pp <= 1:
        return w.arch.num_layers
    return chunk_layers(w, pp) * chunks_in_flight(w, pp)


def bubble_fraction(pp: int, micro_batches: int, v: int = 1) -> float:
    """Share of a step the pipeline stands idle: the bubble (p - 1)/(m v) of the ideal time over
    the whole step, (p - 1) / (m v + p - 1)."""
    if pp <= 1:
        return 0.0
    return (pp - 1) / (micro_batches * v + pp - 1)


def describe(w: Workload, pp: int) -> str:
    """The schedule in words for the notes: "1F1B" or "interleaved, 4 virtual stages"."""
    v = virtual_stages(w)
    return "1F1B" if v == 1 else f"interleaved, {v} virtual stages per rank"
