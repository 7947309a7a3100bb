"""Tensor / pipeline / context parallelism and fp8 (sizing/parallel.py and its hooks in
sizing/memory.py, sizing/throughput.py, sizing/workload.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuprices.sizing import compat, parallel
from gpuprices.sizing.memory import estimate_memory
from gpuprices.sizing.throughput import estimate_throughput
from gpuprices.sizing.workload import WorkloadError, load_workloads, workload_from_dict
from gpuprices.warehouse.gpus import gpu_models

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "sizing" / "workloads.toml"


def _full70b(**kw):
    d = dict(name="big", model="Llama 3.1 70B", method="full", precision="bf16-mixed",
             framework="torchtune", optimizer="adamw", seq_len=8192, micro_batch=1,
             grad_checkpointing=True, gpus=8, tokens=1e9, checkpoint_every_tokens=1e8)
    d.update(kw)
    return workload_from_dict(d)


@pytest.mark.parametrize("kw, field", [
    (dict(tensor_parallel=8, gpus=12), "gpus"),
    (dict(tensor_parallel=4, pipeline_parallel=2, context_parallel=2, gpus=24), "gpus"),
    (dict(tensor_parallel=3, gpus=3), "num_attention_heads"),  # 64 heads
    (dict(tensor_parallel=16, gpus=16), "num_kv_heads"),  # 8 KV heads
    (dict(pipeline_parallel=128, gpus=128), "pipeline_parallel"),  # 80 layers
    (dict(context_parallel=4, seq_len=8196, gpus=8), "context_parallel"),
    (dict(tensor_parallel=8, gpus=None), "gpus"),
    (dict(tensor_parallel=0), "tensor_parallel"),
])
def test_divisibility_errors_name_workload_and_field(kw, field):
    d = dict(name="big", model="Llama 3.1 70B", method="full", gpus=8)
    d.update(kw)
    d = {k: v for k, v in d.items() if v is not None}
    with pytest.raises(WorkloadError) as exc:
        workload_from_dict(d)
    assert str(exc.value).startswith("big:") and field in str(exc.value)


def test_fp8_with_qlora_is_an_error():
    with pytest.raises(WorkloadError, match="fp8.*qlora"):
        workload_from_dict(dict(name="q", model="Llama 3.1 8B", method="qlora",
                                precision="fp8"))


def test_tp8_holds_one_eighth_of_the_weights():
    """70B in bf16 on 8 GPUs: tp = 8 gives each GPU 1/8 of the unsharded weights term (pp = 1:
    every matrix, embedding and output layer split 8 ways)."""
    plain = estimate_memory(_full70b(precision="bf16-true", gpus=1))
    tp8 = estimate_memory(_full70b(precision="bf16-true", tensor_parallel=8))
    unsharded = 70.55e9 * 2 / 1e9
    assert plain.breakdown["weights"] == pytest.approx(unsharded, rel=1e-3)
    assert tp8.breakdown["weights"] == pytest.approx(unsharded / 8, rel=0.01)
    assert tp8.breakdown["optimizer"] == pytest.approx(plain.breakdown["optimizer"] / 8, rel=0.01)
    # sequence parallelism: every activation (and the checkpointed inputs) split over tp
    assert tp8.breakdown["activations"] == pytest.approx(plain.breakdown["activations"] / 8,
                                                         rel=1e-6)


def test_tp_and_fsdp_divide_by_tp_times_dp():
    """64 GPUs = tp 8 x dp 8: FSDP shards over the 8 replicas, not over all 64 GPUs."""
    w = _full70b(tensor_parallel=8, sharding="fsdp", gpus=64)
    est = estimate_memory(w)
    plain = estimate_memory(_full70b(gpus=1))
    assert est.breakdown["optimizer"] == pytest.approx(plain.breakdown["optimizer"] / 64,
                                                       rel=0.01)
    assert est.gpus == 64


def test_pipeline_first_stage_holds_pp_microbatches():
    """1F1B: with m >= pp the first stage holds pp micro-batches of L/pp layers: as many
    layers' activations as without a pipeline; with one micro-batch, 1/pp of them."""
    base = dict(grad_checkpointing=False, seq_len=2048, sharding="none")
    no_pp = estimate_memory(_full70b(**base, gpus=1, grad_accum=8))
    pp4 = estimate_memory(_full70b(**base, pipeline_parallel=4, gpus=4, grad_accum=8))
    pp4_m1 = estimate_memory(_full70b(**base, pipeline_parallel=4, gpus=4, grad_accum=1))
    assert pp4.breakdown["activations"] == pytest.approx(no_pp.breakdown["activations"])
    assert pp4_m1.breakdown["activations"] == pytest.approx(no_pp.breakdown["activations"] / 4)
    # weights: 20 of 80 layers + the larger of embedding / output layer
    assert 0.25 < pp4.breakdown["weights"] / no_pp.breakdown["weights"] < 0.27


