"""Tokens per second and wall hours: FLOPs per token over peak dense TFLOPS x utilization, times
a scaling efficiency from the interconnect.

Utilization is hardware-FLOPs utilization (HFU: recomputed forward passes count as work), so
recomputation shows up as more FLOPs per token, as the issue asks.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, replace

from gpuprices.sizing import parallel, switches
from gpuprices.sizing.efficiency import Efficiency, efficiency_for, hfu_ceiling, size_factor
from gpuprices.sizing.frameworks import profile
from gpuprices.sizing.memory import NF4_BYTES, activation_elements_per_token, lora_params
from gpuprices.sizing.workload import Workload
from gpuprices.warehouse.gpus import GpuModel

# HFU per GPU class (and method where the measurement distinguishes them) comes from
# sizing/gpu_efficiency.csv, a public source per row (sizing/efficiency.py).
# QLoRA iterations are slower than LoRA on the same GPU because every matmul dequantizes its
# NF4 weight first (memory-bound). LitGPT resource tables (A100 40GB, bnb 0.41): QLoRA/LoRA
# time per 1k iterations = 1.77/1.62 (phi-1.5), 1.82/1.24 (StableLM 3B), 3.68/2.36 (Llama 2
# 7B), 6.38/3.19 (13B) = 1.09, 1.47, 1.56, 2.00 -> median 1.5.
QLORA_SLOWDOWN = 1.5
# Batch: the utilisation rows were measured with micro-batches of 4k-16k tokens (LLMQ: 4-16
# sequences of 1024; PyTorch FSDP blog Table 1: 2 x 4096; llm-foundry's MPT rows: 2048-token
# sequences, several per GPU). Above 4k tokens the sources show no batch effect on compute:
# LLMQ's Qwen2.5-3B on one RTX 5090 with nothing sharded runs 8.2k vs 8.6k tokens/s (bf16) and
# 13k vs 13k (fp8) at 4 vs 8 sequences (github.com/IST-DASLab/llmq README, RTX 5090 table);
# its larger swings (7B: 2.5k vs 3.1k) come with weights moved to the GPU per micro-batch,
# which comm_bytes_per_step charges per micro-batch. Below 4k nothing is measured, except
# LLMQ's word on the H100 that "smaller batch sizes drastically reduce efficiency": such a
# workload gets a note, not a made-up factor.
MEASURED_MICRO_BATCH_TOKENS = 4096
# Across nodes, when the offer does not state its network:
# * 8-GPU NVLink boards (HGX/DGX, OAM): 400 Gb/s per GPU (= 50 GB/s), the NVIDIA HGX H100
#   reference design with one 400G NDR port per GPU;
# * anything else (single-GPU pods, PCIe boxes): a 25 Gb/s Ethernet VM network per node
#   (= 3.125 GB/s), e.g. AWS g5.4xlarge/g6.4xlarge "up to 25 Gigabit" (aws.amazon.com/ec2/
#   instance-types/g5).
HGX_INTERNODE_GBS_PER_GPU = 50.0
ETHERNET_NODE_GBS = 25 / 8
DEFAULT_INTERNODE_GBS = HGX_INTERNODE_GBS_PER_GPU


def internode_gbs_per_gpu(gpu: GpuModel, gpus_per_node: int,
                          offer_interconnect: str | None = None) -> tuple[float, str]:
    """Per-GPU bandwidth across nodes (GB/s per direction) and where the figure comes from."""
    if offer_interconnect:
        m = re.search(r"(\d+(?:\.\d+)?)\s*(Tbps|Tb/s|Gbps|Gb/s)", offer_interconnect, re.I)
        if m:
            gbit = float(m.group(1)) * (1000 if m.group(2).lower().startswith("t") else 1)
            return gbit / 8 / max(1, gpus_per_node), "offer's interconnect"
    if gpu.form_factor in ("sxm", "oam", "superchip") and gpus_per_node >= 4:
        return HGX_INTERNODE_GBS_PER_GPU, "HGX reference fabric (400 Gb/s per GPU)"
    return (ETHERNET_NODE_GBS / max(1, gpus_per_node),
            "25 Gb/s Ethernet per node (no fabric stated)")
# PCIe x16 per direction: Gen4 32 GB/s, Gen5 64 GB/s (PCI-SIG; half the bidirectional figure
# datasheets print).
PCIE_GBS = {"gen3": 16.0, "gen4": 32.0, "gen5": 64.0, "gen6": 128.0}
# What NCCL collectives among the GPUs of one PCIe box (no NVLink) reach, GB/s of bus bandwidth
# per GPU (nccl-tests busbw: time = bytes x (n-1)/n / busbw for a ring):
# * Gen4: NCCL's own topology model rates a Gen4 x16 link at 24 GB/s ("PCI[24.0]", "maxBw 24.0"
#   in the NCCL_DEBUG topology dump of 8x RTX 4090, github.com/NVIDIA/nccl-tests/issues/307);
# * Gen5: 8x RTX 5090 measured 28 GB/s all-reduce busbw (35 GB/s on 4 GPUs), and the NCCL
#   maintainer's answer: on PCIe systems the figure "is usually determined by the bandwidth your
#   CPU and memory can deliver" (github.com/NVIDIA/nccl/issues/1639); the reporter finds 8x RTX
#   4090 (Gen4) little different, so Gen4 is not lower than NCCL's 24.
# Gen3 and Gen6 (no measurement) keep three quarters of the link, the Gen4 ratio (24 / 32).
PCIE_COLLECTIVE_GBS = {"gen3": 12.0, "gen4": 24.0, "gen5": 28.0, "gen6": 96.0}
# The figures above need GPU peer-to-peer (P2P) access. Without it NCCL stages every transfer
# through host memory (its SHM transport): GeForce cards get no P2P from NVIDIA's driver, and
# cloud VMs and containers often run with it off (IOMMU / ACS); an offer never says which. So a
# PCIe box is timed WITHOUT P2P unless `GPUPRICES_PCIE_P2P=1` (P2P_ENV) says the buyer's has it
# (the conservative default: a buyer who has P2P gets a faster run than the rank says):
# * Gen4: 20 GB/s. A host-staged copy between two RTX 4090s with P2P disabled measured
#   20.1-22.4 GB/s per direction (p2pBandwidthLatencyTest "Unidirectional P2P=Disabled"
#   matrix, 6x RTX 4090, github.com/NVIDIA/nccl/issues/814); a collective staged through host
#   memory moves each byte the same way and does not beat the copy.
# * Gen5: 28 GB/s either way: the 8x RTX 5090 figure above was measured on GeForce cards
#   and, in the NCCL maintainer's words, is what "your CPU and memory can deliver" (nccl#1639).
# * Gen3 / Gen6: no measurement without P2P; the P2P figure is kept.
PCIE_NO_P2P_COLLECTIVE_GBS = {"gen3": 12.0, "gen4": 20.0, "gen5": 28.0, "gen6": 96.0}
# Without P2P every GPU of the box stages its ring traffic through the SAME host memory at the
# same time, so the per-GPU rate above (measured one pair at a time) falls with the number of
# cards: per GPU min(rate, host aggregate / GPUs). The NCCL maintainer on PCIe boxes: the rate
# "is usually determined by the bandwidth your CPU and memory can deliver ... with 8 GPUs,
# that's 8 flows at 28GB/s in both directions" (github.com/NVIDIA/nccl/issues/1639), and SHM
# between GPUs reaches "9 or 6" GB/s (github.com/NVIDIA/nccl/issues/406). Aggregates:
# * Gen4: 49 GB/s = 8 x 6.13, the all-reduce bus bandwidth 8 AD102 cards (L20) reached through
#   host memory (SHM transport; github.com/NVIDIA/nccl/issues/1817). It is the mean over
#   8 B-512 MB messages, so a low bound on the large-message rate: conservative, like the
#   no-P2P default itself. 2 GPUs keep 20, 4 get 12.3, 8 get 6.1 GB/s.
# * Gen5: 224 GB/s = 8 x 28, the 8 x RTX 5090 box of nccl#1639 (dual Xeon 8480+, DDR5):
#   8 GPUs keep 28, so Gen5 boxes of up to 8 cards are unchanged.
# * Gen3 / Gen6: no measurement; no cap.
PCIE_NO_P2P_HOST_GBS = {"gen4": 8 * 6.13, "gen5": 8 * 28.0}
P2P_ENV = "GPUPRICES_PCIE_P2P"


def pcie_p2p_assumed() -> bool:
    """Whether PCIe boxes are timed with GPU peer-to-peer access (`GPUPRICES_PCIE_P2P=1`)."""
    return os.environ.get(P2P_ENV, "").strip().lower() in ("1", "true", "yes", "on")
# NVLink generations by total bidirectional bandwidth per GPU (NVIDIA NVLink page:
# NVLink 2 300 GB/s, 3 600 GB/s, 4 900 GB/s, 5 1.8 TB/s); AMD MI300X Infinity Fabric 896 GB/s
# aggregate (AMD MI300X datasheet), used for MI3xx parts whose row gives no figure.
NVLINK_GBS = {"2": 300.0, "3": 600.0, "4": 900.0, "5": 1800.0}
INFINITY_FABRIC_GBS = 896.0


@dataclass
class Throughput:
    tokens_per_s: float  # whole job
    tokens_per_s_per_gpu: float
    flops_per_token: float
    hfu: float
    hfu_source: str
    scaling_efficiency: float
    link: str
    link_gbs: float
    hours: float
    notes: list[str]
    # No published training measurement for the GPU's class: the HFU is derived or borrowed
    # (hfu_source says which), and every output says "efficiency assumed".
    efficiency_assumed: bool = False
    efficiency_class: str = ""
    efficiency_basis: str = ""  # training | same-stack | proxy-card | small-model | gemm-derived
    #                             | fallback
    # What the HFU was measured on, for values not taken from the class's own row
    # (sizing/efficiency.py Efficiency.measured_at); rank shows it.
    efficiency_measured_at: str = ""


def hfu_for(gpu: GpuModel, method: str = "any") -> Efficiency:
    """The HFU of the GPU's class for this method, with its source and whether it is assumed."""
    return efficiency_for(gpu, method)


