"""Memory per GPU for a training workload, with its breakdown (docs/sizing.md explains each term).

All sizes are in GB = 1e9 bytes (what LitGPT and nvidia-smi-style tables print as "GB").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

from gpuprices.sizing import (
    fit,
    hf_activations,
    parallel,
    param_offload,
    switches,
    unsloth_activations,
)
from gpuprices.sizing.frameworks import FrameworkProfile, profile
from gpuprices.sizing.workload import Workload

GB = 1e9
# NF4 (QLoRA paper, Dettmers et al. 2023, sec. 3): 4-bit codes + one fp32 absmax per block of
# 64 weights; with double quantization the absmax is 8-bit with one fp32 constant per 256
# blocks: 0.5 + 4/64 = 0.5625 or 0.5 + 1/64 + 4/(64*256) = 0.5159 bytes per weight.
NF4_BYTES = 0.5 + 4 / 64
NF4_DQ_BYTES = 0.5 + 1 / 64 + 4 / (64 * 256)
# bitsandbytes 8-bit optimizers: two uint8 states + one fp32 absmax per 2048-value block each
# (Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization").
ADAM8_BYTES = 2 + 2 * 4 / 2048
# The CUDA context and library workspaces (cuBLAS, NCCL) live outside PyTorch's allocator:
# ~0.5 GB on current drivers is what `nvidia-smi` shows for an idle PyTorch process holding a
# CUDA context (PyTorch "CUDA semantics" notes the context is not in memory_allocated).
CUDA_CONTEXT_GB = 0.5


@dataclass
class MemoryEstimate:
    workload: str
    gpu: str | None
    gpus: int
    breakdown: dict[str, float]  # GB per GPU, keys below
    notes: list[str] = field(default_factory=list)
    capacity_gb: float | None = None
    # The estimator's measured error (sizing/fit.py) unless the workload sets its own margin.
    margin: float = 0.0
    margin_measured: bool = True

    @property
    def per_gpu_gb(self) -> float:
        return sum(self.breakdown.values())

    @property
    def allocated_gb(self) -> float:
        """What torch.cuda.max_memory_allocated would show (no CUDA context)."""
        return self.per_gpu_gb - self.breakdown.get("overhead", 0.0)

    @property
    def required_gb(self) -> float:
        return self.per_gpu_gb * (1 + self.margin)

    @property
    def verdict(self) -> str | None:
        """`fits` (with the margin), `tight` (the estimate alone fits) or `no` (sizing/fit.py);
        None without a capacity."""
        if self.capacity_gb is None:
            return None
        return fit.verdict(self.per_gpu_gb, self.capacity_gb, self.margin)

    @property
    def fits(self) -> bool | None:
        """It runs if the estimate is right: `fits` or `tight` (verdict != "no")."""
        if self.capacity_gb is None:
            return None
        return self.verdict != "no"

    @property
    def headroom_gb(self) -> float | None:
        if self.capacity_gb is None:
            return None
        return self.capacity_gb - self.required_gb


def _param_bytes(precision: str) -> float:
    # bf16-true keeps parameters in bf16; mixed precision keeps fp32 parameters (autocast
    # computes in 16-bit); fp32 is fp32 throughout.
    return 2.0 if precision == "bf16-true" else 4.0


def lora_params(w: Workload) -> int:
    """Adapter parameters: rank x (in + out) per targeted matrix per layer."""
    a, r = w.arch, w.lora_rank
    h, q, kv, i = a.hidden_size, a.q_dim, a.kv_dim, a.intermediate_size
    shapes = {
        "qv": [(h, q), (h, kv)],
        "attn": [(h, q), (h, kv), (h, kv), (q, h)],
    }
    mlp = [(h, i), (h, i), (i, h)] if a.mlp == "swiglu" else [(h, i), (i, h)]
    shapes["all"] = shapes["attn"] + mlp
    return a.num_layers * sum(r * (fan_in + fan_out) for fan_in, fan_out in shapes[w.lora_targets])


def _lora_saved_inputs(w: Workload, mlp_tile: float = 1.0) -> float:
    """Elements per token per layer the adapters save: the (dropout-applied) input of each
    targeted matrix, plus a 1-byte dropout mask (0.5 element) when dropout is on. The MLP's
    i-wide input counts for one shard under a tiled MLP (`mlp_tile` = 1 / shards)."""
    a = w.arch
    h, q, i = a.hidden_size, a.q_dim, a.intermediate_size * mlp_tile
    ins = {"qv": [h, h], "attn": [h, h, h, q]}
    ins["all"] = ins["attn"] + ([h, h, i] if a.mlp == "swiglu" else [h, i])
    per = 1.5 if w.lora_dropout else 0.0  # without dropout the input is the shared x
    return per * sum(ins[w.lora_targets])


def activation_elements_per_token(w: Workload) -> tuple[float, float]:
    """(16-bit elements, residual-stream elements) saved per token per layer for backward.

    Counted tensor by tensor for a pre-norm decoder block with FlashAttention (it saves q, k, v,
    the output and a per-head logsumexp, never the s x s scores):
      2 norm inputs (residual stream)                               2h   [residual]
      inputs of the q/k/v, out, up/gate and down projections        h + q + h + i
      q, k, v and the attention output (FlashAttention)             2q + 2kv
      MLP: gated: gate, up, act(gate) = 3i; GELU: fc output = i
    Inputs of frozen projections are counted too: with LoRA on a frozen bf16 base the LitGPT
    resource tables show ~7.8 GB per extra 1.3k-token sample for Llama 2 7B, which is this full
    count (~46 bytes x hidden per token per layer) and not the smaller trainable-only count.
    """
    a = w.arch
    h, q, kv, i = a.hidden_size, a.q_dim, a.kv_dim, a.intermediate_size
    # tiled MLP (sizing/switches.py): the i-wide MLP tensors exist for one sequence shard
    tile = 1.0 / switches.mlp_tiles(w, switches.resolve(w, profile(w.framework)))
    mlp = (3 if profile(w.framework).saves_swiglu_product else 2) * i if a.mlp == "swiglu" \
        else i
    elems = 2 * h + (h + q + h) + (2 * q + 2 * kv) + (i + mlp) * tile
    if w.method in ("lora", "qlora"):
        elems += _lora_saved_inputs(w, tile)
    if w.method == "qlora" and not profile(w.framework).own_lora_kernels:
        # bitsandbytes MatMul4Bit saves its own (compute-dtype) copy of each quantized layer's
        # input. Measured: QLoRA peaks in the LitGPT resource tables exceed LoRA minus the
        # weight savings by ~13-18 bytes x hidden per token per layer (Llama 2 7B/13B,
        # phi-1.5); one extra copy of the four projection inputs is that size.
        elems += h + q + h + i * tile
    return elems, 2 * h


def attention_scores_bytes_per_seq(w: Workload) -> float:
    """Eager attention saves the s x s probabilities per head: fp32 softmax output (4) and the
    16-bit copy fed to the value matmul (2). FlashAttention saves none of it."""
    if w.flash_attention:
        return 0.0
    return w.arch.num_attention_heads * w.seq_len * w.seq_len * 6.0


def _is_mixed(w: Workload) -> bool:
    return w.precision in ("bf16-mixed", "fp16-mixed")


def _weights_bytes(w: Workload, prof: FrameworkProfile, sharded: bool,
                   notes: list[str]) -> float:
    """The model's weights on one GPU before sharding, with autocast's saved 16-bit copies."""
    a = w.arch
    params = a.params
    linear = a.num_layers * a.linear_params_per_layer()
    if w.method == "qlora":
        qbytes = NF4_DQ_BYTES if w.double_quant else NF4_BYTES
        quantized = linear + (a.lm_head_params if prof.quantize_lm_head else 0)
        quantized = min(quantized, params)
        rest = params - quantized
        rest_bytes = 4.0 if prof.kbit_fp32_unquantized else 2.0
        weights = quantized * qbytes + rest * rest_bytes
        notes.append(f"weights: {quantized / 1e9:.2f}B params NF4 at {qbytes:.4f} B/param "
                     f"({'double-quant' if w.double_quant else 'fp32 absmax'}) + "
                     f"{rest / 1e9:.2f}B unquantized (embeddings/norms"
                     f"{'' if prof.quantize_lm_head else '/lm_head'}) at {rest_bytes:g} B"
                     f"{' (prepare_model_for_kbit_training upcasts)' if rest_bytes == 4 else ''}")
        return weights
    pbytes = _param_bytes(w.precision)
    weights = params * pbytes
    notes.append(f"weights: {params / 1e9:.2f}B params x {pbytes:g} B ({w.precision})")
    fp8_cache = parallel.fp8_weight_cache_bytes(w)
    if fp8_cache:
        weights += fp8_cache
        notes.append(f"fp8: +{fp8_cache / 1e9:.1f} GB cached fp8 weights and transposes "
                     "(Transformer Engine; master weights stay fp32)")
    if _is_mixed(w) and not sharded and not w.grad_checkpointing:
        # autocast casts each weight to 16-bit for its matmul; the cast copy is saved for the
        # backward pass, so one 16-bit copy of all matmul weights is alive at peak.
        # Measured: StableLM 3B LoRA 26.92 GB bf16-mixed vs 9.69 GB bf16-true (LitGPT
        # tutorials/finetune_lora.md) = fp32 weights + bf16 copies + fp32 residuals.
        # With checkpointing only the recomputed layer keeps its copies; under FSDP/ZeRO-3
        # the 16-bit weights are the gathered units counted below.
        weights += linear * 2.0
        notes.append(f"autocast: +{linear / 1e9:.2f}B x 2 B 16-bit weight copies saved "
                     "for backward")
    return weights


class _Trainable(NamedTuple):
    params: int  # trainable parameters
    bytes_per_param: float
    adapters: float  # bytes of adapter weights (0 for full fine-tuning: they are the weights)
    grads: float  # bytes of gradients


def _trainable(w: Workload, prof: FrameworkProfile, notes: list[str]) -> _Trainable:
    """What is trained: the LoRA adapters, or every parameter; with its gradients."""
    if w.method in ("lora", "qlora"):
        trainable = lora_params(w)
        tbytes = prof.adapter_bytes or (2.0 if w.precision == "bf16-true" else 4.0)
        notes.append(f"LoRA r={w.lora_rank} on {w.lora_targets}: {trainable / 1e6:.1f}M "
                     f"params x {tbytes:g} B ({prof.adapter_note})")
        grads = _grads_held(w, prof, trainable * tbytes, _largest_lora_matrix(w), tbytes, notes)
        return _Trainable(trainable, tbytes, trainable * tbytes, grads)
    pbytes = _param_bytes(w.precision)
    a = w.arch
    largest = max(a.vocab_size * a.hidden_size, a.hidden_size * a.intermediate_size,
                  a.hidden_size * a.q_dim)
    grads = _grads_held(w, prof, a.params * pbytes, largest, pbytes, notes)
    return _Trainable(a.params, pbytes, 0.0, grads)


def _largest_lora_matrix(w: Workload) -> int:
    a = w.arch
    return w.lora_rank * max(a.hidden_size, a.intermediate_size, a.q_dim)


def _grads_held(w: Workload, prof: FrameworkProfile, grads: float, largest: int,
                bytes_per_param: float, notes: list[str]) -> float:
    """Gradients alive at peak (the optimizer-in-backward switch, sizing/switches.py)."""
    held, note = switches.gradient_bytes(w, switches.resolve(w, prof), grads, largest,
                                         bytes_per_param)
    if note:
        notes.append(note)
    return held


def _optimizer_bytes(w: Workload, t: _Trainable, notes: list[str]) -> float:
    if w.optimizer == "adamw":
        # torch AdamW keeps exp_avg and exp_avg_sq in the parameter dtype.
        notes.append(f"AdamW: 2 states x {t.bytes_per_param:g} B per trainable param")
        return t.params * 2 * t.bytes_per_param
    paged = " (paged: counted up to the card's free memory, the rest spills to host RAM)" \
        if switches.resolve(w, profile(w.framework)).paged_optimizer else ""
    notes.append(f"8-bit AdamW: {ADAM8_BYTES:.3f} B per trainable param{paged}")
    return t.params * ADAM8_BYTES


class _Sharding(NamedTuple):
    weights: float  # share of the weights (and adapters) each GPU holds
    grads: float
    optimizer: float
    gathered: float  # bytes of weights gathered from the other GPUs, alive at peak


def _sharding(w: Workload, prof: FrameworkProfile, n: int, weights: float,
              notes: list[str], lay: parallel.Layout | None = None) -> _Sharding:
    """The share of each term one of `n` data-parallel GPUs holds under the workload's
    sharding, times the share tensor / pipeline parallelism leaves it (sizing/parallel.py)."""
    lay = lay or parallel.Layout()
    mp = parallel.model_share(w, lay)
    if mp < 1:
        notes.append(f"tp {lay.tp} x pp {lay.pp}: weights, grads, optimizer x {mp:.4f} "
                     f"(1/{lay.tp} of the heaviest stage's {parallel.stage_layers(w, lay)} "
                     "layers; Narayanan et al. 2021)")
        s = _sharding(w, prof, n, weights * mp, notes)
        # the gathered FSDP units are layers' matrices, themselves split over tp; a full weight
        # copy (litgpt profile) was given the GPU's own share already
        gathered = s.gathered if prof.fsdp_full_weight_copy else s.gathered / lay.tp
        return _Sharding(s.weights * mp, s.grads * mp, s.optimizer * mp, gathered)
    if n > 1 and w.sharding == "zero2":
        notes.append(f"ZeRO-2: gradients and optimizer states / {n}")
        return _Sharding(1.0, 1.0 / n, 1.0 / n, 0.0)
    if n > 1 and w.sharding in ("zero3", "fsdp"):
        unit = w.arch.linear_params_per_layer() * (2.0 if w.method != "qlora" else NF4_BYTES)
        if prof.fsdp_full_weight_copy:
            gathered = weights
        else:
            gathered = 2 * unit * (1 - 1.0 / n)
        notes.append(f"{w.sharding.upper()}: weights, grads, optimizer / {n}; {prof.fsdp_note}")
        return _Sharding(1.0 / n, 1.0 / n, 1.0 / n, gathered)
    return _Sharding(1.0, 1.0, 1.0, 0.0)


def _layer_bytes_per_token(w: Workload, prof: FrameworkProfile, act_bytes: float,
                           resid_bytes: float) -> float:
    """Bytes one layer saves per token: transformers + PEFT LoRA counted from their code
    (sizing/hf_activations.py), every other case by the generic count; residual-stream tensors
    are fp32 under autocast, the rest 16-bit (fp32 under fp32)."""
    if prof.hf_lora_modules and w.method == "lora":
        tile = 1.0 / switches.mlp_tiles(w, switches.resolve(w, prof))
        return hf_activations.lora_layer_bytes(w, prof.adapter_bytes or act_bytes, act_bytes,
                                               resid_bytes, tile)
    if unsloth_activations.applies(w, prof.own_lora_kernels):
        tile = 1.0 / switches.mlp_tiles(w, switches.resolve(w, prof))
        return unsloth_activations.lora_layer_bytes(w, act_bytes, resid_bytes, tile)
    elems, resid = activation_elements_per_token(w)
    return elems * act_bytes + resid * (resid_bytes - act_bytes)


def _activations_bytes(w: Workload, prof: FrameworkProfile, sharded: bool,
                       notes: list[str], layers: int | None = None) -> float:
    """Activations saved for backward, per GPU: its own micro-batch, over `layers` layers (all
    of them; under pipeline parallelism the stage's layers x micro-batches in flight)."""
    a = w.arch
    act_bytes = 4.0 if w.precision == "fp32" else 2.0
    # autocast keeps the residual stream in fp32; FSDP/ZeRO-3 mixed precision instead computes
    # with 16-bit gathered parameters, so its residual stream is 16-bit.
    # hf QLoRA: prepare_model_for_kbit_training casts the embeddings to fp32, so the residual
    # stream (checkpointed layer inputs, norm inputs) is fp32 (TRL skips that call for sharded
    # QLoRA: SFTTrainer._prepare_peft_model, is_sharded_qlora).
    kbit_fp32 = w.method == "qlora" and prof.kbit_fp32_unquantized and not sharded
    resid_bytes = 4.0 if (w.precision == "fp32" or (_is_mixed(w) and not sharded)
                          or kbit_fp32) else 2.0
    tokens = w.seq_len * w.micro_batch
    per_layer_tok = _layer_bytes_per_token(w, prof, act_bytes, resid_bytes) \
        - parallel.fp8_activation_saving(w)
    layers = a.num_layers if layers is None else layers
    per_layer = per_layer_tok * tokens + attention_scores_bytes_per_seq(w) * w.micro_batch
    sw = switches.resolve(w, prof)
    mask = switches.packing_mask_bytes(w, sw)
    if mask:
        notes.append(f"packing without FlashAttention: block-causal mask {mask / GB:.2f} GB")
    if w.grad_checkpointing:
        # A pipeline stage holds only its own layers' inputs (`layers`).
        on_gpu = min(layers, switches.layer_inputs_on_gpu(w, sw))
        kept = on_gpu * tokens * a.hidden_size * resid_bytes
        where = f"offloaded to CPU ({on_gpu} on the GPU)" if sw.activation_offload else "kept"
        notes.append(f"activations: checkpointed layer inputs {where}"
                     f" + one layer recomputed ({per_layer_tok / a.hidden_size:.1f} B x hidden "
                     f"per token{', MLP tiled' if sw.tiled_mlp else ''})")
        return kept + per_layer + mask  # one layer recomputed at a time
    layers = min(layers, switches.OFFLOAD_LAYERS_ON_GPU) if sw.activation_offload else layers
    where = " on the GPU (rest offloaded)" if sw.activation_offload else ""
    notes.append(f"activations: {layers} layers{where}"
                 f" x {per_layer_tok / a.hidden_size:.1f}"
                 f" B x hidden per token x {tokens} tokens"
                 f"{'' if w.flash_attention else ' + eager s x s scores'}")
    return layers * per_layer + mask


def _logits_bytes(w: Workload, prof: FrameworkProfile, notes: list[str]) -> float:
    """The loss's logits for one micro-batch: full, chunked or fused (sizing/switches.py)."""
    held, note = switches.logits_bytes(w, prof, switches.resolve(w, prof))
    notes.append(note)
    return held


def estimate_memory(w: Workload, gpu: str | None = None, gpus: int | None = None,
                    capacity_gb: float | None = None) -> MemoryEstimate:
    """Peak memory per GPU. `gpus` is the job's GPU count; sharding divides by its data-parallel
    degree gpus / (tp pp cp) (sizing/parallel.py). Each term has its own function, which
    appends its notes."""
    prof = profile(w.framework)
    total = max(1, gpus or w.gpus or 1)
    lay, notes = parallel.layout(w, total)
    n = lay.dp
    sharded = n > 1 and w.sharding in ("zero3", "fsdp")
    weights = _weights_bytes(w, prof, sharded, notes)
    trained = _trainable(w, prof, notes)
    opt = _optimizer_bytes(w, trained, notes)
    shard = _sharding(w, prof, n, weights, notes, lay)
    acts = _activations_bytes(w, prof, sharded, notes, parallel.layers_held(w, lay)) \
        / parallel.activation_split(lay)
    logits = _logits_bytes(w, prof, notes) / lay.cp
    if lay.is_parallel:
        notes.append(f"activations / {parallel.activation_split(lay)} (tp x cp: sequence "
                     f"parallelism, Korthikanti et al. 2022), {parallel.layers_held(w, lay)} "
                     "layers held (1F1B in-flight micro-batches); logits / cp (not split by "
                     "tp: no vocabulary-parallel loss assumed)")
    breakdown = {
        "weights": (weights * shard.weights + shard.gathered) / GB,
        "adapters": trained.adapters * shard.weights / GB,
        "gradients": trained.grads * shard.grads / GB,
        "optimizer": opt * shard.optimizer / GB,
        "activations": acts / GB,
        "logits": logits / GB,
        "overhead": CUDA_CONTEXT_GB,
    }
    _offload_params(w, prof, breakdown, notes)
    _page_optimizer(w, prof, breakdown, capacity_gb, notes)
    return MemoryEstimate(
        workload=w.name, gpu=gpu, gpus=total, breakdown=breakdown, notes=notes,
        capacity_gb=capacity_gb,
        margin=fit.measured_margin().margin if w.margin is None else w.margin,
        margin_measured=w.margin is None,
    )


def _offload_params(w: Workload, prof: FrameworkProfile, breakdown: dict[str, float],
                    notes: list[str]) -> None:
    """Weights, gradients and optimizer states in host RAM (sizing/param_offload.py): only the
    gathered modules in flight and their gradients are counted on the GPU."""
    if not switches.resolve(w, prof).offload_params:
        return
    weights, grads = param_offload.on_gpu_bytes(w)
    breakdown["weights"] = weights / GB
    breakdown["gradients"] = min(breakdown["gradients"], grads / GB) if grads else \
        breakdown["gradients"]
    breakdown["optimizer"] = 0.0
    notes.append(f"offload_params: weights, gradients and optimizer states in host RAM; on the "
                 f"GPU two gathered layers + the output layer ({weights / GB:.2f} GB) and their "
                 "gradients (DeepSpeed ZeRO-3 offload_param / offload_optimizer)")


def _page_optimizer(w: Workload, prof: FrameworkProfile, breakdown: dict[str, float],
                    capacity_gb: float | None, notes: list[str]) -> None:
    """Paged optimizer states count at most up to the card's memory left by the other terms;
    the rest spills to host RAM (bitsandbytes paged optimizers, sizing/switches.py)."""
    rest = sum(v for k, v in breakdown.items() if k != "optimizer")
    on_gpu, spilled = switches.paged_spill(breakdown["optimizer"], rest, capacity_gb,
                                           switches.resolve(w, prof))
    if spilled > 0:
        breakdown["optimizer"] = on_gpu
        notes.append(f"paged optimizer: {spilled:.2f} GB of states spill to host RAM (counted "
                     f"up to the card's {capacity_gb:g} GB; each step pages them over PCIe)")


def min_gpus_to_fit(w: Workload, capacity_gb: float, max_gpus: int = 512) -> int | None:
    """Smallest power-of-two GPU count at which the workload `fits` with the margin, else the
    smallest at which it is `tight` (None if never)."""
    counts = [1] if w.sharding == "none" else \
        [2 ** k for k in range(max_gpus.bit_length()) if 2 ** k <= max_gpus]
    return fit.prefer_fits(
        (estimate_memory(w, gpus=n, capacity_gb=capacity_gb).verdict or "no", n)
        for n in counts)


def fmt_gb(x: float) -> str:
    return f"{x:.1f}" if math.isfinite(x) else "inf"
