"""The fp32 copies transformers and PEFT keep for backward beyond a 16-bit count of the same
tensors: the breakdown's `fp32 upcasts` term (docs/sizing.md, "Memory per GPU"). Found by the
trace engine (sizing/trace.py; bench/closed_vs_trace.py shows the closed form with and without
them against traced steps); each is read off the line of code that makes it:

* RMSNorm: transformers' `LlamaRMSNorm.forward` (Qwen2RMSNorm, MistralRMSNorm copy it;
  GemmaRMSNorm runs `self._norm(x.float())`) does `hidden_states = hidden_states.to(
  torch.float32)`; `pow(2)` and the multiply by `torch.rsqrt(variance + eps)` save that fp32
  tensor: 4 B per element for each of the block's two norms, where a 16-bit residual stream
  would save 2. (GELU families' `nn.LayerNorm` saves its input in the model dtype: none.)
* PEFT LoRA: `peft/tuners/lora/layer.py` `Linear.forward` (and `bnb.py` `Linear4bit.forward`)
  calls `x = self._cast_input_dtype(x, lora_A.weight.dtype)` before `lora_A(dropout(x))`; with
  `autocast_adapter_dtype=True` (the default) the adapters are fp32 on a bf16 base, so each
  targeted layer keeps an fp32 copy of its input (the dropout output with dropout, the cast
  itself without), where adapters in the model dtype would keep a 16-bit one.

Only the `hf` profile runs that code (`FrameworkProfile.hf_lora_modules`): torchtune, LitGPT and
Unsloth have their own norms and LoRA layers.
"""

from __future__ import annotations

from gpuprices.sizing import hf_activations
from gpuprices.sizing.frameworks import FrameworkProfile
from gpuprices.sizing.workload import Workload

FP32 = 4.0


def rmsnorm_bytes(w: Workload, prof: FrameworkProfile, resid_bytes: float) -> float:
    """Extra bytes per token per layer of the two fp32 RMSNorm inputs over `resid_bytes`."""
    if not prof.hf_lora_modules or w.arch.mlp != "swiglu" or resid_bytes >= FP32:
        return 0.0
    return 2 * w.arch.hidden_size * (FP32 - resid_bytes)


def peft_bytes(w: Workload, prof: FrameworkProfile, act_bytes: float, counted: float,
               mlp_tile: float = 1.0) -> float:
    """Extra bytes per token per layer of PEFT's fp32 adapter inputs over the `counted` bytes
    the 16-bit count already holds for the adapters' inputs."""
    if not prof.hf_lora_modules or w.method not in ("lora", "qlora"):
        return 0.0
    adapter = prof.adapter_bytes or act_bytes
    if adapter <= act_bytes:
        return 0.0
    return max(0.0, hf_activations.lora_adapter_bytes(w, adapter, act_bytes, mlp_tile) - counted)


def notes(w: Workload, rms: float, peft: float) -> list[str]:
    out = []
    if rms:
        out.append(f"fp32 upcasts: RMSNorm inputs saved in fp32, +{rms / w.arch.hidden_size:g} "
                   "B x hidden per token per layer (transformers LlamaRMSNorm.forward: "
                   "hidden_states.to(torch.float32))")
    if peft:
        out.append(f"fp32 upcasts: PEFT's fp32 copies of the adapted layers' inputs, "
                   f"+{peft / w.arch.hidden_size:.1f} B x hidden per token per layer (peft "
                   "lora Linear.forward: x = self._cast_input_dtype(x, lora_A.weight.dtype); "
                   "adapters fp32 under autocast_adapter_dtype=True)")
    return out