@pytest.mark.parametrize("pp, m, bubble", [(1, 8, 0.0), (4, 12, 3 / 15), (8, 8, 7 / 15),
                                            (2, 1, 0.5)])
def test_pipeline_bubble_formula(pp, m, bubble):
    assert parallel.pipeline_bubble(pp, m) == pytest.approx(bubble)


def test_pipeline_bubble_slows_the_step():
    """With nothing to communicate the step is the compute stretched by 1 / (1 - bubble)."""
    w = _full70b(pipeline_parallel=4, gpus=4, grad_accum=12)
    lay, _ = parallel.layout(w, 4)
    st = parallel.step_time(w, lay, t_comp=10.0, t_overlapped=0.0, tp_gbs=450, tp_link="nvlink",
                            other_gbs=50)
    assert st.scaling == pytest.approx(1 - 3 / 15)


def test_tp_across_nodes_is_slower_than_inside_one():
    h100 = gpu_models()["H100-SXM-80GB"]
    w = _full70b(tensor_parallel=8, sharding="fsdp", gpus=64, grad_accum=32)
    inside = estimate_throughput(w, h100, gpus_per_node=8, nodes=8)
    across = estimate_throughput(w, h100, gpus_per_node=4, nodes=16)
    # 450 GB/s NVLink vs 50 GB/s per GPU across nodes: TP over the network loses most of it
    assert 0.2 < across.scaling_efficiency < inside.scaling_efficiency < 1.0
    assert any("tensor-parallel collectives over nvlink" in n for n in inside.notes)


def test_shipped_64gpu_workload_fits_h100_with_parallelism():
    w = next(x for x in load_workloads(WORKLOADS) if x.name == "cpt-llama3.1-70b-64gpu")
    assert w.tensor_parallel * w.pipeline_parallel * w.context_parallel > 1
    h100 = gpu_models()["H100-SXM-80GB"]
    est = estimate_memory(w, gpu=h100.gpu_model, gpus=w.gpus, capacity_gb=h100.memory_gb)
    assert est.per_gpu_gb < h100.memory_gb and est.verdict == "fits"
    # weights + gradients + optimizer: 16 B/param over 64 GPUs, not the whole model per GPU
    states = sum(est.breakdown[k] for k in ("gradients", "optimizer"))
    assert states == pytest.approx(70.55e9 * 12 / 64 / 1e9, rel=0.01)
    tp = estimate_throughput(w, h100, gpus_per_node=8, nodes=8)
    assert 0.5 < tp.scaling_efficiency < 1.0 and tp.hours > 0


def test_fp8_refused_on_a100_accepted_on_h100():
    w = _full70b(precision="fp8", tensor_parallel=8, sharding="fsdp", gpus=64)
    a100 = compat.check(w, gpu_models()["A100-SXM-80GB"])
    h100 = compat.check(w, gpu_models()["H100-SXM-80GB"])
    assert a100.verdict == "incompatible" and any("fp8" in r for r in a100.reasons)
    assert h100.verdict == "compatible"


