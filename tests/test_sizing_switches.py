"""Memory switches and long context (sizing/switches.py): each switch moves the estimate in the
direction, and by the order, its framework's code or docs state."""

import pytest

from gpuprices.sizing.frameworks import PROFILES
from gpuprices.sizing.memory import estimate_memory
from gpuprices.sizing.switches import resolve
from gpuprices.sizing.throughput import estimate_throughput
from gpuprices.sizing.workload import WorkloadError, workload_from_dict
from gpuprices.warehouse.gpus import gpu_models


def _w(**kw):
    d = dict(name="t", model="Llama 3.1 8B", method="qlora", precision="bf16-true",
             optimizer="paged_adamw_8bit", seq_len=8192, micro_batch=1,
             grad_checkpointing=True, framework="hf")
    d.update(kw)
    return workload_from_dict(d)


def _gb(w, term=None, capacity=None):
    e = estimate_memory(w, capacity_gb=capacity)
    return e.breakdown[term] if term else e.per_gpu_gb


def test_framework_defaults_follow_their_code():
    assert (PROFILES["hf"].loss, PROFILES["hf"].activation_offload) == ("full", False)
    assert (PROFILES["torchtune"].loss, PROFILES["torchtune"].loss_chunks) == ("chunked", 8)
    assert PROFILES["torchtune"].activation_offload is False
    assert (PROFILES["litgpt"].loss, PROFILES["litgpt"].loss_chunks) == ("chunked", 128)
    assert (PROFILES["unsloth"].loss, PROFILES["unsloth"].activation_offload) == ("fused", True)
    s = resolve(_w(), PROFILES["hf"])
    assert s.paged_optimizer and not s.packing and not s.optimizer_in_backward
    assert not resolve(_w(optimizer="adamw_8bit"), PROFILES["hf"]).paged_optimizer


def test_loss_ladder_full_chunked_fused():
    full = _gb(_w(loss="full"), "logits")
    chunked = _gb(_w(loss="chunked", loss_chunks=8), "logits")
    fused = _gb(_w(loss="fused"), "logits")
    # full: fp32 log-softmax + two fp32 grads at the backward, 12 B per logit; chunked keeps
    # the bf16 logits and one fp32 chunk: 3 B
    assert chunked / full == pytest.approx(3 / 12)
    # fused never materialises them: of the order of hidden / vocab of the full tensor
    assert fused < chunked / 10
    # more chunks, less memory, never below the bf16 logits themselves
    assert _gb(_w(loss="chunked", loss_chunks=32), "logits") < chunked
    assert _gb(_w(loss="chunked", loss_chunks=10 ** 6), "logits") >= full * 2 / 12


def test_torchtune_default_is_its_chunked_loss():
    assert _gb(_w(framework="torchtune"), "logits") == \
        pytest.approx(_gb(_w(loss="chunked", loss_chunks=8), "logits"))


def test_activation_offload_keeps_two_layer_inputs_on_the_gpu():
    kept = _gb(_w(seq_len=65536), "activations")
    off = _gb(_w(seq_len=65536, activation_offload=True), "activations")
    # hf QLoRA: prepare_model_for_kbit_training's fp32 embeddings make the residual stream fp32
    layer_input = 65536 * 4096 * 4 / 1e9
    assert kept - off == pytest.approx((32 - 2) * layer_input, rel=1e-6)


def test_optimizer_in_backward_holds_one_gradient():
    full = dict(method="full", optimizer="adamw", precision="bf16-true", seq_len=2048)
    held = _gb(_w(**full), "gradients")
    in_bwd = _gb(_w(**full, optimizer_in_backward=True), "gradients")
    assert held == pytest.approx(8.03 * 2, rel=0.01)
    assert in_bwd < held / 10  # the embedding's gradient (128256 x 4096 x 2 B = 1.05 GB)
    with pytest.raises(WorkloadError, match="grad_accum"):
        _w(optimizer_in_backward=True, grad_accum=4)


