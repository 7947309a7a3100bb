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
    return workload_from_dict(d)


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
