"""PCIe boxes without GPU peer-to-peer access stage every collective through host memory, and
all the box's cards do it at once: the per-GPU rate falls with the number of cards
(sizing/throughput.py PCIE_NO_P2P_HOST_GBS; issue 27)."""

import sys
from pathlib import Path

import pytest

from gpuprices.sizing.throughput import (
    P2P_ENV,
    PCIE_COLLECTIVE_GBS,
    PCIE_NO_P2P_COLLECTIVE_GBS,
    PCIE_NO_P2P_HOST_GBS,
    estimate_throughput,
    link_bandwidth,
)
from gpuprices.sizing.workload import workload_from_dict
from gpuprices.warehouse.gpus import gpu_models

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import pcie_cards  # noqa: E402

GPUS = gpu_models()


@pytest.fixture(autouse=True)
def _no_p2p(monkeypatch):
    monkeypatch.delenv(P2P_ENV, raising=False)


def test_the_per_gpu_rate_falls_with_the_cards_sharing_the_host():
    ada = GPUS["RTX6000ADA-48GB"]
    rates = [link_bandwidth(ada, n, 1)[1] for n in range(1, 17)]
    assert rates == sorted(rates, reverse=True)
    # a pair keeps the host-staged copy rate (nccl#814); 4 and 8 cards share 8 x 6.13 GB/s
    assert rates[1] == PCIE_NO_P2P_COLLECTIVE_GBS["gen4"] == 20.0
    assert rates[3] == pytest.approx(8 * 6.13 / 4)
    assert rates[7] == pytest.approx(6.13)
    # the rule before issue 27 and the P2P rate do not depend on the number of cards
    assert link_bandwidth(ada, 8, 1, shared_host=False)[1] == 20.0
    assert link_bandwidth(ada, 8, 1, p2p=True)[1] == PCIE_COLLECTIVE_GBS["gen4"]


def test_gen5_boxes_of_up_to_eight_keep_the_measured_28():
    """nccl#1639 measured 28 GB/s on 8 RTX 5090s: its host is the Gen5 aggregate, so a box of
    eight is unchanged and only a bigger one would share below 28."""
    pro = GPUS["RTX-PRO-6000-96GB"]
    assert [link_bandwidth(pro, n, 1)[1] for n in (2, 4, 8)] == [28.0, 28.0, 28.0]
    assert PCIE_NO_P2P_HOST_GBS["gen5"] == 8 * 28.0
    assert link_bandwidth(pro, 16, 1)[1] == pytest.approx(14.0)


def test_nvlink_boards_and_bridged_pairs_are_not_host_staged():
    assert link_bandwidth(GPUS["H100-SXM-80GB"], 8, 1) == ("nvlink", 450.0)
    assert link_bandwidth(GPUS["A40-48GB"], 2, 1)[0] == "nvlink-bridge"


def test_the_bench_reproduces_the_source_row_and_brackets_the_others():
    rows = {(c["gpu_model"], c["gpus"]): c for c in pcie_cards.collective_rows()}
    l20 = rows[("L20", 8)]
    assert l20["use"] == "in-model" and l20["model_no_p2p"] == pytest.approx(l20["measured"])
    # the two-card host-staged copy is still the pair's rate
    assert rows[("RTX4090-24GB", 2)]["model_no_p2p"] == 20.0
    # with P2P the 4-card busbw (25.8) is not capped by the host model
    assert rows[("RTX4090-24GB", 4)]["model_p2p"] == 24.0


def _fsdp_8b(seq_len=4096, micro_batch=2):
    return workload_from_dict(dict(
        name="full-8b", model="Llama 3.1 8B", method="full", precision="bf16-mixed",
        framework="hf", optimizer="adamw", seq_len=seq_len, micro_batch=micro_batch,
        grad_checkpointing=True, sharding="fsdp", gpus=8, tokens=1e9))


def test_fsdp_on_eight_cards_without_p2p_now_pays_for_its_collectives():
    """The issue's case: 42 GB of FSDP traffic per step no longer hides behind 4.4 s of compute
    at 6.1 GB/s per card; the step note names the shared host."""
    w = _fsdp_8b()
    ada = GPUS["RTX6000ADA-48GB"]
    now = estimate_throughput(w, ada, gpus_per_node=8)
    before = estimate_throughput(w, ada, gpus_per_node=8, shared_host=False)
    assert before.scaling_efficiency == 1.0
    assert 0.55 < now.scaling_efficiency < 0.7
    assert any("8 GPUs staging through one host's memory" in n for n in now.notes)
    assert not any("staging through" in n for n in before.notes)
    two = estimate_throughput(w, ada, gpus_per_node=2)
    assert not any("staging through" in n for n in two.notes)