ASSUMED_BASIS = {"gemm-derived": "scaled from its measured BF16 matmul rate",
                 "fallback": "the H100's value borrowed",
                 "fp8-scaled": "the bf16 value x a published fp8 speed-up",
                 "proxy-card": "measured on another card of the same die",
                 "small-model": "measured only on a sub-1B model (GPT-2 124M)"}


def efficiency_assumed_note(tp: Throughput) -> str:
    """The sentence every output carries when the HFU is not a measurement of the GPU's class
    (short: the row's inputs / the size JSON carry the full source)."""
    how = ASSUMED_BASIS.get(tp.efficiency_basis, tp.efficiency_basis)
    if tp.efficiency_basis == "small-model":
        return (f"efficiency assumed: GPU class {tp.efficiency_class or '?'} {how}, "
                f"moved along the size trend (HFU {tp.hfu:.1%})")
    if tp.efficiency_basis == "proxy-card":
        return (f"efficiency assumed: no published training measurement of this card "
                f"(HFU {tp.hfu:.1%}, {how}: {tp.efficiency_measured_at})")
    return (f"efficiency assumed: no published training measurement for GPU class "
            f"{tp.efficiency_class or '?'} (HFU {tp.hfu:.1%}, {how})")


def model_flops_per_token(w: Workload) -> float:
    """PaLM appendix B convention: 6N + 12 x layers x q_dim x seq (attention) for full training."""
    a = w.arch
    attn = 12 * a.num_layers * a.q_dim * w.seq_len
    if w.method in ("lora", "qlora"):
        # frozen weights need no weight-gradient matmul: forward 2N + input-gradient 2N, plus
        # the adapters trained in full (6 x their params).
        return 4 * a.params + attn + 6 * lora_params(w)
    return 6 * a.params + attn


