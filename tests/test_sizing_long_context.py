"""Long context at the card's limit: published fits and OOMs (tests/fixtures/sizing/
long_context_limits.csv) get the right verdict, and the loss term matches the Cut
Cross-Entropy paper's measurement (bench/long_context.py)."""

import csv
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("long_context", ROOT / "bench/long_context.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_row_names_its_source_and_a_documented_outcome():
    bench = _bench()
    for path in (bench.LIMITS_CSV, bench.LOSS_CSV):
        for r in csv.DictReader(path.open(newline="")):
            assert r["source"].strip() and r["where"].strip(), r
    docs = {r["documented"] for r in csv.DictReader(bench.LIMITS_CSV.open(newline=""))}
    assert docs == {"fits", "oom"}


def test_documented_fits_are_fits_or_tight_and_documented_ooms_no():
    rows = _bench().limit_rows()
    assert len(rows) >= 5
    wrong = [r for r in rows if not r["ok"]]
    assert not wrong, wrong
    # the longest documented fit sits near the card's limit, not far under it
    longest = max((r for r in rows if r["documented"] == "fits"), key=lambda r: r["est"])
    assert longest["est"] > 0.8 * longest["capacity"]


def test_full_loss_term_matches_the_cut_cross_entropy_measurement():
    full, fused = _bench().loss_rows()
    assert full["est"] == pytest.approx(full["measured"], rel=0.10)
    assert fused["est"] < 0.01 * full["est"]


def test_alst_recipes_published_peaks_within_25_percent():
    """ArcticTraining's single-GPU ALST recipes print their peak beside max_length: each
    within +-25% and documented-fitting (sizing/param_offload.py for their ZeRO-3 offload)."""
    rows = [r for r in _bench().limit_rows() if r["measured"] is not None]
    assert len(rows) >= 4
    for r in rows:
        assert abs(r["err"]) <= 25, r
        assert r["verdict"] in ("fits", "tight"), r


def test_offloaded_parameters_leave_two_gathered_layers_and_the_output_layer_on_the_gpu():
    from gpuprices.sizing.memory import estimate_memory
    from gpuprices.sizing.workload import workload_from_dict
    d = dict(name="x", model="Llama 3.1 8B", method="full", precision="bf16-true",
             framework="hf", optimizer="adamw", seq_len=4096, micro_batch=1,
             grad_checkpointing=True, sharding="zero3", gpus=1)
    on = estimate_memory(workload_from_dict({**d, "offload_params": True})).breakdown
    off = estimate_memory(workload_from_dict(d)).breakdown
    unit = (4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336) * 2
    head = 128256 * 4096 * 2
    assert on["weights"] == pytest.approx((2 * unit + head) / 1e9)
    assert on["gradients"] == pytest.approx((2 * unit + head) / 1e9)
    assert on["optimizer"] == 0.0
    assert off["optimizer"] == pytest.approx(8.03e9 * 2 * 2 / 1e9)  # bf16 AdamW states
    assert on["activations"] == off["activations"]


def test_trace_engine_refuses_offloaded_parameters_rather_than_ignoring_them():
    from gpuprices.sizing.trace import unsupported
    from gpuprices.sizing.workload import workload_from_dict
    w = workload_from_dict(dict(name="x", model="Llama 3.2 1B", method="lora",
                                precision="bf16-true", framework="hf", optimizer="adamw",
                                seq_len=512, micro_batch=1, gpus=1, offload_params=True))
    assert "parameter offload" in (unsupported(w) or "")


def test_liger_swiglu_kernel_saves_gate_and_up_not_their_product():
    """liger_kernel/ops/swiglu.py saves a and b and recomputes silu(a) * b: the liger
    profile's block saves one i-wide tensor less per token per layer than hf's generic count."""
    from gpuprices.sizing.memory import estimate_memory
    from gpuprices.sizing.workload import workload_from_dict
    d = dict(name="x", model="Llama 3.1 8B", method="full", precision="bf16-true",
             optimizer="adamw", seq_len=8192, micro_batch=1, grad_checkpointing=False,
             loss="fused", gpus=1)
    hf = estimate_memory(workload_from_dict({**d, "framework": "hf"})).breakdown
    lg = estimate_memory(workload_from_dict({**d, "framework": "liger"})).breakdown
    assert hf["activations"] - lg["activations"] == pytest.approx(32 * 8192 * 14336 * 2 / 1e9)
    assert hf["logits"] == lg["logits"]


def test_cut_cross_entropy_holds_only_the_input_gradient():
    """Unsloth calls Cut Cross-Entropy: T x hidden x 2 B at the loss; Liger's fused loss also
    holds a chunk of logits the size of the hidden states (x 4 B)."""
    from gpuprices.sizing.memory import estimate_memory
    from gpuprices.sizing.workload import workload_from_dict
    d = dict(name="x", model="Llama 3.1 8B", method="lora", precision="bf16-true",
             optimizer="adamw", seq_len=65536, micro_batch=1, grad_checkpointing=True,
             loss="fused", gpus=1, lora_dropout=False)
    un = estimate_memory(workload_from_dict({**d, "framework": "unsloth"})).breakdown["logits"]
    lg = estimate_memory(workload_from_dict({**d, "framework": "liger"})).breakdown["logits"]
    assert un == pytest.approx(65536 * 4096 * 2 / 1e9)
    assert lg == pytest.approx(2 * un)
