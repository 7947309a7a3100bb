"""Pipeline schedules (sizing/pipeline.py): micro-batches in flight per rank under 1F1B and the
interleaved schedule, their bubble, and the `pipeline_schedule` / `virtual_stages` fields."""

from __future__ import annotations

import pytest

from gpuprices.sizing import parallel, pipeline
from gpuprices.sizing.memory import estimate_memory
from gpuprices.sizing.workload import WorkloadError, workload_from_dict


def _w(**kw):
    # 96 layers (a 175B-class shape: Narayanan et al. 2021 Table 1) so chunks divide evenly
    d = dict(name="gpt", params_b=175, num_layers=96, hidden_size=12288,
             num_attention_heads=96, num_kv_heads=96, method="full", precision="bf16-mixed",
             framework="megatron", seq_len=2048, micro_batch=1, grad_accum=64,
             tensor_parallel=8, pipeline_parallel=8, gpus=64)
    d.update(kw)
    return workload_from_dict({k: v for k, v in d.items() if v is not None})


def test_1f1b_first_stage_holds_pp_micro_batches_of_its_layers():
    w = _w()
    assert pipeline.chunks_in_flight(w, 8) == 8
    assert pipeline.layers_held(w, 8) == 96  # 8 x 12 layers: one whole model's worth
    few = _w(grad_accum=3)
    assert pipeline.layers_held(few, 8) == 36  # only 3 micro-batches in the step


@pytest.mark.parametrize("v", [2, 3, 4])
def test_interleaved_holds_the_korthikanti_factor_more(v):
    w = _w(pipeline_schedule="interleaved", virtual_stages=v)
    # v p + p - 1 chunks of L/(p v) layers = L (1 + (p - 1)/(p v))
    assert pipeline.chunks_in_flight(w, 8) == v * 8 + 7
    assert pipeline.layers_held(w, 8) == pytest.approx(96 * (1 + 7 / (8 * v)))


def test_interleaved_never_holds_more_chunks_than_the_step_has():
    w = _w(pipeline_schedule="interleaved", virtual_stages=2, grad_accum=2)
    assert pipeline.chunks_in_flight(w, 8) == 4


@pytest.mark.parametrize("pp, m, v, bubble", [(8, 64, 1, 7 / 71), (8, 64, 2, 7 / 135),
                                               (4, 8, 3, 3 / 27), (1, 8, 2, 0.0)])
def test_bubble_is_p_minus_1_over_m_v_of_the_ideal(pp, m, v, bubble):
    b = pipeline.bubble_fraction(pp, m, v)
    assert b == pytest.approx(bubble)
    if pp > 1:  # idle / busy = (p - 1) / (m v), Narayanan et al. 2021 sec. 2.2.2
        assert b / (1 - b) == pytest.approx((pp - 1) / (m * v))


def test_interleaving_trades_memory_for_a_smaller_bubble():
    one, inter = _w(), _w(pipeline_schedule="interleaved", virtual_stages=4)
    assert estimate_memory(inter, gpus=64).breakdown["activations"] == pytest.approx(
        estimate_memory(one, gpus=64).breakdown["activations"] * (1 + 7 / 32))
    # without tp (no collectives on the critical path) the step is compute / (1 - bubble)
    one, inter = (_w(tensor_parallel=1, gpus=8, **kw) for kw in
                  ({}, dict(pipeline_schedule="interleaved", virtual_stages=4)))
    lay, _ = parallel.layout(one, 8)
    slow = parallel.step_time(one, lay, 10.0, 0.0, 450, "nvlink", 50)
    fast = parallel.step_time(inter, lay, 10.0, 0.0, 450, "nvlink", 50)
    assert slow.scaling == pytest.approx(64 / 71) and fast.scaling == pytest.approx(256 / 263)
    assert "interleaved, 4 virtual stages" in " ".join(fast.notes)


def test_checkpointed_layer_inputs_follow_the_micro_batches_in_flight():
    base = dict(grad_checkpointing=True)
    one = estimate_memory(_w(**base), gpus=64).breakdown["activations"]
    inter = estimate_memory(_w(pipeline_schedule="interleaved", virtual_stages=2, **base),
                            gpus=64).breakdown["activations"]
    assert inter > one * 1.3  # 132 layers' inputs held vs 96: not capped at the model's 96


@pytest.mark.parametrize("kw, words", [
    (dict(pipeline_schedule="interleaved", virtual_stages=1), "virtual_stages >= 2"),
    (dict(pipeline_schedule="interleaved", virtual_stages=2, pipeline_parallel=1,
          tensor_parallel=8, gpus=8), "pipeline_parallel > 1"),
    (dict(virtual_stages=2), "needs pipeline_schedule"),
    (dict(pipeline_schedule="interleaved", virtual_stages=16), "exceeds the model's 96"),
    (dict(pipeline_schedule="gpipe"), "pipeline_schedule"),
    (dict(virtual_stages=0), "virtual_stages must be positive"),
])
def test_schedule_errors_name_the_field(kw, words):
    with pytest.raises(WorkloadError, match=words):
        _w(**kw)


# --- batch settings as frameworks write them (docs/sizing.md) ---

def test_global_batch_sets_grad_accum_megatron_style():
    # Megatron: --global-batch-size 512 --micro-batch-size 1 on tp 8 x pp 8 x 64 GPUs: dp = 1,
    # num_microbatches = 512 / (1 x 1)
    w = _w(global_batch=512, grad_accum=None)
    assert w.grad_accum == 512 and pipeline.flush_micro_batches(w) == 512
    w = _w(global_batch=64, micro_batch=2, gpus=128, grad_accum=None)  # dp 2
    assert w.grad_accum == 16


def test_global_batch_must_agree_with_micro_batch_grad_accum_and_dp():
    assert _w(global_batch=128, micro_batch=2).grad_accum == 64  # 2 x 64 x dp 1
    with pytest.raises(WorkloadError, match="global_batch = 100"):
        _w(global_batch=100)
    with pytest.raises(WorkloadError, match="not a multiple"):
        _w(global_batch=101, grad_accum=None, gpus=128)
    with pytest.raises(WorkloadError, match="needs `gpus`"):
        workload_from_dict(dict(name="x", model="Llama 3.1 8B", global_batch=8))


def test_torchtitan_flushes_the_pipeline_every_accumulation_step():
    # local_batch_size 8, pipeline_parallel_microbatch_size 1, 4 accumulation steps: 32
    # micro-batches a step, but each schedule runs 8: its bubble is (p - 1) / 8
    tt = _w(framework="torchtitan", grad_accum=32, pipeline_micro_batches=8)
    mg = _w(grad_accum=32)
    assert pipeline.flush_micro_batches(tt) == 8 and pipeline.flush_micro_batches(mg) == 32
    lay, _ = parallel.layout(tt, 64)
    assert parallel.step_time(tt, lay, 10.0, 0.0, 1e9, "nvlink", 50).scaling < \
        parallel.step_time(mg, lay, 10.0, 0.0, 1e9, "nvlink", 50).scaling
    assert pipeline.chunks_in_flight(_w(grad_accum=32, pipeline_micro_batches=4), 8) == 4
    with pytest.raises(WorkloadError, match="pipeline_micro_batches"):
        _w(grad_accum=30, pipeline_micro_batches=8)