def hardware_flops_per_token(w: Workload) -> float:
    flops = model_flops_per_token(w)
    if w.grad_checkpointing:
        a = w.arch
        flops += 2 * a.params + 4 * a.num_layers * a.q_dim * w.seq_len  # one more forward
    return flops


def _sized_efficiency(w: Workload, gpu: GpuModel, eff: Efficiency,
                      notes: list[str]) -> Efficiency:
    """The class's HFU moved along the model-size trend from the size it was measured at to
    the workload's (sizing/efficiency.py size_factor), at most what the card's plain matmul
    reaches (hfu_ceiling)."""
    factor, why = size_factor(w.arch.params, eff.gpu_class, eff.reference_params)
    if factor == 1.0:
        return eff
    notes.append(f"HFU {why}")
    hfu, source = eff.hfu * factor, f"{eff.source}; {why}"
    cap, what = hfu_ceiling(gpu)
    if hfu > cap:
        notes.append(f"HFU capped at {cap:.1%} of the datasheet peak: {what}")
        hfu, source = cap, f"{source}; capped at {what}"
    return replace(eff, hfu=hfu, source=source)


def _precision_efficiency(w: Workload, gpu: GpuModel, eff: Efficiency,
                          notes: list[str]) -> Efficiency:
    """fp8: the class's bf16 HFU x the published fp8 speed-up, expressed against the card's fp8
    peak (sizing/parallel.py, FP8_SPEEDUP), always flagged assumed. A card without an fp8 peak
    keeps its bf16 figures (compat.py calls fp8 on it incompatible)."""
    if w.precision != "fp8":
        return eff
    if not gpu.fp8_dense_tflops or not gpu.bf16_dense_tflops:
        notes.append(f"{gpu.gpu_model}: no fp8 peak in warehouse/gpus.csv; timed at bf16")
        return eff
    hfu = eff.hfu * parallel.FP8_SPEEDUP * gpu.bf16_dense_tflops / gpu.fp8_dense_tflops
    notes.append(f"fp8: {gpu.fp8_dense_tflops:g} TFLOPS peak x HFU {hfu:.1%} = bf16 HFU "
                 f"{eff.hfu:.1%} x {parallel.FP8_SPEEDUP:g} ({parallel.FP8_SPEEDUP_SOURCE})")
    return replace(eff, hfu=hfu, source=f"{eff.source}; x {parallel.FP8_SPEEDUP:g} for fp8: "
                   f"{parallel.FP8_SPEEDUP_SOURCE}", assumed=True, basis="fp8-scaled")


