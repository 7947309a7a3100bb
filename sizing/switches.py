"""The memory switches frameworks expose, and what each does to memory and speed.

A workload may set each switch; unset (None) it takes the framework profile's default
(sizing/frameworks.py, each default with its source). docs/sizing.md, "Long context and memory
switches", documents every term. The memory terms are hooks called from sizing/memory.py, the
speed terms from sizing/throughput.py.

Sources, read in the frameworks' own code and docs:
* loss "chunked": torchtune `CEWithChunkedOutputLoss` (torchtune/modules/loss/ce_chunked_output_
  loss.py, num_output_chunks=8): the output projection returns 8 bf16 chunks and only one chunk
  at a time is upcast to fp32 ("saves memory by only upcasting one chunk at a time").
* loss "fused": Liger Kernel `LigerFusedLinearCrossEntropyLoss` (liger_kernel/ops/fused_linear_
  cross_entropy.py: the lm_head matmul and the loss run per chunk of tokens, chunk size
  next_power_of_2(BT / ceil(V / H)) so one chunk of logits is the size of the hidden states; the
  input gradient is computed in the forward pass) and Apple's Cut Cross-Entropy, which Unsloth
  calls by default (unsloth_zoo.loss_utils.fused_linear_cross_entropy, UNSLOTH_ENABLE_CCE
  default "1"): the T x vocab logits are never materialised.
* activation_offload: torchtune `OffloadActivations` (training/_activation_offloading.py; TRL
  copies it as `get_act_offloading_ctx_manager`): saved tensors go to pinned host memory in the
  forward pass and come back in the backward pass on a side stream (use_streams=True), so the
  transfer overlaps compute; Unsloth's use_gradient_checkpointing="unsloth" offloads each
  checkpointed layer input the same way. torchtune's memory-optimisation tutorial: "may decrease
  training speed. This should be used alongside activation checkpointing."
* optimizer_in_backward: torchtune `optimizer_in_bwd` (training/memory.py
  OptimizerInBackwardWrapper / register_optim_in_bwd_hooks): each parameter's optimizer step
  runs in a post-accumulate-grad hook and its gradient is freed at once; the tutorial: "not
  compatible with gradient accumulation".
* paged_optimizer: bitsandbytes paged optimizers (docs "Paged optimizers"): states in CUDA
  unified memory, "automatically evicted to CPU RAM when the GPU runs out of memory" and paged
  back when the update needs them.
* packing: TRL `SFTConfig(packing=True)` / torchtune `packed=True` datasets: samples are
  concatenated into full seq_len rows, so no padding; attention stays within each sample
  (FlashAttention varlen / position_ids in TRL; torchtune a block-causal mask, materialised as
  a bool seq x seq tensor per row when flex attention is not available).
* tiled_mlp: Arctic Long Sequence Training (Snowflake, arXiv 2506.13996, `TiledMLP` in
  DeepSpeed / ArcticTraining; Unsloth's `unsloth_tiled_mlp`): the MLP runs over shards of the
  sequence, ceil(seq / hidden) of them, so only one shard's intermediates live at a time.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from gpuprices.sizing.frameworks import FrameworkProfile
from gpuprices.sizing.workload import LOSSES, Workload

__all__ = ["LOSSES", "Switches", "resolve"]
# Bytes per logit element of a loss that materialises the fp32 logits (transformers'
# ForCausalLMLoss upcasts logits to float, then cross_entropy = log_softmax + nll_loss). The peak
# is at the start of backward, all activations still held: the fp32 log-softmax saved by
# cross_entropy (4) + nll_loss's fp32 input gradient (4) + log_softmax's fp32 gradient (4). The
# bf16 logits (2) and their fp32 upcast (4) are freed by then (nothing saves them; the trainer
# drops the model output before backward), so the forward's 2 + 4 + 4 is the lower peak.
# Seen in the trace engine: 12.6 GB of fp32 at the loss for 8192 x 128256 logits.
FULL_LOGIT_BYTES = 12.0
# Chunked: the bf16 logits stay whole (2 B), the fp32 upcast and its gradient (4 + 4) exist for
# one chunk at a time: 2 + 8 / chunks (torchtune's 8 chunks: 3 B).
CHUNK_FP32_BYTES = 8.0
# Fused (Liger, CCE): one token chunk of logits sized like the hidden states, plus the input
# gradient computed in the forward pass: 2 + 2 bytes x hidden per token.
FUSED_BYTES_PER_HIDDEN = 4.0
# torchtune OffloadActivations keeps a forward stash of consecutive tensors on the GPU while
# they are copied (TRL's copy: max_fwd_stash_size=5); for checkpointed layer inputs that is the
# layer being recomputed and the one in flight.
OFFLOAD_LAYERS_ON_GPU = 2
# Host link per direction when gpus.csv names no PCIe generation: PCIe Gen5 x16 64 GB/s for
# Hopper, Blackwell and CDNA3 (H100 datasheet "PCIe Gen5 128 GB/s" bidirectional; MI300X
# datasheet "PCIe Gen 5 x16"), Gen4 x16 32 GB/s for older cards (PCI-SIG).
HOST_LINK_GBS = {"gen5": 64.0, "gen4": 32.0}
GEN5_FAMILIES = ("Hopper", "Blackwell", "Blackwell Ultra", "CDNA3", "CDNA4")


class Switches(NamedTuple):
    loss: str
    loss_chunks: int
    activation_offload: bool
    optimizer_in_backward: bool
    paged_optimizer: bool
    packing: bool
    tiled_mlp: bool
    offload_params: bool


def resolve(w: Workload, prof: FrameworkProfile) -> Switches:
    """The workload's switches, each unset one from the framework profile's default."""
    def pick(value, default):
        return default if value is None else value
    return Switches(
        loss=pick(w.loss, prof.loss),
        loss_chunks=pick(w.loss_chunks, prof.loss_chunks),
        activation_offload=pick(w.activation_offload, prof.activation_offload),
        optimizer_in_backward=pick(w.optimizer_in_backward, False),
        paged_optimizer=pick(w.paged_optimizer, w.optimizer.startswith("paged")),
        packing=pick(w.packing, False),
        tiled_mlp=pick(w.tiled_mlp, False),
        offload_params=pick(w.offload_params, False),
    )


def switches_dict(w: Workload, prof: FrameworkProfile) -> dict[str, object]:
    """The switches in force (`size --json`) and which of them the workload set itself (the
    rest are the framework profile's defaults)."""
    s = resolve(w, prof)
    return {**s._asdict(), "set_by_workload": [k for k in Switches._fields
                                               if getattr(w, k) is not None],
            "defaults_from": prof.name}


def logits_bytes(w: Workload, prof: FrameworkProfile, s: Switches) -> tuple[float, str]:
    """Bytes at the loss for one micro-batch, and the note saying why."""
    tokens = w.seq_len * w.micro_batch
    v, h = w.arch.vocab_size, w.arch.hidden_size
    if s.loss == "fused":
        per = prof.fused_bytes_per_hidden
        what = ("the input gradient only; Cut Cross-Entropy" if per < FUSED_BYTES_PER_HIDDEN
                else "one logits chunk the size of the hidden states + input gradient; Liger "
                "FLCE")
        return (tokens * h * per,
                f"logits: fused linear cross-entropy, never materialised: {tokens} tokens x "
                f"hidden {h} x {per:g} B ({what})")
    if s.loss == prof.loss and s.loss_chunks == prof.loss_chunks:
        per, why = prof.logits_bytes, prof.logits_note  # the framework's own implementation
    elif s.loss == "chunked":
        per = 2.0 + CHUNK_FP32_BYTES / s.loss_chunks
        why = f"bf16 logits + fp32 of one chunk in {s.loss_chunks} (CEWithChunkedOutputLoss)"
    else:
        per, why = FULL_LOGIT_BYTES, "fp32 log-softmax + two fp32 grads at the backward"
    return tokens * v * per, f"logits: {tokens} tokens x vocab {v} x {per:g} B ({why})"


def mlp_tiles(w: Workload, s: Switches) -> int:
    """Shards of the sequence the MLP runs over: ceil(seq / hidden) with tiling (ALST), else 1."""
    if not s.tiled_mlp:
        return 1
    return max(1, math.ceil(w.seq_len / w.arch.hidden_size))


def layer_inputs_on_gpu(w: Workload, s: Switches) -> int:
    """Checkpointed layer inputs held on the GPU: all of them, or with offloading only the
    layer being recomputed and the one in flight."""
    n = w.arch.num_layers
    return min(n, OFFLOAD_LAYERS_ON_GPU) if s.activation_offload else n


def gradient_bytes(w: Workload, s: Switches, trainable_grads: float,
                   largest_tensor_params: int, bytes_per_param: float) -> tuple[float, str]:
    """Gradients alive at peak: all of them, or with the optimizer step in backward only the
    largest single parameter's (each is stepped and freed as soon as it is accumulated)."""
    if not s.optimizer_in_backward:
        return trainable_grads, ""
    held = min(trainable_grads, largest_tensor_params * bytes_per_param)
    return held, (f"optimizer step in backward: one gradient at a time, the largest "
                  f"{largest_tensor_params / 1e6:.1f}M params x {bytes_per_param:g} B")


def paged_spill(opt_gb: float, rest_gb: float, capacity_gb: float | None,
                s: Switches) -> tuple[float, float]:
    """(optimizer GB counted on the GPU, GB spilled to host). Paged states are counted at most
    up to the card's memory left by everything else; the rest lives in host RAM."""
    if not s.paged_optimizer or capacity_gb is None or rest_gb >= capacity_gb:
        return opt_gb, 0.0  # (with the rest alone over the card nothing fits: count it all)
    on_gpu = min(opt_gb, max(0.0, capacity_gb - rest_gb))
    return on_gpu, opt_gb - on_gpu


def packing_mask_bytes(w: Workload, s: Switches) -> float:
    """Packed rows without FlashAttention's varlen path carry a block-causal bool mask of
    seq x seq per row (torchtune packed_block_causal_mask); with FlashAttention none."""
    if not s.packing or w.flash_attention:
        return 0.0
    return w.micro_batch * w.seq_len * w.seq_len * 1.0


def host_link_gbs(family: str, interconnect: str) -> float:
    """GB/s per direction between the GPU and host memory."""
    text = interconnect.lower()
    for gen in ("gen5", "gen4"):
        if gen in text.replace(" ", ""):
            return HOST_LINK_GBS[gen]
    return HOST_LINK_GBS["gen5" if family in GEN5_FAMILIES else "gen4"]


def offload_bytes_per_token(w: Workload, s: Switches, saved_bytes_per_token: float) -> float:
    """Bytes copied to the host per token in the forward pass (and back in the backward)."""
    return saved_bytes_per_token if s.activation_offload else 0.0


def speed_factor(w: Workload, s: Switches, tokens_per_s: float, fwd_share: float,
                 offload_bytes_tok: float, link_gbs: float) -> tuple[float, list[str]]:
    """Multiplier on tokens/s from the switches, and notes.

    * activation offload: the copies overlap compute on a side stream; each pass takes the
      longer of its compute and its copy (out in the forward, back in the backward);
    * packing: without it, a micro-batch of several rows pads them to the longest (taken as
      seq_len), so real tokens are mean_sample_tokens / seq_len of the work; packing removes it.
    """
    notes: list[str] = []
    factor = 1.0
    if offload_bytes_tok > 0 and tokens_per_s > 0:
        t = 1.0 / tokens_per_s
        copy = offload_bytes_tok / (link_gbs * 1e9)
        slowed = max(t * fwd_share, copy) + max(t * (1 - fwd_share), copy)
        factor *= t / slowed
        notes.append(f"activation offload: {offload_bytes_tok / 1e3:.0f} kB per token each way "
                     f"over {link_gbs:g} GB/s host link, overlapped: speed x {t / slowed:.2f}")
    mean = w.mean_sample_tokens
    if mean and mean < w.seq_len and w.micro_batch > 1 and not s.packing:
        factor *= mean / w.seq_len
        notes.append(f"no packing: rows padded to seq_len {w.seq_len}, mean sample {mean:g} "
                     f"tokens: speed x {mean / w.seq_len:.2f} (packing = true removes it)")
    return factor, notes
