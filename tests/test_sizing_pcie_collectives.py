"""FSDP over PCIe pays its all-gathers and reduce-scatters at what NCCL measures there, each
hidden only behind the pass it belongs to (sizing/throughput.py overlapped_step)."""

import pytest

from gpuprices.sizing.throughput import (
    PCIE_COLLECTIVE_GBS,
    PCIE_NO_P2P_COLLECTIVE_GBS,
    PCIE_NO_P2P_HOST_GBS,
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
    # without peer-to-peer access (the default) the host-staged rate of one pair
    assert link_bandwidth(GPUS["RTX6000ADA-48GB"], 2, 1) == (
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
    t_comm = comm_bytes_per_step(w, 8) / (link_bandwidth(GPUS["RTX6000ADA-48GB"], 8, 1)[1]
                                          * 1e9)
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


def _old_overlap(w, t_comp, t_comm, fwd):
    """The rule before: every collective hidden behind the whole step's pass it belongs to."""
    if w.sharding in ("zero3", "fsdp"):
        return max(fwd * t_comp, t_comm / 3) + max((1 - fwd) * t_comp, 2 * t_comm / 3)
    return fwd * t_comp + max((1 - fwd) * t_comp, t_comm)


def _fwd_share(w):
    from gpuprices.sizing.throughput import hardware_flops_per_token
    a = w.arch
    return (2 * a.params + 4 * a.num_layers * a.q_dim * w.seq_len) / hardware_flops_per_token(w)


def test_ddp_all_reduce_hides_only_behind_the_last_micro_batch_backward():
    """DDP reduces once per optimizer step, under no_sync() for the other micro-batches
    (pytorch/pytorch#21736): with grad_accum 8 only one eighth of the backward can hide it.
    Llama 3.2 1B, DDP on 8 RTX 4090s without P2P: the old rule called it free (scaling 100%)."""
    # bf16-true: 16-bit gradients (mixed precision reduces fp32 ones: test_sizing_pcie_host.py)
    w = _full_8b(model="Llama 3.2 1B", sharding="none", micro_batch=2, grad_accum=8,
                 grad_checkpointing=False, precision="bf16-true")
    gpu = GPUS["RTX4090-24GB"]
    tp = estimate_throughput(w, gpu, gpus_per_node=8)
    per_gpu = tp.tokens_per_s_per_gpu / tp.scaling_efficiency
    t_comp = 2 * 1024 * 8 / per_gpu
    # 8 cards staging through one host: 49 / 8 GB/s each (PCIE_NO_P2P_HOST_GBS)
    t_comm = comm_bytes_per_step(w, 8) / (PCIE_NO_P2P_HOST_GBS["gen4"] / 8 * 1e9)
    assert t_comm == pytest.approx(2 * 7 / 8 * 1.24e9 * 2 / 6.13e9, rel=0.01)
    fwd = _fwd_share(w)
    last_bwd = (1 - fwd) * t_comp / 8
    assert t_comm > last_bwd and t_comm < (1 - fwd) * t_comp  # where the two rules differ
    assert _old_overlap(w, t_comp, t_comm, fwd) == pytest.approx(t_comp)
    assert overlapped_step(w, t_comp, t_comm) == pytest.approx(t_comp - last_bwd + t_comm)
    assert tp.scaling_efficiency == pytest.approx(t_comp / (t_comp - last_bwd + t_comm))
    assert tp.scaling_efficiency < 0.75
    # without accumulation nothing changes
    w1 = _full_8b(model="Llama 3.2 1B", sharding="none", micro_batch=4, grad_accum=1,
                  grad_checkpointing=False)
    assert overlapped_step(w1, 1.0, 0.3) == pytest.approx(_old_overlap(w1, 1.0, 0.3,
                                                                         _fwd_share(w1)))


def test_zero2_reduces_every_micro_batch_and_gathers_after_the_step():
    """ZeRO-2 keeps only its gradient partition, so it reduce-scatters after every backward
    (deepspeedai/DeepSpeed#2252) and all-gathers the updated parameters once, exposed."""
    w = _full_8b(sharding="zero2", grad_accum=4)
    p16 = 8.03e9 * 2
    assert comm_bytes_per_step(w, 8) == pytest.approx(7 / 8 * p16 * 5, rel=0.01)
    fwd = _fwd_share(w)
    t_comp, t_comm = 8.0, 2.5
    per_mb = t_comm / 5
    assert overlapped_step(w, t_comp, t_comm) == pytest.approx(
        4 * fwd * 2.0 + 4 * max((1 - fwd) * 2.0, per_mb) + per_mb)


def test_fsdp_collectives_per_micro_batch_are_timed_as_before():
    """FSDP gathers and reduce-scatters in every micro-batch, so hiding each one behind its
    own micro-batch's passes is the old whole-step rule scaled: unchanged."""
    w = _full_8b(grad_accum=4)
    fwd = _fwd_share(w)
    for t_comm in (0.5, 4.0, 12.0):
        assert overlapped_step(w, 4.0, t_comm) == pytest.approx(
            _old_overlap(w, 4.0, t_comm, fwd))