def switch_speed_factor(w: Workload, gpu: GpuModel, tokens_per_s: float,
                        notes: list[str]) -> float:
    """Tokens/s multiplier of the memory switches (sizing/switches.py): activation offload
    over the host link, padding without packing."""
    sw = switches.resolve(w, profile(w.framework))
    a = w.arch
    if w.grad_checkpointing:
        saved = a.num_layers * a.hidden_size * 2.0  # the checkpointed layer inputs
    else:
        elems, _ = activation_elements_per_token(w)
        saved = a.num_layers * elems * 2.0
    fwd = 2 * a.params + 4 * a.num_layers * a.q_dim * w.seq_len
    factor, more = switches.speed_factor(
        w, sw, tokens_per_s, fwd / hardware_flops_per_token(w),
        switches.offload_bytes_per_token(w, sw, saved),
        switches.host_link_gbs(gpu.family, gpu.interconnect))
    notes.extend(more)
    return factor


def link_bandwidth(gpu: GpuModel, gpus_per_node: int, nodes: int,
                   internode_gbs: float | None = None,
                   p2p: bool | None = None, shared_host: bool = True) -> tuple[str, float]:
    """(kind, GB/s per GPU per direction) of the slowest link a collective crosses.

    Datasheets print bidirectional aggregates; a ring uses one direction, so half is used.
    SXM/OAM/superchip parts talk over NVLink / Infinity Fabric; PCIe cards over PCIe at what NCCL
    collectives measure there (PCIE_COLLECTIVE_GBS: the host caps it below the link rate;
    PCIE_NO_P2P_COLLECTIVE_GBS without peer-to-peer access, the default: `p2p` None reads
    GPUPRICES_PCIE_P2P), except a bridged pair (NVL, A6000 bridge) when the job has at most 2.
    Without P2P the box's GPUs share the host's memory (PCIE_NO_P2P_HOST_GBS / gpus_per_node);
    `shared_host=False` gives the rule before that (bench/pcie_cards.py's before column).
    """
    text = gpu.interconnect
    gen = re.search(r"gen\s*(\d)", text, re.I)
    gen_key = f"gen{gen.group(1)}" if gen else "gen4"
    no_p2p = not (pcie_p2p_assumed() if p2p is None else p2p)
    rates = PCIE_NO_P2P_COLLECTIVE_GBS if no_p2p else PCIE_COLLECTIVE_GBS
    kind, gbs = "pcie", rates.get(gen_key, 12.0)
    if no_p2p and shared_host and gen_key in PCIE_NO_P2P_HOST_GBS:
        gbs = min(gbs, PCIE_NO_P2P_HOST_GBS[gen_key] / max(1, gpus_per_node))
    stated = re.search(r"(\d+(?:\.\d+)?)\s*(TB|GB)/s", text)
    stated_gbs = None
    if stated:
        stated_gbs = float(stated.group(1)) * (1000 if stated.group(2) == "TB" else 1)
    if gpu.form_factor in ("sxm", "oam", "superchip"):
        m = re.search(r"NVLink (\d)", text)
        total = stated_gbs or (NVLINK_GBS.get(m.group(1)) if m else None) or INFINITY_FABRIC_GBS
        kind, gbs = ("nvlink" if "NVLink" in text else "fabric"), total / 2
    elif "bridge" in text.lower() and stated_gbs and gpus_per_node * nodes <= 2:
        kind, gbs = "nvlink-bridge", stated_gbs / 2
    if nodes > 1:
        inter = internode_gbs or DEFAULT_INTERNODE_GBS
        if inter < gbs:
            kind, gbs = "multi-node", inter
    return kind, gbs