def test_paged_optimizer_spills_only_what_does_not_fit():
    w = _w(method="full", optimizer="paged_adamw_8bit", seq_len=2048)
    whole = estimate_memory(w)
    rest = whole.per_gpu_gb - whole.breakdown["optimizer"]
    cap = rest + whole.breakdown["optimizer"] / 2
    paged = estimate_memory(w, capacity_gb=cap)
    assert paged.per_gpu_gb == pytest.approx(cap)
    assert paged.verdict == "tight"  # at the card's limit, within the margin
    assert any("spill to host" in n for n in paged.notes)
    unpaged = estimate_memory(_w(method="full", optimizer="adamw_8bit", seq_len=2048),
                              capacity_gb=cap)
    assert unpaged.verdict == "no"
    roomy = estimate_memory(w, capacity_gb=whole.per_gpu_gb * 2)
    assert roomy.per_gpu_gb == pytest.approx(whole.per_gpu_gb)


def test_packing_mask_only_without_flash_attention():
    assert _gb(_w(packing=True)) == pytest.approx(_gb(_w()))
    eager, eager_packed = _gb(_w(flash_attention=False)), _gb(_w(flash_attention=False,
                                                                   packing=True))
    assert eager_packed - eager == pytest.approx(8192 * 8192 / 1e9)


def test_tiled_mlp_cuts_the_recomputed_layer():
    w, tiled = _w(seq_len=131072), _w(seq_len=131072, tiled_mlp=True)
    inputs = 32 * 131072 * 4096 * 4 / 1e9  # the checkpointed layer inputs (fp32: hf QLoRA)
    assert _gb(tiled, "activations") - inputs < 0.6 * (_gb(w, "activations") - inputs)


def test_long_context_qlora_8b_fits_with_chunked_loss_and_offload():
    """QLoRA of an 8B at 131k tokens on one 80 GB card: the full T x vocab logits alone are
    168 GB; with the Unsloth-like switches (fused loss, offloaded checkpoints) it fits."""
    cap = gpu_models()["H100-SXM-80GB"].memory_gb
    full = estimate_memory(_w(seq_len=131072), capacity_gb=cap)
    assert full.breakdown["logits"] > cap and full.verdict == "no"
    unsloth = estimate_memory(_w(seq_len=131072, framework="unsloth"), capacity_gb=cap)
    assert unsloth.verdict in ("fits", "tight")
    switched = estimate_memory(_w(seq_len=131072, loss="fused", activation_offload=True),
                               capacity_gb=cap)
    assert switched.verdict in ("fits", "tight")
    assert full.per_gpu_gb / unsloth.per_gpu_gb > 2
    # a chunked loss keeps the bf16 logits whole: 131072 x 128256 x 3 B = 50 GB, over the
    # card with the rest; at 78k tokens it fits where the full logits (100 GB) cannot
    chunked = dict(loss="chunked", loss_chunks=8, activation_offload=True, tiled_mlp=True)
    assert estimate_memory(_w(seq_len=131072, **chunked), capacity_gb=cap).verdict == "no"
    assert estimate_memory(_w(seq_len=78000, **chunked), capacity_gb=cap).verdict == "fits"
    assert estimate_memory(_w(seq_len=78000), capacity_gb=cap).verdict == "no"


def test_memory_ladder_each_rung_lowers_the_peak():
    rungs = [dict(loss="full"), dict(loss="chunked", loss_chunks=8), dict(activation_offload=True),
             dict(tiled_mlp=True), dict(loss="fused")]
    d: dict = dict(framework="torchtune", method="lora", optimizer="adamw", seq_len=16384)
    peaks = []
    for rung in rungs:
        d.update(rung)
        peaks.append(_gb(_w(**d)))
    assert all(b < a for a, b in zip(peaks, peaks[1:], strict=False))
    assert peaks[0] / peaks[-1] > 2


def test_speed_offload_and_packing():
    g = gpu_models()
    base = _w(method="lora", optimizer="adamw", seq_len=2048, grad_checkpointing=False)
    off = _w(method="lora", optimizer="adamw", seq_len=2048, grad_checkpointing=False,
             activation_offload=True)
    for gpu in ("H100-SXM-80GB", "RTX4090-24GB"):
        assert estimate_throughput(off, g[gpu]).tokens_per_s < \
            estimate_throughput(base, g[gpu]).tokens_per_s
    # offloading only the checkpointed layer inputs costs nothing measurable at 8k tokens
    ck = estimate_throughput(_w(method="lora", optimizer="adamw"), g["H100-SXM-80GB"])
    ck_off = estimate_throughput(_w(method="lora", optimizer="adamw", activation_offload=True),
                                 g["H100-SXM-80GB"])
    assert ck_off.tokens_per_s == pytest.approx(ck.tokens_per_s, rel=0.01)
    padded = _w(micro_batch=8, seq_len=2048, mean_sample_tokens=512)
    packed = _w(micro_batch=8, seq_len=2048, mean_sample_tokens=512, packing=True)
    h = g["H100-SXM-80GB"]
    assert estimate_throughput(packed, h).tokens_per_s / \
        estimate_throughput(padded, h).tokens_per_s == pytest.approx(4.0)


