"""The trace engine (opt-in, `gpuprices size --engine trace`): peak memory of a real training
step (forward, loss, backward, AdamW step; the second, when the optimizer states exist) of a
Hugging Face model built from the workload's architecture, traced on the CPU under
FakeTensorMode by PyTorch's MemTracker. No weights are downloaded, no GPU is used, fake
tensors hold no data (docs/sizing.md, "The trace engine").

Sharded jobs (FSDP, ZeRO-3) are traced as one rank, the way torchtitan's
scripts/estimate/estimation.py does it: a fake process group of the job's size (collectives do
nothing), FSDP2's fully_shard per decoder layer and the root, and torch's FSDPMemTracker.

torch, transformers and peft are the optional extra `gpuprices[trace]` (~200 MB for the CPU
build of torch). They are imported inside the functions that trace, never at this module's
top: the rest of sizing/ stays pure Python, and `import gpuprices.sizing.trace` (what the CLI does
to ask `available()`) costs nothing when the extra is not installed.

What it cannot see (`unsupported()` says which applies): QLoRA and 8-bit optimizers
(bitsandbytes kernels are CUDA-only), fused CUDA kernels (fused or chunked losses of other
frameworks), tensor / pipeline / context parallelism, ZeRO-1/2, activation offloading; and the
CUDA context, which lives outside PyTorch's allocator (added as sizing/memory.py's documented
CUDA_CONTEXT_GB term).
"""

from __future__ import annotations

import contextlib
import importlib.util
import time
from dataclasses import dataclass

from gpuprices.sizing.memory import CUDA_CONTEXT_GB, GB
from gpuprices.sizing.workload import Architecture, Workload

