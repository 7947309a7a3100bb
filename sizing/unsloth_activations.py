"""What an Unsloth block with its own LoRA kernels saves for backward, per token per layer
(framework "unsloth", LoRA / QLoRA without dropout, gated MLP; docs/sizing.md "Long context and
memory switches").

Read off unsloth/kernels/fast_lora.py (unslothai/unsloth), which Unsloth patches in for
`lora_dropout = 0`:
* `LoRA_QKV.forward` saves only the layer input X (`ctx.save_for_backward(X, QA, QB, ...)`):
  q, k and v share it, no per-adapter copies.
* `LoRA_W.forward` (o_proj) saves its input, which is the attention output FlashAttention
  already saves: counted once.
* `LoRA_MLP.forward` saves X, e = X @ gate and g = X @ up; h = silu(e) * g is not saved: the
  backward recomputes it in place (`swiglu_DWf_DW_dfg_kernel` writes h, df, de over DW, e, g),
  and dX is written over X (`out = X if ctx.inplace`). Its backward adds one i-wide tensor,
  DW = dY @ down^T.
* Unsloth's RMSNorm kernel saves its input (the residual stream) and a per-row scalar.
So: 2 norm inputs (2h, residual), the q/k/v input and the MLP input (2h), FlashAttention's q,
k, v, output (2q + 2kv), the MLP's e and g (2i) and the backward's DW (i) = 4h + 2q + 2kv + 3i,
against the generic count's 2h + (h + q + h + i) + (2q + 2kv) + 4i (sizing/memory.py), which
counts the o_proj and down_proj inputs and act(gate) as separate tensors. For Llama 3.1 8B:
17.0 x hidden per token per layer instead of 21.5.
"""

from __future__ import annotations

from gpuprices.sizing.workload import Workload


def applies(w: Workload, own_lora_kernels: bool) -> bool:
    """Unsloth's fast LoRA paths: its profile, LoRA / QLoRA, no dropout, a gated MLP."""
    return (own_lora_kernels and w.method in ("lora", "qlora") and not w.lora_dropout
            and w.arch.mlp == "swiglu")


def lora_layer_bytes(w: Workload, act_bytes: float, resid_bytes: float,
                     mlp_tile: float = 1.0) -> float:
    """Bytes per token per layer (module docstring); the MLP's i-wide tensors for one sequence
    shard under a tiled MLP (`mlp_tile` = 1 / shards)."""
    a = w.arch
    h, q, kv, i = a.hidden_size, a.q_dim, a.kv_dim, a.intermediate_size * mlp_tile
    return 2 * h * resid_bytes + (2 * h + 2 * q + 2 * kv + 3 * i) * act_bytes