def comm_bytes_per_step(w: Workload, gpus: int, share: float = 1.0) -> float:
    """Bytes each GPU sends per optimizer step (all its micro-batches) in the data-parallel
    collectives over `gpus` replicas (ring collectives: (n-1)/n of the buffer); `share` is the
    part of the model a GPU holds under tensor / pipeline parallelism (sizing/parallel.py)."""
    if gpus <= 1:
        return 0.0
    frac = (gpus - 1) / gpus * share
    if w.method in ("lora", "qlora"):
        grad_bytes = lora_params(w) * 4.0
        return 2 * frac * grad_bytes + fsdp_frozen_gather_bytes(w, frac)
    p16 = w.arch.params * 2.0
    if w.sharding in ("zero3", "fsdp"):
        # Every micro-batch all-gathers the parameters for its forward and again for its
        # backward (they are freed in between: that is the sharding) and reduce-scatters its
        # gradients: PyTorch FSDP docs ("all-gathers parameters before forward and backward
        # computation ... reduce-scatter gradients after backward"; only `no_sync()` skips the
        # reduce-scatter, at the memory cost of unsharded gradients); DeepSpeed ZeRO-3 gathers
        # and partitions per micro-step the same way. So gradient accumulation multiplies it.
        return 3 * frac * p16 * max(1, w.grad_accum)
    if w.sharding == "zero2":
        # ZeRO-2 keeps only its partition of the gradients, so it reduce-scatters after every
        # backward, not at the accumulation boundary ("gradient reduction is required after
        # every backward because of gradient partitioning", DeepSpeed maintainer,
        # deepspeedai/DeepSpeed#2252), then all-gathers the updated parameters once.
        return frac * p16 * (max(1, w.grad_accum) + 1)
    # DDP: one all-reduce per optimizer step; accumulation runs under no_sync() (PyTorch
    # DDP.no_sync, pytorch/pytorch#21736: "only kick off expensive grad synchronize every a few
    # iterations"; HF Accelerate's accumulate() and the HF Trainer use it).
    return 2 * frac * w.arch.params * ddp_grad_bytes(w)


def ddp_grad_bytes(w: Workload) -> float:
    """Bytes per gradient element DDP all-reduces: the parameters' dtype. Mixed precision
    (torch.autocast) keeps fp32 parameters, so their gradients, and DDP's buckets, are fp32:
    PyTorch's default DDP hook all-reduces the bucket as it is, and fp16_compress_hook /
    bf16_compress_hook exist to cast it to 16 bits first (docs.pytorch.org, DDP Communication
    Hooks; default_hooks.py); a 0.6B model's "fp32 grad payload is 2.26 GiB/step" under bf16
    autocast DDP (github.com/sonnetx/pluggy notes/DDP.md). bf16-true / fp8 runs hold 16-bit
    parameters and reduce 16-bit gradients."""
    return 4.0 if w.precision in ("bf16-mixed", "fp16-mixed", "fp32") else 2.0


