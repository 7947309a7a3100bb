"""Ampere GDDR cards (RTX A6000, A40, RTX 3090, A10): HFU from one training code timed on the
card and on the A100 (sizing/same_stack_ratio.csv, whyNLP/tinyllama, TinyLlama 1.1B), the A40 on
the A6000's rows (assumed), the A10 and other cards without rows on the class row measured on a
124M model only (assumed, moved along the size trend). Rows with their sources:
tests/fixtures/sizing/pcie_cards.csv."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuprices.sizing.efficiency import (
    REFERENCE_PARAMS,
    efficiency_for,
    efficiency_table,
    hfu_ceiling,
    row_hfu_ratio,
    same_stack_rows,
)
from gpuprices.sizing.throughput import efficiency_assumed_note, estimate_throughput
from gpuprices.sizing.workload import workload_from_dict
from gpuprices.warehouse.gpus import gpu_models

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import pcie_cards  # noqa: E402

GPUS = gpu_models()
A100_HFU = efficiency_table()[("ampere-dc", "any")][0]


def _full(params_b: float, **kw):
    d = dict(name="t", params_b=params_b, method="full", precision="bf16-mixed", framework="hf",
             optimizer="adamw", seq_len=4096, micro_batch=2, grad_checkpointing=True,
             sharding="none", gpus=1, tokens=1e9)
    d.update(kw)
    return workload_from_dict(d)


def test_tinyllama_ratios_against_the_a100():
    """A6000 12.2k and RTX 3090 8.2k tokens/s against 204.5k / 8 on A100s: x 312 / 155 and
    x 312 / 71 -> HFU ratios 0.96 and 1.41 (the 3090's datasheet peak assumes a boost clock the
    card exceeds: its matmul reaches 76 of 71 TFLOPS)."""
    a6000 = [row_hfu_ratio(r) for r in same_stack_rows()["RTXA6000-48GB"]]
    rtx3090 = [row_hfu_ratio(r) for r in same_stack_rows()["RTX3090-24GB"]]
    assert [round(x, 2) for x in a6000] == [0.96]
    assert [round(x, 2) for x in rtx3090] == [1.41]
    e = efficiency_for(GPUS["RTXA6000-48GB"])
    assert e.basis == "same-stack" and not e.assumed
    assert e.hfu == pytest.approx(A100_HFU * a6000[0])
    assert e.reference_params == REFERENCE_PARAMS["ampere-dc"]
    assert "A100 64.2%" in e.measured_at and "RTXA6000-48GB / A100" in e.measured_at


def test_a40_borrows_the_a6000_and_is_flagged():
    a40 = efficiency_for(GPUS["A40-48GB"])
    assert a40.assumed and a40.basis == "proxy-card"
    assert a40.hfu == efficiency_for(GPUS["RTXA6000-48GB"]).hfu
    tp = estimate_throughput(_full(8.03), GPUS["A40-48GB"])
    assert tp.efficiency_assumed
    assert "no published training measurement of this card" in efficiency_assumed_note(tp)


def test_a10_keeps_the_small_model_class_value_flagged_and_sized():
    """The A10's 43.5% was measured on GPT-2 124M (llm.c) only: assumed, and moved from 124M
    (clamped to 1B) to the workload's size, so an 8B gets more than 43.5%."""
    e = efficiency_for(GPUS["A10-24GB"])
    assert e.assumed and e.basis == "small-model" and e.hfu == 0.435
    assert REFERENCE_PARAMS["ampere-gddr"] == 0.124e9
    tp = estimate_throughput(_full(8.03), GPUS["A10-24GB"])
    assert tp.efficiency_assumed and tp.efficiency_basis == "small-model"
    assert tp.hfu > 0.435 * 1.15
    note = efficiency_assumed_note(tp)
    assert "ampere-gddr" in note and "sub-1B" in note


def test_sized_hfu_never_passes_what_the_card_matmul_reaches():
    """At 70B the size trend lifts the 3090's 90% above its datasheet peak: capped at 1.0 (its
    matmul is not in gemm_ceiling.csv); the A6000 stays under its 80% matmul share."""
    tp = estimate_throughput(_full(70.6), GPUS["RTX3090-24GB"])
    assert tp.hfu == pytest.approx(1.0)
    assert any("capped" in n for n in tp.notes)
    cap, _ = hfu_ceiling(GPUS["RTXA6000-48GB"])
    assert cap == pytest.approx(123.34 / 155)
    assert estimate_throughput(_full(70.6), GPUS["RTXA6000-48GB"]).hfu < cap