EXTRA_HINT = "the trace engine needs torch, transformers and peft: pip install 'gpuprices[trace]'"
# The CUDA caching allocator rounds every block up to a multiple of 512 bytes
# (c10/cuda/CUDACachingAllocator.cpp kMinBlockSize = 512); MemTracker does the same for CUDA
# tensors only (_PYTORCH_MIN_ALLOCATE), and ours are CPU fakes, so it is applied here.
CUDA_BLOCK_BYTES = 512
# PEFT LoRA dropout: the value the HF/PEFT recipes use (PEFT LoraConfig examples, TRL docs).
LORA_DROPOUT = 0.05
# Frameworks whose training step is Hugging Face transformers (+ PEFT): what is traced.
# litgpt is traced with the HF module of the same architecture, its adapters in the model dtype
# (litgpt keeps LoRA weights in the precision of the model).
TRACED_FRAMEWORKS = ("hf", "litgpt")
# Shardings traced as one rank of FSDP2 (fully_shard): ZeRO-3 shards parameters, gradients and
# optimizer states the same way (DeepSpeed docs, "ZeRO stage 3"); ZeRO-1/2 keep full
# parameters, which FSDP2 cannot express.
SHARDED = ("fsdp", "zero3")
LORA_TARGETS = {
    "qv": ["q_proj", "v_proj"],
    "attn": ["q_proj", "k_proj", "v_proj", "o_proj"],
    "all": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
}
# Module names of the GELU architectures' HF classes (PhiConfig, GPTNeoXConfig).
GELU_TARGETS = {
    "phi": {"qv": ["q_proj", "v_proj"], "attn": ["q_proj", "k_proj", "v_proj", "dense"],
            "all": ["q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2"]},
    "gpt_neox": {"qv": ["query_key_value"], "attn": ["query_key_value", "dense"],
                 "all": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"]},
}


@dataclass
class TraceEstimate:
    workload: str
    peak_bytes: int  # what torch.cuda.max_memory_allocated would show, from the trace
    peak_breakdown: dict[str, int]  # bytes by MemTracker category at the peak
    seconds: float

    @property
    def allocated_gb(self) -> float:
        return self.peak_bytes / GB

    @property
    def per_gpu_gb(self) -> float:
        """The traced peak plus the documented term the trace cannot see (CUDA context)."""
        return self.allocated_gb + CUDA_CONTEXT_GB


def available() -> bool:
    """Whether the optional extra is installed (no import of torch itself)."""
    return all(importlib.util.find_spec(m) is not None
               for m in ("torch", "transformers", "peft"))


def unsupported(w: Workload, gpus: int = 1) -> str | None:
    """Why the trace engine cannot estimate this workload, or None when it can."""
    if w.method not in ("lora", "full"):
        return (f"method {w.method}: bitsandbytes kernels are CUDA-only, a CPU trace cannot "
                "run them")
    if max(w.tensor_parallel, w.pipeline_parallel, w.context_parallel) > 1:
        return ("multi-GPU: tensor, pipeline and context parallelism are not traced (only "
                "FSDP / ZeRO-3 sharding of one rank is)")
    if gpus > 1 and w.sharding not in SHARDED:
        return (f"multi-GPU: sharding {w.sharding} is not traced (one rank of an FSDP / ZeRO-3 "
                "job is: PyTorch's FSDP memory tracker runs FSDP2's fully_shard)")
    if gpus <= 1 and w.sharding != "none":
        return (f"multi-GPU: sharding {w.sharding} on one GPU shards nothing; set gpus, or "
                "sharding = \"none\"")
    if w.precision not in ("bf16-true", "bf16-mixed", "fp32"):
        return f"precision {w.precision}: not traceable with CPU autocast"
    if w.optimizer != "adamw":
        return f"optimizer {w.optimizer}: bitsandbytes optimizers are CUDA-only"
    if w.framework not in TRACED_FRAMEWORKS:
        return (f"framework {w.framework}: its fused / chunked kernels are not the Hugging Face "
                "step the trace runs")
    if w.loss not in (None, "full") or w.activation_offload or w.tiled_mlp \
            or w.optimizer_in_backward or w.offload_params:
        return ("memory switches (chunked/fused loss, offload, tiled MLP, optimizer in backward, "
                "parameter offload)")
    return None


def _family(a: Architecture) -> str:
    if a.mlp == "swiglu":
        return "qwen2" if "qwen" in a.name.lower() else "llama"
    return "phi" if a.name.lower().startswith("phi-1") else "gpt_neox"


def hf_config(a: Architecture):
    """A transformers config from the architecture's fields (nothing downloaded)."""
    import transformers as tf

    common = dict(vocab_size=a.vocab_size, hidden_size=a.hidden_size,
                  num_hidden_layers=a.num_layers, num_attention_heads=a.num_attention_heads,
                  intermediate_size=a.intermediate_size, tie_word_embeddings=a.tie_embeddings)
    family = _family(a)
    if family in ("llama", "qwen2"):
        cls = tf.Qwen2Config if family == "qwen2" else tf.LlamaConfig  # Qwen2: q/k/v bias
        return cls(num_key_value_heads=a.num_kv_heads, head_dim=a.head_dim, **common)
    if family == "phi":  # phi-1.5: parallel attention + GELU MLP, partial rotary
        # tanh GELU as one op (litgpt: gelu_approximate="tanh"; HF phi-1_5 config "gelu_new",
        # the same function written as 8 elementwise ops that each save a copy for backward)
        return tf.PhiConfig(hidden_act="gelu_pytorch_tanh", **common)
    # GPT-NeoX (StableLM-Alpha): parallel residual, GELU MLP
    return tf.GPTNeoXConfig(**common)


@contextlib.contextmanager
def _patched_for_fake():
    """Module.to() a no-op (PEFT moves adapters to the base layer's device: fake CPU tensors
    are there already), MemTracker's sizes rounded to CUDA allocator blocks, and dropout saving
    what CUDA's saves."""
    import torch
    from torch.distributed._tools import mem_tracker as mt

    functional = torch.nn.functional
    orig_to, orig_calc = torch.nn.Module.to, mt._WeakRefInfo._calculate_mem_consumed
    orig_dropout = functional.dropout

    def calc(self) -> int:
        mem = self.size * self.element_size
        return -(-mem // CUDA_BLOCK_BYTES) * CUDA_BLOCK_BYTES

    def cuda_dropout(x, p=0.5, training=True, inplace=False):
        # CUDA's F.dropout is the fused native_dropout, which saves a 1-byte bool mask; on the
        # CPU it multiplies by a noise tensor of the input's dtype and saves that (4 B in fp32:
        # aten/src/ATen/native/Dropout.cpp _dropout_impl). native_dropout runs on fakes too.
        if not training or p == 0:
            return x
        return torch.native_dropout(x, p, True)[0]

    torch.nn.Module.to = lambda self, *a, **k: self
    mt._WeakRefInfo._calculate_mem_consumed = calc
    functional.dropout = cuda_dropout
    try:
        yield
    finally:
        torch.nn.Module.to = orig_to
        mt._WeakRefInfo._calculate_mem_consumed = orig_calc
        functional.dropout = orig_dropout


def _build(w: Workload):
    """The model (LoRA-wrapped for `lora`) and its trainable parameters, under the active
    FakeTensorMode."""
    import torch
    import transformers as tf

    dtype = torch.bfloat16 if w.precision == "bf16-true" else torch.float32
    attn = "sdpa" if w.flash_attention else "eager"  # CPU SDPA saves q, k, v, out, logsumexp
    model = tf.AutoModelForCausalLM.from_config(hf_config(w.arch), dtype=dtype,
                                                attn_implementation=attn)
    if w.grad_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if w.method == "lora":
        import peft

        targets = (LORA_TARGETS if w.arch.mlp == "swiglu" else GELU_TARGETS[_family(w.arch)])
        cfg = peft.LoraConfig(r=w.lora_rank, lora_alpha=2 * w.lora_rank,
                              target_modules=targets[w.lora_targets],
                              lora_dropout=LORA_DROPOUT if w.lora_dropout else 0.0,
                              task_type="CAUSAL_LM")
        # PEFT keeps adapters in fp32 (autocast_adapter_dtype) and casts each targeted layer's
        # input to fp32 for them; litgpt keeps adapters in the model dtype. PEFT's own cast to
        # the base layer's dtype goes through Module.to, which is a no-op here: done by hand.
        model = peft.get_peft_model(model, cfg, autocast_adapter_dtype=w.framework == "hf")
        if w.framework != "hf":
            for p in model.parameters():
                if p.requires_grad:
                    p.data = p.data.to(dtype)
    return model, [p for p in model.parameters() if p.requires_grad]


def trace(w: Workload, gpus: int = 1) -> TraceEstimate:
    """Trace one training step of `w` on one of `gpus` ranks (call `unsupported` first) and
    return that rank's peak."""
    why = unsupported(w, gpus)
    if why:
        raise ValueError(f"{w.name}: {why}")
    start = time.perf_counter()
    if gpus > 1:
        total, snap = _trace_sharded(w, gpus)
    else:
        total, snap = _trace_one_gpu(w)
    for name, extra in _outside_the_step(w, gpus).items():
        snap[name] = extra
        total += extra
    return TraceEstimate(w.name, total, snap, time.perf_counter() - start)


def _outside_the_step(w: Workload, gpus: int) -> dict[str, int]:
    """Memory the framework holds beside the traced step, as named terms. LitGPT's FSDP peak
    is its shard plus one full 16-bit copy of the weights per rank (the closed form's
    fsdp_full_weight_copy, sizing/frameworks.py: LitGPT's resource tables show LoRA on 2 GPUs
    above 1 GPU, Llama 2 7B 22.18 vs 21.30 GB). HF modules sharded by fully_shard never hold
    it, so it is added as that named term, the same size as in the closed form."""
    from gpuprices.sizing.frameworks import profile

    if gpus > 1 and profile(w.framework).fsdp_full_weight_copy:
        return {"full weight copy (litgpt FSDP)": int(w.arch.params * 2)}
    return {}


def _snapshot(peak) -> tuple[int, dict[str, int]]:
    dev = next(iter(peak))
    snap = {str(getattr(k, "value", k)): int(v) for k, v in peak[dev].items()}
    return snap.pop("Total"), snap


def _trace_one_gpu(w: Workload) -> tuple[int, dict[str, int]]:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType

    with _patched_for_fake(), FakeTensorMode():
        model, trainable = _build(w)
        opt = torch.optim.AdamW(trainable, lr=1e-4)
        ids = torch.zeros(w.micro_batch, w.seq_len, dtype=torch.long)

        def step() -> None:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=w.precision == "bf16-mixed"):
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad()

        # One step untracked first: AdamW creates its states in the first step, so only from
        # the second on do they coexist with activations and gradients (the steady-state peak).
        step()
        tracker = MemTracker()
        # Global peak only: per-module bookkeeping (ModTracker user hooks) is ~10x slower and
        # registers gradient hooks on frozen parameters, which fails under LoRA.
        tracker._mod_tracker.register_user_hooks = lambda *a, **k: None
        tracker.track_external(model, opt)

        def grad_hook(p) -> None:  # gradients attributed as such, trainable parameters only
            tracker._update_and_maybe_create_winfos(p.grad, _MemRefType.GRAD)

        for p in trainable:
            p.register_post_accumulate_grad_hook(grad_hook)
        with tracker:
            step()
        return _snapshot(tracker.get_tracker_snapshot("peak"))


@contextlib.contextmanager
def _fake_process_group(n: int):
    """A `world_size = n` process group whose collectives do nothing (torch's "fake" backend,
    torch.testing._internal.distributed.fake_pg: what torchtitan's memory estimation script
    uses) and a 1-D device mesh over it. The mesh is built outside FakeTensorMode."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise RuntimeError("a process group exists already: the trace needs its own")
    dist.init_process_group("fake", rank=0, world_size=n, store=FakeStore())
    try:
        yield init_device_mesh("cpu", (n,))
    finally:
        dist.destroy_process_group()


def _decoder_layers(model):
    """The decoder blocks, each an FSDP unit (as torchtitan and HF accelerate's auto-wrap do)."""
    import torch

    for mod in model.modules():
        if isinstance(mod, torch.nn.ModuleList) and len(mod) and \
                type(mod[0]).__name__.endswith(("DecoderLayer", "Layer")):
            return list(mod)
    raise LookupError("no decoder layer list in the model")


def _trace_sharded(w: Workload, n: int) -> tuple[int, dict[str, int]]:
    """Rank 0 of an n-rank FSDP2 job (fully_shard per decoder layer and the root), traced as
    torchtitan's scripts/estimate/estimation.py does: fake process group, FakeTensorMode and
    torch's FSDPMemTracker, which names sharded / unsharded parameters and gradients, optimizer
    states, activations and the all-gather / reduce-scatter buffers."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    # bf16-mixed: fp32 sharded parameters, bf16 compute copies, gradients reduced in fp32
    # (FSDP2's MixedPrecisionPolicy, as torchtitan sets it); otherwise the parameters' dtype.
    # FSDP2 keeps PEFT's fp32 adapters beside the bf16 base in one group.
    mp = (MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
          if w.precision == "bf16-mixed" else MixedPrecisionPolicy())
    with _fake_process_group(n) as mesh, _patched_for_fake(), FakeTensorMode():
        model, _ = _build(w)
        for layer in _decoder_layers(model):
            fully_shard(layer, mesh=mesh, mp_policy=mp)
        fully_shard(model, mesh=mesh, mp_policy=mp)
        # After sharding: the optimizer holds the sharded DTensor parameters (states per shard).
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
        ids = torch.zeros(w.micro_batch, w.seq_len, dtype=torch.long)

        def step() -> None:
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad()

        step()  # untracked: AdamW's states appear in its first step
        tracker = FSDPMemTracker(model, opt)
        tracker.track_inputs((ids,))
        with tracker:
            step()
        return _snapshot(tracker.get_tracker_snapshot("peak"))