def fsdp_frozen_gather_bytes(w: Workload, frac: float) -> float:
    """LoRA / QLoRA under FSDP / ZeRO-3: the frozen base is sharded too, so every micro-batch
    all-gathers it before the forward and again before the backward (PyTorch FSDP docs, as for
    full fine-tuning; PEFT's FSDP guide shards the base with the adapters), in 16-bit, or as
    NF4 codes for QLoRA (the quant storage that FSDP QLoRA shards). No reduce-scatter: the base
    has no gradients."""
    if w.sharding not in ("zero3", "fsdp"):
        return 0.0
    a = w.arch
    base = a.params * (NF4_BYTES if w.method == "qlora" else 2.0)
    return 2 * frac * base * max(1, w.grad_accum)


def overlapped_step(w: Workload, t_comp: float, t_comm: float) -> float:
    """Seconds of one optimizer step's compute `t_comp` (all its micro-batches) with its
    data-parallel collectives `t_comm` (comm_bytes_per_step), each collective hidden only
    behind the pass it belongs to, in the micro-batch it runs in:

    * FSDP / ZeRO-3 all-gather the parameters before every micro-batch's forward and again
      before its backward and reduce-scatter its gradients after it (PyTorch FSDP docs;
      DeepSpeed ZeRO-3 per micro-step): 1/3 of the bytes behind each forward, 2/3 behind each
      backward. LoRA under FSDP gathers its frozen base the same way; the adapters' gradient
      reduce is placed in the last backward.
    * ZeRO-2 reduce-scatters behind every backward (deepspeedai/DeepSpeed#2252) and all-gathers
      the updated parameters after the optimizer step, where no compute is left to hide it.
    * DDP (and ZeRO-1) reduce once per step, under no_sync() for the other micro-batches: only
      the LAST micro-batch's backward can hide the all-reduce, not all of them.

    The forward's share of the work is its FLOPs over the step's (recompute runs in the
    backward). With fast links every collective fits inside its pass: the step is the
    compute."""
    if t_comm <= 0:
        return t_comp
    ga = max(1, w.grad_accum)
    a = w.arch
    fwd = (2 * a.params + 4 * a.num_layers * a.q_dim * w.seq_len) \
        / hardware_flops_per_token(w)
    c_fwd, c_bwd = fwd * t_comp / ga, (1 - fwd) * t_comp / ga  # one micro-batch's passes
    once_bwd = exposed = 0.0  # in the last backward; after the step
    if w.method == "full" and w.sharding in ("zero3", "fsdp"):
        mb_fwd, mb_bwd = t_comm / 3 / ga, 2 * t_comm / 3 / ga
    elif w.sharding in ("zero3", "fsdp"):  # LoRA: the base gathered once per pass
        gather = fsdp_frozen_gather_bytes(w, 1.0)
        total = gather + 2 * lora_params(w) * 4.0
        g = t_comm * gather / total if total else 0.0
        mb_fwd = mb_bwd = g / 2 / ga
        once_bwd = t_comm - g
    elif w.sharding == "zero2" and w.method == "full":
        mb_fwd, mb_bwd = 0.0, t_comm * ga / (ga + 1) / ga
        exposed = t_comm / (ga + 1)
    else:
        mb_fwd, mb_bwd, once_bwd = 0.0, 0.0, t_comm
    return (ga * max(c_fwd, mb_fwd) + (ga - 1) * max(c_bwd, mb_bwd)
            + max(c_bwd, mb_bwd + once_bwd) + exposed)