def test_box_rows_before_and_after():
    """Every multi-GPU PCIe row of bench/pcie_cards.py, before / shared host / P2P: the GeForce
    8 x RTX 3090 ZeRO-2 box (certainly without P2P) moves 68% -> 44% over; of the DDP boxes
    without accumulation (fp32 gradients) the 8-card one moves 33% -> 17% (7.7 GB at 6.1 GB/s
    outlasts the 0.9 s backward), the 4-card one does not (its 0.54 s still fits: what is left of
    its gap is not modelled); the 8 x A40 7B box is only consistent with P2P."""
    rows = {(r["gpu_model"], r["gpus"], r["model"], r["sharding"]): r
            for r in pcie_cards.training_rows() if r["gpus"] > 1}
    assert len(rows) == 15 and all(r["use"] == "out-of-sample" for r in rows.values())
    rtx3090 = rows[("RTX3090-24GB", 8, "TinyLlama 1.1B", "zero2")]
    assert rtx3090["err_unshared"] == pytest.approx(68.3, abs=0.5)
    assert rtx3090["err_after"] == pytest.approx(43.6, abs=0.5)
    ddp4 = rows[("RTXA6000-48GB", 4, "TinyLlama 1.1B", "none")]
    assert ddp4["err_after"] == pytest.approx(ddp4["err_unshared"]) == pytest.approx(20.8, abs=0.5)
    ddp8 = rows[("RTXA6000-48GB", 8, "TinyLlama 1.1B", "none")]
    assert ddp8["err_unshared"] == pytest.approx(33.2, abs=0.5)
    assert ddp8["err_after"] == pytest.approx(17.4, abs=0.5)
    a40 = rows[("A40-48GB", 8, "Llama 2 7B", "zero2")]
    assert a40["err_after"] < -50 < 0 < a40["err_p2p"] < 20
    # the shared host never makes a box faster than the rule before it
    assert all(r["after"] <= r["unshared"] + 1e-12 for r in rows.values())
    n, before, shared, p2p = pcie_cards.box_summary(pcie_cards.training_rows())["out-of-sample"]
    assert n == 15 and shared < before - 4


def test_sonnetx_pluggy_boxes():
    """Qwen3 0.6B DDP (fp32 gradients, 2 x 4096 tokens per GPU, no accumulation) scored against
    one card of the same box: the 8-card boxes come within 8% with the shared host (+45% and +33%
    before); the 2- and 4-card A40 rows stay 15-23% over: their all-reduce fits in the backward
    in the model, while the same code's trace left 17-21% of it exposed (not modelled)."""
    rows = {(r["gpu_model"], r["gpus"]): r for r in pcie_cards.training_rows()
            if r["model"] == "Qwen3 0.6B"}
    assert rows[("A40-48GB", 8)]["err_unshared"] > 40
    assert abs(rows[("A40-48GB", 8)]["err_after"]) < 10
    assert rows[("RTXA6000-48GB", 8)]["err_unshared"] > 30
    assert abs(rows[("RTXA6000-48GB", 8)]["err_after"]) < 5
    for n in (2, 4):
        r = rows[("A40-48GB", n)]
        assert r["after"] == 1.0 and 10 < r["err_after"] < 25


def test_ddp_under_mixed_precision_all_reduces_fp32_gradients():
    """torch.autocast keeps fp32 parameters, so DDP's buckets are fp32 (PyTorch's compress hooks
    exist to halve them); 16-bit weights reduce 16-bit gradients; ZeRO-2 / FSDP unchanged."""
    from gpuprices.sizing.throughput import comm_bytes_per_step, ddp_grad_bytes
    w = _fsdp_8b()
    mixed = workload_from_dict({**_DDP, "precision": "bf16-mixed"})
    true = workload_from_dict({**_DDP, "precision": "bf16-true"})
    assert ddp_grad_bytes(mixed) == 4.0 and ddp_grad_bytes(true) == 2.0
    assert comm_bytes_per_step(mixed, 8) == pytest.approx(2 * comm_bytes_per_step(true, 8))
    assert comm_bytes_per_step(mixed, 8) == pytest.approx(2 * 7 / 8 * 8.03e9 * 4, rel=0.01)
    # sharded jobs move 16-bit parameters and gradients whatever the autocast setting
    zero2 = workload_from_dict({**_DDP, "sharding": "zero2"})
    assert comm_bytes_per_step(zero2, 8) == pytest.approx(7 / 8 * 8.03e9 * 2 * 2, rel=0.01)
    assert comm_bytes_per_step(w, 8) == pytest.approx(3 * 7 / 8 * 8.03e9 * 2, rel=0.01)


_DDP = dict(name="ddp-8b", model="Llama 3.1 8B", method="full", framework="hf",
            optimizer="adamw", seq_len=2048, micro_batch=1, grad_checkpointing=True,
            sharding="none", gpus=8, tokens=1e9, precision="bf16-mixed")