def test_fp8_memory_and_speed():
    """fp8 keeps fp32 master weights and adds the cached fp8 weights + transposes; it runs
    faster on the fp8 peak and says its efficiency is assumed."""
    h100 = gpu_models()["H100-SXM-80GB"]
    kw = dict(tensor_parallel=8, sharding="fsdp", gpus=64, grad_accum=32)
    bf16, fp8 = _full70b(**kw), _full70b(**kw, precision="fp8")
    m16, m8 = estimate_memory(bf16), estimate_memory(fp8)
    linear = 80 * fp8.arch.linear_params_per_layer()
    assert m8.breakdown["weights"] - m16.breakdown["weights"] == pytest.approx(
        linear * 2 / 64 / 1e9, rel=0.02)
    assert m8.breakdown["activations"] < m16.breakdown["activations"]
    t16 = estimate_throughput(bf16, h100, 8, 8)
    t8 = estimate_throughput(fp8, h100, 8, 8)
    ratio = t8.tokens_per_s_per_gpu / t16.tokens_per_s_per_gpu
    assert 1.2 < ratio <= parallel.FP8_SPEEDUP
    assert t8.efficiency_assumed and not t16.efficiency_assumed


def test_no_parallel_fields_change_nothing():
    """Defaults (tp = pp = cp = 1) give the estimate the calibration set was measured with."""
    w = _full70b(sharding="fsdp", gpus=64)
    lay, notes = parallel.layout(w, 64)
    assert lay.dp == 64 and not notes
    assert parallel.model_share(w, lay) == 1.0


# --- on the real bundled snapshots (tests/conftest.py: w41_settings) ---

def test_w41_rank_sizes_the_64gpu_workload_per_gpu_and_refuses_fp8_on_ampere(w41_settings):
    """rank on the 2026-W41 offers: every H100 80 GB layout of the 64-GPU job holds 23 GB per
    GPU (tp 8 x FSDP 8) and fits; its fp8 variant lists every Ampere offer as incompatible with
    the fp8 reason and still ranks H100 offers."""
    from dataclasses import replace

    from gpuprices.flows.cli.rank_inputs import read_offers
    from gpuprices.sizing.rank import rank

    _, offers, _ = read_offers(w41_settings.data_dir / "warehouse.duckdb", None)
    (w,) = [x for x in load_workloads(WORKLOADS) if x.name == "cpt-llama3.1-70b-64gpu"]
    rows = rank([w], offers)[w.name]
    h100 = [r for r in rows if r.gpu_model == "H100-SXM-80GB" and r.verdict == "ok"]
    assert h100, "W41 sells no H100 SXM that can run the job"
    for r in h100:
        assert r.gpus == 64 and r.fit_verdict == "fits"
        assert 20 < r.per_gpu_gb < 27
    rows8 = rank([replace(w, precision="fp8")], offers)[w.name]
    ampere = [r for r in rows8
              if getattr(gpu_models().get(r.gpu_model), "family", None) == "Ampere"]
    assert ampere and all(r.verdict == "incompatible" and "fp8" in r.reason for r in ampere)
    assert any(r.gpu_model == "H100-SXM-80GB" and r.verdict == "ok" for r in rows8)


def test_layout_names_model_parallel_degrees_then_sharded_data_parallel():
    from gpuprices.sizing.parallel import Layout, describe
    w = workload_from_dict(dict(name="t", model="Llama 3.1 70B", method="full",
                                sharding="zero3", gpus=512, tensor_parallel=8,
                                pipeline_parallel=4, context_parallel=2))
    assert describe(w, Layout(8, 4, 2, 8)) == "TP8 x PP4 x CP2 x DP8 (ZeRO-3) over 64 nodes"
    assert describe(w, Layout()) == "1 GPU"
    assert describe(w, Layout(tp=8)) == "TP8"
