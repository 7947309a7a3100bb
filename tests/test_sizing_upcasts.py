"""The `fp32 upcasts` term (sizing/upcasts.py): transformers' fp32 RMSNorm inputs and PEFT's fp32
adapter inputs, and bench/closed_vs_trace.py's recorded comparison."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuprices.sizing.memory import estimate_memory
from gpuprices.sizing.workload import workload_from_dict

ROOT = Path(__file__).resolve().parents[1]


def _w(**kw):
    d = dict(name="x", model="Llama 3.1 8B", method="lora", framework="hf",
             precision="bf16-true", seq_len=2048, gpus=1)
    d.update(kw)
    return workload_from_dict(d)


def _up(**kw) -> float:
    return estimate_memory(_w(**kw), gpus=1).breakdown["fp32 upcasts"]


def test_only_the_hf_code_path_has_them():
    assert _up() > 0
    for fw in ("torchtune", "litgpt", "unsloth", "liger", "megatron", "torchtitan"):
        assert _up(framework=fw) == 0
    # Unsloth's own kernels (no dropout, its default) and Liger's RMSNorm (model dtype) neither
    for fw in ("unsloth", "liger"):
        assert _up(framework=fw, lora_dropout=False) == 0
        assert _up(framework=fw, method="full") == 0


def test_the_rmsnorm_upcast_is_counted_once():
    """hf full fine-tuning: the 16-bit activations term is the generic count any other
    framework without its own kernels gets (torchtune), and the fp32 norms are only in the
    upcast term, once."""
    hf = estimate_memory(_w(method="full"), gpus=1).breakdown
    tt = estimate_memory(_w(method="full", framework="torchtune"), gpus=1).breakdown
    assert hf["activations"] == pytest.approx(tt["activations"])
    assert hf["fp32 upcasts"] == pytest.approx(2 * 2 * 4096 * 2048 * 32 / 1e9)


def test_full_fine_tuning_pays_the_rmsnorm_upcast_only():
    # 2 norms x (4 - 2) B x hidden x tokens x layers
    assert _up(method="full") == pytest.approx(2 * 2 * 4096 * 2048 * 32 / 1e9)
    assert _up(method="full", precision="bf16-mixed") == 0  # autocast: residual already fp32


def test_qlora_counts_peft_fp32_dropout_outputs_over_the_16_bit_count():
    # hf QLoRA's residual stream is fp32 already (prepare_model_for_kbit_training): only PEFT's
    # fp32 dropout outputs, 2 B more than the generic 16-bit count per fan-in element
    fan_in = 6 * 4096 + 14336
    assert _up(method="qlora") == pytest.approx(2 * fan_in * 2048 * 32 / 1e9)


def test_checkpointing_keeps_them_for_one_layer():
    assert _up(grad_checkpointing=True) == pytest.approx(_up() / 32)


def test_bench_shows_the_closed_form_low_before_and_close_after():
    sys.path.insert(0, str(ROOT / "bench"))
    import closed_vs_trace

    rows = {r["name"]: r for r in closed_vs_trace.compare()}
    lora = rows["llama3.1-8b lora seq2048"]
    assert lora["err_before"] < -10 and abs(lora["err_after"]) < 2
    for r in rows.values():
        if "lora" in r["name"]:
            assert abs(r["err_after"]) < 5, r
