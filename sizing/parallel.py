"""Tensor, pipeline and context parallelism, and fp8 training: what they do to memory per GPU and
to the time of one optimizer step (docs/sizing.md, "Parallelism and precision").

A job on `gpus` GPUs with tensor-parallel degree tp, pipeline degree pp and context-parallel
degree cp has a data-parallel degree dp = gpus / (tp * pp * cp); `sharding` (ZeRO / FSDP) shards
over those dp GPUs as before. The terms, each from its source:

* Weights, gradients and optimizer states: one GPU holds 1 / tp of each matrix of the layers of
  its pipeline stage (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on
  GPU Clusters Using Megatron-LM", sec. 2.2-2.3). The heaviest stage is counted: the first holds
  the embedding, the last the output layer (both split over tp: vocabulary-parallel, sec. 2.3).
* Activations: Megatron tensor parallelism with *sequence parallelism* splits every activation of
  a layer over the tp GPUs, the norm/dropout part along the sequence and the rest along the
  hidden dimension (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
  Transformer Models", sec. 4.2.2, eq. 4: sbh(34/t + 5as/(ht))), and the checkpointed layer
  inputs too (sec. 5: 2sbhL/t bytes under full recomputation). Context parallelism gives each
  GPU seq/cp tokens (Megatron-Core docs, "context_parallel package": each GPU computes
  attention on its chunk of the sequence).
  Assumed: the framework runs TP with sequence parallelism (Megatron `--sequence-parallel`;
  torchtitan's TP plan applies SequenceParallel to the norms); without it the norm and dropout
  activations are replicated on every TP rank and the estimate is low.
* Pipeline (1F1B schedule, Narayanan et al. 2021 sec. 2.2.1, PipeDream-Flush): the first stage
  keeps the activations of up to pp micro-batches in flight, each over its L/pp layers, so it
  holds about one whole model's layers of activations for one micro-batch whatever pp is
  (Korthikanti et al. 2022 sec. 4.2.3). With fewer micro-batches m than stages, m.
* fp8 (Transformer Engine recipe): the master weights, gradients and optimizer states stay in
  higher precision and only the GEMMs run in fp8 (TE docs, "Using FP8 with Transformer Engine",
  section "Mixed precision training with FP8"); the weights' fp8 cast is cached across the
  micro-batches of a step (TE Linear.forward, `is_first_microbatch`: weights do not change
  between micro-batches, so their fp8 versions are cached), together with its transpose for the
  backward GEMMs (cuBLASLt fp8 matmuls on Hopper take only the "TN" layout, cuBLAS docs,
  cublasLtMatmul FP8 requirements) = 2 bytes per matmul parameter. TE saves the fp8-cast input
  of each Linear for the weight gradient: those inputs take 1 byte instead of 2.

Step time (`step_time`): the compute of one step split over the GPUs, stretched by the pipeline
bubble (pp - 1) / (m + pp - 1) (Narayanan et al. 2021 sec. 2.2.1: bubble time fraction
(p - 1) / m of the ideal), plus the tensor-parallel collectives, which sit on the critical path
(Narayanan et al. 2021 sec. 2.3: two all-reduces in the forward pass and two in the backward
pass per layer; with sequence parallelism each all-reduce becomes an all-gather plus a
reduce-scatter of the same volume, Korthikanti et al. 2022 sec. 4.2.2; recomputation repeats the
forward ones); the context-parallel K/V ring exchange and the data-parallel gradient collectives
overlap compute (Megatron-Core context_parallel docs: the ring's point-to-point transfers are
overlapped with the attention compute; the DP collectives as before, sizing/throughput.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuprices.sizing import pipeline
from gpuprices.sizing.frameworks import profile

if TYPE_CHECKING:
    from gpuprices.sizing.workload import Workload

# fp8 end-to-end speed-up over bf16 training of the same model on the same card, used to scale the
# class's bf16 HFU onto the fp8 peak. Source: Lambda, "Unleashing the power of Transformers with
# NVIDIA Transformer Engine" (lambdalabs.com/blog, 2023): "Our testing with GPT3-style models on
# the NVIDIA H100 GPU reveals that the Transformer Engine alone boosts FP8 performance by an
# impressive 60%" (1.6x). One blog, one card, a speed-up that includes TE's fused kernels: every
# fp8 estimate says "efficiency assumed".
FP8_SPEEDUP = 1.6
FP8_SPEEDUP_SOURCE = ("Lambda blog 'Unleashing the power of Transformers with NVIDIA Transformer "
                      "Engine': TE fp8 on H100, GPT-3-style models, +60% (1.6x)")
# Transformer Engine caches the fp8 weight and its transpose (module docstring): bytes per matmul
# parameter.
FP8_WEIGHT_CACHE_BYTES = 2.0
# Tensor-parallel collectives per layer per micro-batch: 2 forward + 2 backward all-reduces
# (Narayanan et al. 2021 sec. 2.3); activation recomputation repeats the 2 forward ones.
TP_ALLREDUCES = 4
TP_ALLREDUCES_RECOMPUTE = 2


@dataclass(frozen=True)
class Layout:
    """How a job's GPUs divide the work: tp x pp x cp model-parallel groups, dp replicas."""
    tp: int = 1
    pp: int = 1
    cp: int = 1
    dp: int = 1

    @property
    def model_parallel(self) -> int:
        return self.tp * self.pp * self.cp

    @property
    def is_parallel(self) -> bool:
        return self.model_parallel > 1