def test_tinyllama_rows_in_the_bench():
    """The in-model rows are reproduced; the 8x A40 rows (never fed in: the A40 takes the
    A6000's ratio) within 20% timed with P2P. Without it (the default) the 7B row is 59% under:
    its 23.6 GB of ZeRO-2 traffic per 3.5 s step cannot pass through one host's memory at
    6.1 GB/s per card, so that datacenter box had P2P (docs/sizing.md); the 4090 row, whose
    HFU comes from LLMQ against the H100, is 25% under at most: the two references disagree
    by that much on the one card both timed."""
    rows = [r for r in pcie_cards.training_rows() if r["ref"] == "A100-SXM-80GB"]
    assert {r["gpu_model"] for r in rows if r["use"] == "in-model"} == {
        "RTXA6000-48GB", "RTX3090-24GB"}
    assert all(abs(r["err_after"]) < 0.5 for r in rows if r["use"] == "in-model")
    a40 = [r for r in rows if r["gpu_model"] == "A40-48GB"]
    assert len(a40) == 2 and all(abs(r["err_p2p"]) < 20 for r in a40)
    assert abs(a40[0]["err_after"]) < 15 and a40[1]["err_after"] < -50
    rtx4090 = [r for r in rows if r["gpu_model"] == "RTX4090-24GB"]
    assert len(rtx4090) == 1 and -25 < rtx4090[0]["err_after"] < 0


def test_multi_gpu_pcie_utilisation_rows_are_scored_with_their_scaling_not_per_card():
    """fmengine's 4x RTX 3090 row is a box of PCIe cards: out of the class medians, printed
    with the estimate's HFU x scaling. The step model over-estimates it (as it does whyNLP's
    8x RTX 3090 ZeRO-2 row): the 3090 trains at 89% of its datasheet alone, not in that box."""
    import sizing_accuracy
    rows = sizing_accuracy.multi_gpu_pcie_rows()
    assert [(r["gpu_model"], r["gpus"]) for r in rows] == [("RTX3090-24GB", 4)]
    assert rows[0]["err"] > 50
    by_class = {c["gpu_class"]: c for c in sizing_accuracy.tokens_per_s_by_class(
        sizing_accuracy.evaluate())}
    assert by_class["ampere-gddr"]["rows"] == 1  # the A10 row
    pcie = [r for r in pcie_cards.training_rows()
            if r["gpu_model"] == "RTX3090-24GB" and r["gpus"] == 8]
    # the shared host takes it from +68% to +44%; the rest is not modelled (docs/sizing.md)
    assert pcie and 40 < pcie[0]["err_after"] < pcie[0]["err_unshared"] - 20


def test_pcie_multi_gpu_offers_say_their_scaling_is_the_fast_end():
    """The step model times whyNLP's 4 / 8 A6000 and 8 RTX 3090 boxes at 100% / 100% / 79%
    scaling where they kept 83% / 75% / 55% of one card's rate: a PCIe row says so; an NVLink
    row does not."""
    from gpuprices.sizing.memory import estimate_memory
    from gpuprices.sizing.reasons import PCIE_PUBLISHED_SCALING, fit
    assert [round(x, 2) for x in PCIE_PUBLISHED_SCALING] == [0.83, 0.75, 0.55]
    w = _full(8.03, sharding="fsdp", gpus=8)
    for gpu, expect in (("RTXA6000-48GB", True), ("H100-SXM-80GB", False)):
        g = GPUS[gpu]
        tp = estimate_throughput(w, g, gpus_per_node=8)
        mem = estimate_memory(w, capacity_gb=g.memory_gb)
        got = [r for r in fit(w, mem, g.memory_gb, tp, 1, 8) if r.startswith("PCIe box")]
        assert bool(got) is expect, (gpu, got)
    row = fit(w, estimate_memory(w, capacity_gb=48), 48,
              estimate_throughput(w, GPUS["RTXA6000-48GB"], gpus_per_node=8), 1, 8)
    assert any("55%-83%" in r and "whyNLP/tinyllama" in r for r in row)
