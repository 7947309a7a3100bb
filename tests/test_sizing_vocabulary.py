"""Vocabulary-heavy models on small cards: Gemma 7B (256k tokens) LoRA at 512 tokens on a 24 GB
card (issue 27), its terms by arithmetic, the trace engine's recorded figure, and the note for a
params_b read as the total."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from gpuprices.sizing.memory import CUDA_CONTEXT_GB, estimate_memory
from gpuprices.sizing.workload import workload_from_dict

ROOT = Path(__file__).resolve().parents[1]
TRACED = ROOT / "tests/fixtures/sizing/closed_vs_trace.csv"


def _gemma(**kw):
    d = dict(name="g", model="Gemma 7B", method="lora", framework="hf", precision="bf16-true",
             seq_len=512, gpus=1, gpu="RTX4090-24GB")
    d.update(kw)
    return workload_from_dict(d)


def _traced(name: str) -> float:
    rows = {r["name"]: float(r["trace_allocated_gb"]) for r in csv.DictReader(TRACED.open())}
    return rows[name] + CUDA_CONTEXT_GB


def test_gemma_7b_is_known_by_name_and_repo():
    for name in ("Gemma 7B", "google/gemma-7b"):
        a = _gemma(model=name).arch
        assert (a.vocab_size, a.hidden_size, a.num_layers, a.head_dim) == (256000, 3072, 28, 256)
        # 28 layers x 276.8M + the tied 786.4M embedding (Gemma report: 7.75B + 0.79B)
        assert a.num_layers * a.linear_params_per_layer() + a.embedding_params == \
            pytest.approx(8.54e9, rel=0.002)


def test_gemma_7b_lora_512_tokens_does_not_fit_24_gb():
    est = estimate_memory(_gemma(), gpus=1, capacity_gb=24)
    b = est.breakdown
    assert b["weights"] == pytest.approx(8.54 * 2)  # bf16 base, 0.79B of it the embedding
    assert b["logits"] == pytest.approx(512 * 256000 * 12 / 1e9)  # fp32 log-softmax + 2 grads
    assert est.verdict == "no" and est.per_gpu_gb > 24
    # the traced step (transformers + PEFT under FakeTensorMode) is over the card as well
    assert _traced("gemma-7b lora seq512") > 24
    assert est.per_gpu_gb == pytest.approx(_traced("gemma-7b lora seq512"), rel=0.02)


def test_with_checkpointing_it_fits_by_the_same_arithmetic():
    est = estimate_memory(_gemma(grad_checkpointing=True), gpus=1, capacity_gb=24)
    assert est.verdict == "fits"
    assert est.per_gpu_gb == pytest.approx(_traced("gemma-7b lora seq512 ckpt"), rel=0.03)


def test_full_training_counts_the_embedding_gradients_and_states():
    b = estimate_memory(_gemma(method="full"), gpus=1).breakdown
    assert b["gradients"] == pytest.approx(8.54 * 2)
    assert b["optimizer"] == pytest.approx(8.54 * 2 * 2)


def test_params_b_read_as_the_total_is_said_when_the_vocabulary_is_large():
    w = workload_from_dict(dict(name="g", method="lora", seq_len=512, params_b=7,
                                vocab_size=256000))
    est = estimate_memory(w, gpus=1, capacity_gb=24)
    assert est.verdict == "tight"  # 5.03B of layers: not Gemma 7B's 7.75B
    assert any("1.97B of it are the 256000-token embedding" in n for n in est.notes)
    small = workload_from_dict(dict(name="g", method="lora", seq_len=512, params_b=7))
    assert not any("read as the total" in n for n in estimate_memory(small, gpus=1).notes)
    named = estimate_memory(_gemma(), gpus=1)
    assert not any("read as the total" in n for n in named.notes)
