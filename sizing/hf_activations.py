"""What a Hugging Face transformers block with PEFT LoRA adapters saves for backward, per token
per layer, when the base is frozen (framework "hf", method "lora"; docs/sizing.md "Memory per
GPU", HF LoRA terms).

The generic count in sizing/memory.py (`activation_elements_per_token`) is fitted to LitGPT's
own modules and counts every projection's input. The transformers + PEFT step differs in three
ways, each read off the code it runs (and checked tensor by tensor against the trace engine,
bench/trace_vs_closed_form.py):

* Frozen projections save no input. Autograd keeps a matmul's input only for the weight
  gradient (PyTorch's generated autograd code saves `self` of `mm` under
  `should_compute_output` for the weight), and a frozen base weight has none; the q/k/v, out,
  gate/up and down inputs of the base layers are not held.
* RMSNorm upcasts and saves its input in fp32. transformers' `LlamaRMSNorm.forward` (and Qwen2's,
  Mistral's, copied from it) does `hidden_states.to(torch.float32)`, whose result `pow(2)` and
  the multiply by `rsqrt(variance)` both save: 4 B per element for each of the block's two norms,
  whatever the model dtype. (GELU families use `nn.LayerNorm`, which saves its input in the
  model dtype.)
* PEFT's adapters run in their own dtype. `LoraLayer._cast_input_dtype` casts each targeted
  layer's input to the adapter weights' dtype (fp32 under `autocast_adapter_dtype=True`, the
  default) before `lora_A(dropout(x))`; q, k and v each cast their own copy. `lora_A` saves its
  input: with dropout the dropout output (adapter dtype) plus the bool mask CUDA's fused
  `native_dropout` keeps (1 B); without dropout the cast copy itself, or, when the adapter dtype
  is the model's (nothing to cast), the shared layer input once.

Attention (FlashAttention: q, k, v, output) and the gated MLP's gate, up and act(gate) are
saved as in the generic count.
"""

from __future__ import annotations

from gpuprices.sizing.workload import Workload

# transformers LlamaRMSNorm: `hidden_states.to(torch.float32)` saved by pow and mul.
RMSNORM_SAVED_BYTES = 4.0
# CUDA `native_dropout` (aten/src/ATen/native/cuda/Dropout.cu) saves a bool mask per element.
DROPOUT_MASK_BYTES = 1.0


def _target_inputs(w: Workload, mlp_tile: float) -> tuple[list[float], list[float]]:
    """(fan-in of every targeted matrix, the distinct inputs they read): q, k and v read one
    tensor, gate and up another."""
    a = w.arch
    h, q, i = a.hidden_size, a.q_dim, a.intermediate_size * mlp_tile
    fan_in = {"qv": [h, h], "attn": [h, h, h, q]}
    distinct = {"qv": [h], "attn": [h, q]}
    gated = a.mlp == "swiglu"
    fan_in["all"] = fan_in["attn"] + ([h, h, i] if gated else [h, i])
    distinct["all"] = distinct["attn"] + [h, i]
    return fan_in[w.lora_targets], distinct[w.lora_targets]


def lora_adapter_bytes(w: Workload, adapter_bytes: float, act_bytes: float,
                       mlp_tile: float = 1.0) -> float:
    """Bytes per token per layer PEFT's adapters save (module docstring, third point)."""
    fan_in, distinct = _target_inputs(w, mlp_tile)
    if w.lora_dropout:
        return (adapter_bytes + DROPOUT_MASK_BYTES) * sum(fan_in)
    if adapter_bytes != act_bytes:
        return adapter_bytes * sum(fan_in)
    return act_bytes * sum(distinct)


def lora_layer_bytes(w: Workload, adapter_bytes: float, act_bytes: float, resid_bytes: float,
                     mlp_tile: float = 1.0) -> float:
    """Bytes saved per token per layer by a transformers block with PEFT LoRA on a frozen base:
    two norm inputs, attention's q, k, v and output, the MLP's activation inputs, the adapters'
    inputs; no base projection inputs (module docstring)."""
    a = w.arch
    h, q, kv, i = a.hidden_size, a.q_dim, a.kv_dim, a.intermediate_size * mlp_tile
    norm = max(RMSNORM_SAVED_BYTES, resid_bytes) if a.mlp == "swiglu" else resid_bytes
    attention = (2 * q + 2 * kv) * act_bytes
    mlp = (3 * i if a.mlp == "swiglu" else i) * act_bytes  # gate, up, act(gate) | fc1 output
    return 2 * h * norm + attention + mlp + lora_adapter_bytes(w, adapter_bytes, act_bytes,
                                                                mlp_tile)