def test_switch_fields_are_typed():
    with pytest.raises(WorkloadError, match="loss"):
        _w(loss="sparse")
    with pytest.raises(WorkloadError, match="wrong type"):
        _w(packing="yes")
    with pytest.raises(WorkloadError, match="positive"):
        _w(loss_chunks=0)


def test_unsloth_lora_kernels_save_no_bitsandbytes_copy():
    """Unsloth's LoRA autograd functions dequantize themselves: the QLoRA activation term loses
    bitsandbytes' copy of the four projection inputs (h + q + h + i elements per token)."""
    # with dropout on both (Unsloth's own default is none: its generic path is compared here)
    same = dict(seq_len=8192, loss="full", activation_offload=False, lora_dropout=True)
    hf, un = _gb(_w(**same), "activations"), _gb(_w(framework="unsloth", **same), "activations")
    copy = 8192 * (4096 * 3 + 14336) * 2 / 1e9
    # and hf's residual stream is fp32 (prepare_model_for_kbit_training), Unsloth's bf16: the 32
    # checkpointed layer inputs and the recomputed layer's two norm inputs at 2 B more
    fp32_residual = 32 * 8192 * 4096 * 2 / 1e9 + 8192 * 2 * 4096 * 2 / 1e9
    assert hf - un == pytest.approx(copy + fp32_residual, rel=1e-6)


def test_342k_tokens_need_every_switch():
    cap = gpu_models()["H100-SXM-80GB"].memory_gb
    recipe = dict(seq_len=342000, framework="unsloth", lora_dropout=False)
    assert estimate_memory(_w(**recipe, loss="full"), capacity_gb=cap).verdict == "no"
    assert estimate_memory(_w(**recipe), capacity_gb=cap).verdict in ("fits", "tight")
    assert estimate_memory(_w(**recipe, tiled_mlp=True), capacity_gb=cap).verdict == "fits"


def test_unsloth_kernels_save_the_layer_inputs_once_and_recompute_the_swiglu_product():
    """unsloth/kernels/fast_lora.py: LoRA_QKV saves X only, LoRA_MLP X, e and g (h = silu(e) * g
    recomputed in place), LoRA_W's input is FlashAttention's output; the backward adds DW
    (i-wide): 4h + 2q + 2kv + 3i elements per token per layer against the generic 21.5 h."""
    same = dict(seq_len=65536, loss="full", activation_offload=True, lora_dropout=False)
    h, q, kv, i = 4096, 4096, 1024, 14336
    un = _w(framework="unsloth", **same)
    # the recomputed layer + 2 offloaded-checkpoint layer inputs, bf16 residual stream
    expect = 65536 * ((4 * h + 2 * q + 2 * kv + 3 * i) * 2 + 2 * h * 2) / 1e9
    assert _gb(un, "activations") == pytest.approx(expect, rel=1e-9)
    assert (4 * h + 2 * q + 2 * kv + 3 * i) / h == pytest.approx(17.0)
    # with dropout Unsloth's fast paths are off: the generic count (larger) applies
    assert _gb(_w(framework="unsloth", **{**same, "lora_dropout": True}), "activations") > \
        _gb(un, "activations") * 1.3


def test_unsloth_recipes_default_to_no_dropout():
    """Unsloth's get_peft_model recipes set lora_dropout = 0; an unsloth workload that does not
    say otherwise gets its fast-kernel count, other frameworks keep the field's default."""
    assert _w(framework="unsloth").lora_dropout is False
    assert _w(framework="unsloth", lora_dropout=True).lora_dropout is True
    assert _w(framework="hf").lora_dropout is True
