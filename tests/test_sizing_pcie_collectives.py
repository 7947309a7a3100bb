"""FSDP over PCIe pays its all-gathers and reduce-scatters at what NCCL measures there, each
hidden only behind the pass it belongs to (sizing/throughput.py overlapped_step)."""

import pytest

from gpuprices.sizing.throughput import (
    PCIE_COLLECTIVE_GBS,
    PCIE_NO_P2P_COLLECTIVE_GBS,
    comm_bytes_per_step,
    estimate_throughput,
    link_bandwidth,
    overlapped_step,
)
from gpuprices.sizing.workload import workload_from_dict
from gpuprices.warehouse.gpus import gpu_models

GPUS = gpu_models()


def _full_8b(**kw):
    d = dict(name="full-8b", model="Llama 3.1 8B", method="full", precision="bf16-mixed",
             framework="hf", optimizer="adamw", seq_len=1024, micro_batch=1,
             grad_checkpointing=True, sharding="fsdp", gpus=8, tokens=1e9)
    d.update(kw)
    return workload_from_dict(d)


def test_pcie_boxes_collect_at_the_nccl_rate_not_the_link_rate():
    assert link_bandwidth(GPUS["RTX6000ADA-48GB"], 8, 1, p2p=True) == (
        "pcie", PCIE_COLLECTIVE_GBS["gen4"])
    assert link_bandwidth(GPUS["RTX-PRO-6000-96GB"], 8, 1, p2p=True) == (
        "pcie", PCIE_COLLECTIVE_GBS["gen5"])
    # without peer-to-peer access (the default) the host-staged rate
    assert link_bandwidth(GPUS["RTX6000ADA-48GB"], 8, 1) == (
        "pcie", PCIE_NO_P2P_COLLECTIVE_GBS["gen4"])
    assert PCIE_COLLECTIVE_GBS["gen4"] < 32 and PCIE_COLLECTIVE_GBS["gen5"] < 64
    kind, gbs = link_bandwidth(GPUS["H100-SXM-80GB"], 8, 1)
    assert kind == "nvlink" and gbs == 450


def test_fsdp_forward_gather_is_hidden_only_by_the_forward():
    """A third of the bytes (the forward all-gather) can hide only behind the forward's
    quarter of the work: with t_comm = t_comp the step is longer than max(t_comp, t_comm)."""
    w = _full_8b()
    step = overlapped_step(w, 4.0, 4.0)
    assert step > 4.0
    assert overlapped_step(w, 4.0, 0.5) == 4.0  # fast links: the step is the compute
    assert overlapped_step(w, 4.0, 0.0) == 4.0


def test_short_micro_batches_on_pcie_lose_to_their_collectives_and_nvlink_does_not():
    w = _full_8b()
    ada = estimate_throughput(w, GPUS["RTX6000ADA-48GB"], gpus_per_node=8)
    h100 = estimate_throughput(w, GPUS["H100-SXM-80GB"], gpus_per_node=8)
    assert ada.scaling_efficiency < 0.8
    assert h100.scaling_efficiency == 1.0
    # the scaling is compute / step of the overlap model, with the bytes of the FSDP step
    per_gpu = ada.tokens_per_s_per_gpu / ada.scaling_efficiency
    t_comp = 1024 / per_gpu
    t_comm = comm_bytes_per_step(w, 8) / (PCIE_NO_P2P_COLLECTIVE_GBS["gen4"] * 1e9)
    assert abs(ada.scaling_efficiency - t_comp / overlapped_step(w, t_comp, t_comm)) < 1e-9


def test_fsdp_lora_gathers_its_frozen_base_every_pass():
    """FSDP shards the frozen base too: LoRA under FSDP all-gathers it for the forward and the
    backward (16-bit; NF4 codes for QLoRA), besides the adapters' gradient all-reduce."""
    from gpuprices.sizing.memory import NF4_BYTES, lora_params
    d = dict(method="lora", precision="bf16-true", lora_rank=16, lora_targets="all",
             grad_accum=2)
    w = _full_8b(**d)
    adapters = 2 * 7 / 8 * lora_params(w) * 4.0
    base = 2 * 7 / 8 * 8.03e9 * 2.0 * 2
    assert comm_bytes_per_step(w, 8) == pytest.approx(adapters + base)
    q = _full_8b(**{**d, "method": "qlora"})
    assert comm_bytes_per_step(q, 8) == pytest.approx(
        adapters + 2 * 7 / 8 * 8.03e9 * NF4_BYTES * 2)
    ddp = _full_8b(**{**d, "sharding": "none"})
    assert comm_bytes_per_step(ddp, 8) == pytest.approx(adapters)
    # on PCIe the gathers cost LoRA scaling where they did not before
    ada = estimate_throughput(_full_8b(**{**d, "grad_accum": 1}), GPUS["RTX6000ADA-48GB"],
                              gpus_per_node=8)
    assert ada.scaling_efficiency < 1.0