def layout(w: Workload, gpus: int) -> tuple[Layout, list[str]]:
    """The job's layout on `gpus` GPUs (dp = gpus / (tp pp cp)), with a note when the GPU count
    (e.g. `size --gpus`) is not a multiple of tp pp cp: the extra GPUs hold no replica."""
    tp, pp, cp = w.tensor_parallel, w.pipeline_parallel, w.context_parallel
    mp = tp * pp * cp
    dp = max(1, gpus // mp)
    notes = []
    if mp > 1:
        notes.append(f"parallelism: tp {tp} x pp {pp} x cp {cp} x dp {dp} = {mp * dp} GPUs "
                     "(tp with sequence parallelism; Megatron-LM)")
        if gpus % mp:
            notes.append(f"{gpus} GPUs are not a multiple of tp x pp x cp = {mp}: "
                         f"{gpus - mp * dp} idle")
    return Layout(tp, pp, cp, dp), notes


# The data-parallel part of a layout's name, by `sharding` (docs/sizing.md "Parallelism and
# precision"): FSDP names itself, ZeRO is a stage of data parallelism.
_DP_NAMES = {"fsdp": "FSDP{dp}", "zero2": "DP{dp} (ZeRO-2)", "zero3": "DP{dp} (ZeRO-3)",
             "none": "DP{dp}"}


def describe(w: Workload, lay: Layout, gpus_per_node: int = 8) -> str:
    """The layout in words, model-parallel degrees first, then the data-parallel one with its
    sharding: "TP8 x FSDP8 over 8 nodes", "FSDP8", "1 GPU". `gpus_per_node` only counts
    nodes (an HGX / DGX board holds 8)."""
    parts = [f"{name}{deg}" for name, deg in (("TP", lay.tp), ("PP", lay.pp), ("CP", lay.cp))
             if deg > 1]
    if lay.dp > 1:
        parts.append(_DP_NAMES[w.sharding].format(dp=lay.dp))
    gpus = lay.model_parallel * lay.dp
    if not parts:
        return "1 GPU"
    nodes = math.ceil(gpus / gpus_per_node)
    return " x ".join(parts) + (f" over {nodes} nodes" if nodes > 1 else "")


def layout_dict(w: Workload, gpus: int, gpus_per_node: int = 8) -> dict[str, object]:
    """The layout `size --json` reports: degrees, sharding, precision and its name."""
    lay, _ = layout(w, gpus)
    return {"tensor_parallel": lay.tp, "pipeline_parallel": lay.pp, "context_parallel": lay.cp,
            "data_parallel": lay.dp, "sharding": w.sharding, "precision": w.precision,
            "gpus": gpus, "description": describe(w, lay, gpus_per_node),
            # the schedule, its micro-batches per flush and the loss split (sizing/pipeline.py)
            "pipeline_schedule": w.pipeline_schedule,
            "virtual_stages": pipeline.virtual_stages(w),
            "pipeline_micro_batches": pipeline.flush_micro_batches(w) if lay.pp > 1 else None,
            "vocab_parallel_loss": vocab_parallel(w, lay)}


def stage_layers(w: Workload, lay: Layout) -> int:
    """Layers on the heaviest pipeline stage."""
    return math.ceil(w.arch.num_layers / lay.pp)


def model_share(w: Workload, lay: Layout) -> float:
    """The share of the model's parameters (and so of its gradients and optimizer states) one
    GPU holds: the heaviest stage's layers (+ embedding on the first, output layer on the last),
    over tp."""
    if lay.tp * lay.pp == 1:
        return 1.0
    a = w.arch
    per_layer = a.linear_params_per_layer()
    total = a.num_layers * per_layer + a.embedding_params + a.lm_head_params
    layers = stage_layers(w, lay)
    if lay.pp == 1:
        stage = total
    else:
        stage = layers * per_layer + max(a.embedding_params, a.lm_head_params)
    return stage / total / lay.tp


def activation_split(lay: Layout) -> int:
    """What divides one micro-batch's activations on a GPU: tp (sequence parallel) x cp."""
    return lay.tp * lay.cp


def layers_held(w: Workload, lay: Layout) -> int:
    """Layers' worth of one micro-batch's activations the heaviest GPU holds: its micro-batches
    (model chunks) in flight under the workload's pipeline schedule (sizing/pipeline.py)."""
    return pipeline.layers_held(w, lay.pp)


def vocab_parallel(w: Workload, lay: Layout) -> bool:
    """Whether the loss runs on logits split over the tp ranks: tp > 1 and the workload's
    `vocab_parallel_loss`, else its framework's default (Megatron-LM and torchtitan do it;
    Narayanan et al. 2021 sec. 2.3: the output embedding's GEMM is parallelized and fused with
    the cross-entropy loss so each rank only exchanges b x s scalars, not the logits)."""
    if lay.tp <= 1:
        return False
    on = w.vocab_parallel_loss
    return profile(w.framework).vocab_parallel_loss if on is None else on


def logits_split(w: Workload, lay: Layout) -> tuple[int, str]:
    """(what divides one GPU's logits, the breakdown's words for it): cp (each rank computes the
    loss of its own tokens) x tp when the loss is vocabulary-parallel."""
    if vocab_parallel(w, lay):
        words = f"logits, vocabulary-parallel over TP {lay.tp}"
        return lay.tp * lay.cp, words + (f" x CP {lay.cp}" if lay.cp > 1 else "")
    if lay.tp > 1:
        return lay.cp, (f"logits gathered on every TP rank ({w.framework} computes no "
                        "vocabulary-parallel loss" + (", vocab_parallel_loss = false"
                                                      if w.vocab_parallel_loss is False else "")
                        + ")" + (f"; / CP {lay.cp}" if lay.cp > 1 else ""))
    return lay.cp, f"logits / CP {lay.cp}" if lay.cp > 1 else ""


def fp8_weight_cache_bytes(w: Workload) -> float:
    """Bytes of Transformer Engine's cached fp8 weights (+ transposes), before any split."""
    if w.precision != "fp8":
        return 0.0
    return w.arch.num_layers * w.arch.linear_params_per_layer() * FP8_WEIGHT_CACHE_BYTES


def fp8_activation_saving(w: Workload) -> float:
    """Bytes per token per layer saved when the Linear inputs are kept in fp8 (1 B, not 2): the
    inputs of the q/k/v, out, up/gate and down projections (sizing/memory.py counts them)."""
    if w.precision != "fp8":
        return 0.0
    a = w.arch
    return (a.hidden_size + a.q_dim + a.hidden_size + a.intermediate_size) * 1.0


def pipeline_bubble(pp: int, micro_batches: int, v: int = 1) -> float:
    """Share of a step the pipeline stands idle: (pp - 1) / (m v + pp - 1) (sizing/pipeline.py;
    v = 1 is 1F1B)."""
    return pipeline.bubble_fraction(pp, micro_batches, v)


def tp_bytes_per_step(w: Workload, lay: Layout) -> float:
    """Bytes one GPU sends in tensor-parallel collectives per optimizer step: per layer of its
    stage and per micro-batch, 4 all-reduces (6 with recomputation) of the layer's activation
    (tokens / cp x hidden x 2 B); a ring all-reduce sends 2 (tp - 1) / tp of the buffer."""
    if lay.tp <= 1:
        return 0.0
    tokens = w.seq_len * w.micro_batch / lay.cp
    buffer = tokens * w.arch.hidden_size * 2.0
    n = TP_ALLREDUCES + (TP_ALLREDUCES_RECOMPUTE if w.grad_checkpointing else 0)
    per_layer = n * 2 * (lay.tp - 1) / lay.tp * buffer
    return per_layer * stage_layers(w, lay) * w.grad_accum


def cp_bytes_per_step(w: Workload, lay: Layout) -> float:
    """Bytes one GPU sends in the context-parallel ring per step: each of the cp - 1 ring steps
    passes its K and V chunk (tokens / cp x 2 kv_dim x 2 B) on in the forward pass, and K, V and
    their gradients in the backward pass (3x the forward volume)."""
    if lay.cp <= 1:
        return 0.0
    tokens = w.seq_len * w.micro_batch / lay.cp
    kv = tokens * 2 * w.arch.kv_dim * 2.0
    return (lay.cp - 1) * kv * 3 * stage_layers(w, lay) * w.grad_accum


@dataclass(frozen=True)
class StepTime:
    scaling: float  # ideal compute time / step time
    notes: tuple[str, ...]


def step_time(w: Workload, lay: Layout, t_comp: float, t_overlapped: float,
              tp_gbs: float, tp_link: str, other_gbs: float) -> StepTime:
    """Scaling of one step: compute `t_comp` (s, already split over the GPUs), overlapped with
    the data-parallel collectives `t_overlapped` (s) and the CP ring; then the pipeline bubble;
    then the TP collectives on the critical path over `tp_link` (`tp_gbs` GB/s per direction)."""
    notes = []
    t_cp = cp_bytes_per_step(w, lay) / (other_gbs * 1e9) if lay.cp > 1 else 0.0
    busy = max(t_comp, t_overlapped + t_cp)
    m = pipeline.flush_micro_batches(w)
    bubble = pipeline_bubble(lay.pp, m, pipeline.virtual_stages(w))
    t_tp = tp_bytes_per_step(w, lay) / (tp_gbs * 1e9) if lay.tp > 1 else 0.0
    step = busy / (1 - bubble) + t_tp
    if lay.pp > 1:
        notes.append(f"pipeline bubble (pp {lay.pp}, {m} micro-batches per flush, "
                     f"{pipeline.describe(w, lay.pp)}): "
                     f"{bubble:.0%} of the step idle")
    if lay.tp > 1:
        notes.append(f"tensor-parallel collectives over {tp_link} ({tp_gbs:g} GB/s): "
                     f"{t_tp:.2f} s per step on the critical path")
    if lay.cp > 1:
        notes.append(f"context-parallel K/V ring: {t_cp:.2f} s per step (overlaps compute)")
    return StepTime(t_comp / step if step > 0 else 1.0, tuple(notes))