def estimate_throughput(w: Workload, gpu: GpuModel, gpus_per_node: int = 1, nodes: int = 1,
                        internode_gbs: float | None = None,
                        offer_interconnect: str | None = None,
                        shared_host: bool = True) -> Throughput:
    notes: list[str] = []
    if nodes > 1 and internode_gbs is None:
        internode_gbs, net_src = internode_gbs_per_gpu(gpu, gpus_per_node, offer_interconnect)
        notes.append(f"across nodes: {internode_gbs:.2f} GB/s per GPU ({net_src})")
    n = gpus_per_node * nodes
    peak = gpu.bf16_dense_tflops
    if not peak:
        return Throughput(0.0, 0.0, hardware_flops_per_token(w), 0.0, "no BF16 peak", 0.0,
                          "", 0.0, math.inf, [f"{gpu.gpu_model}: no dense BF16 peak in "
                                              "warehouse/gpus.csv; time not estimated"])
    eff = _precision_efficiency(
        w, gpu, _sized_efficiency(w, gpu, hfu_for(gpu, w.method), notes), notes)
    hfu, src = eff.hfu, eff.source
    if w.precision == "fp8" and gpu.fp8_dense_tflops:
        peak = gpu.fp8_dense_tflops
    flops = hardware_flops_per_token(w)
    per_gpu = peak * 1e12 * hfu / flops
    notes.append(f"{flops / 1e9:.1f} GFLOP/token ({w.method}"
                 f"{', recompute' if w.grad_checkpointing else ''}) at {peak:g} TFLOPS x "
                 f"HFU {hfu:.1%} ({eff.gpu_class}"
                 f"{', efficiency assumed' if eff.assumed else ', measured'})")
    if eff.measured_at:
        notes.append(f"efficiency: {eff.measured_at}")
    if w.micro_batch * w.seq_len < MEASURED_MICRO_BATCH_TOKENS:
        notes.append(f"micro-batch of {w.micro_batch * w.seq_len} tokens: the utilisation was "
                     f"measured at {MEASURED_MICRO_BATCH_TOKENS}+ tokens per micro-batch; "
                     "smaller ones run slower than estimated (LLMQ)")
    per_gpu *= switch_speed_factor(w, gpu, per_gpu, notes)
    if w.method == "qlora":
        per_gpu /= QLORA_SLOWDOWN
        notes.append(f"QLoRA dequantization: / {QLORA_SLOWDOWN} (LitGPT resource tables)")
    kind, gbs = link_bandwidth(gpu, gpus_per_node, nodes, internode_gbs,
                               shared_host=shared_host)
    scaling = 1.0
    if n > 1:
        lay, _ = parallel.layout(w, n)
        step_tokens = w.micro_batch * w.seq_len * w.grad_accum
        # one step of one replica, its FLOPs split over the replica's tp x pp x cp GPUs
        t_comp = step_tokens / per_gpu / lay.model_parallel
        t_comm = comm_bytes_per_step(w, lay.dp, parallel.model_share(w, lay)) / (gbs * 1e9)
        # collectives overlap only the pass they belong to (overlapped_step)
        step = overlapped_step(w, t_comp, t_comm)
        scaling = t_comp / step
        t_hidden = t_comm if step <= t_comp else step  # what step_time maxes with t_comp
        if lay.is_parallel:
            # TP stays inside a node when it fits there (its collectives run over NVLink)
            tp_kind, tp_gbs = (link_bandwidth(gpu, gpus_per_node, 1, shared_host=shared_host)
                               if lay.tp <= gpus_per_node else (kind, gbs))
            st = parallel.step_time(w, lay, t_comp, t_hidden, tp_gbs, tp_kind, gbs)
            scaling = st.scaling
            notes.extend(st.notes)
        shared = kind == "pcie" and gbs < link_bandwidth(gpu, gpus_per_node, nodes,
                                                          shared_host=False)[1]
        p2p = "" if kind != "pcie" else (
            ", P2P assumed" if pcie_p2p_assumed() else
            f", no GPU peer-to-peer assumed: {P2P_ENV}=1 if the box has it"
            + (f"; {gpus_per_node} GPUs staging through one host's memory" if shared else ""))
        notes.append(f"{n} GPUs over {kind} ({gbs:.3g} GB/s{p2p}): compute {t_comp:.2f} s vs "
                     f"communication {t_comm:.2f} s per step -> scaling {scaling:.0%}")
    total = per_gpu * n * scaling
    hours = w.tokens / total / 3600 if total > 0 else math.inf
    return Throughput(total, per_gpu * scaling, flops, hfu, src, scaling, kind, gbs, hours,
                      notes, efficiency_assumed=eff.assumed, efficiency_class=eff.gpu_class,
                      efficiency_basis=eff.basis, efficiency_measured_at=eff.measured_at)
