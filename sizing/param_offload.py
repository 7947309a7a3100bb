"""Weights, gradients and optimizer states offloaded to host RAM (the `offload_params` switch):
what stays on the GPU (docs/sizing.md "Long context and memory switches").

DeepSpeed ZeRO-3 with `offload_param: {device: cpu}` and `offload_optimizer: {device: cpu}`
(ZeRO-Infinity; the ALST recipes of snowflakedb/ArcticTraining projects/sequence-parallelism
run this way on one GPU) keeps the fp32 master weights, the optimizer states and their update
on the CPU (ZeRO-Offload, Ren et al. 2021: "offloads gradients, optimizer states and optimizer
computation to CPU"); the 16-bit parameters are fetched to the GPU module by module as the
forward and backward reach them, and each gradient is moved to host memory as soon as it is
reduced. At the peak (the start of the backward) the GPU holds:
* the gathered 16-bit parameters in flight: the layer being computed and the prefetched next
  one (the same two units as FSDP / ZeRO-3 without offload, sizing/memory.py), plus the output
  layer (vocab x hidden), whose backward starts it all;
* the gradients of those same modules before they leave;
* no optimizer state.
Adapters (LoRA) and everything activation-side are unchanged.
"""

from __future__ import annotations

from gpuprices.sizing.workload import Workload


def on_gpu_bytes(w: Workload) -> tuple[float, float]:
    """(weights bytes, gradient bytes) on the GPU with offloaded parameters."""
    a = w.arch
    unit = a.linear_params_per_layer() * 2.0
    head = a.vocab_size * a.hidden_size * 2.0
    weights = 2 * unit + head
    grads = (2 * unit + head) if w.method == "full" else 0.0
    return weights, grads
