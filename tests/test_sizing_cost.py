"""Cost per offer: billing increments and minimums, spot rework, storage/egress, traceability."""

import math

import pytest

from gpuprices.sizing.cost import (
    DEFAULT_BAND,
    billed_hours,
    checkpoint_gb,
    estimate_cost,
    preemptions_per_hour,
)
from gpuprices.sizing.throughput import estimate_throughput, hardware_flops_per_token
from gpuprices.sizing.workload import workload_from_dict
from gpuprices.warehouse.gpus import gpu_models


def _w(**kw):
    d = dict(name="c", model="Llama 3.1 8B", method="lora", tokens=36e6,
             checkpoint_every_tokens=3.6e6, restart_minutes=0.0, checkpoint_write_minutes=0.0)
    d.update(kw)
    return workload_from_dict(d)


@pytest.mark.parametrize("hours,inc,minimum,expected", [
    (0.5, 3600, None, 1.0),          # hourly billing rounds up
    (1.01, 3600, None, 2.0),
    (0.5, 1, 60, 0.5),               # per-second
    (10 / 3600, 1, 60, 60 / 3600),   # 10 s run, 60 s minimum
    (0.25, 60, 3600, 1.0),           # minimum dominates
    (2.0, None, None, 2.0),          # no increment stated: per second
])
def test_billed_hours(hours, inc, minimum, expected):
    assert billed_hours(hours, inc, minimum) == pytest.approx(expected)


def test_on_demand_cost_is_hours_times_price():
    # 1000 tokens/s -> 10 h for 36M tokens; 10 checkpoints of 1 h each
    c = estimate_cost(_w(), price_per_hour=2.0, nodes=1, tokens_per_s=1000.0,
                      pricing_model="on_demand", billing_increment_s=3600)
    assert c.checkpoints == 10
    assert c.wall_hours == pytest.approx(10.0)
    assert c.inputs["gpu_cost_to_finish"] == pytest.approx(20.0)
    assert c.marginal_checkpoint_cost == pytest.approx(2.0 + c.inputs["storage_cost"] / 10)
    assert c.expected_preemptions == 0
    # finish = GPU + storage + egress (+ ingest 0, orchestration 0, engineer 0)
    assert c.cost_to_finish == pytest.approx(
        20.0 + c.inputs["storage_cost"] + c.inputs["egress_cost"])
    # per successful checkpoint: everything the run costs, over the checkpoints it delivers
    assert c.cost_per_checkpoint == pytest.approx(c.cost_to_finish / 10)


def test_fixed_costs_count_per_successful_checkpoint_not_per_marginal_one():
    # A short job on hourly billing with a long start-up: the marginal checkpoint is cheap,
    # but the start-up and the rounding up are paid too, and they are in the per-checkpoint cost.
    w = _w(tokens=1.8e6, checkpoint_every_tokens=1.8e5, restart_minutes=20.0)
    c = estimate_cost(w, price_per_hour=6.0, nodes=1, tokens_per_s=1000.0,
                      pricing_model="on_demand", billing_increment_s=3600)
    assert c.billed_hours == 1.0  # 20 min start + 30 min training, billed as one hour
    assert c.cost_per_checkpoint == pytest.approx(c.cost_to_finish / 10)
    assert c.cost_per_checkpoint > 1.9 * c.marginal_checkpoint_cost


def test_billing_increment_and_nodes_multiply():
    c = estimate_cost(_w(tokens=3.7e6), price_per_hour=10.0, nodes=2, tokens_per_s=1000.0,
                      pricing_model="on_demand", billing_increment_s=3600)
    # 3.7M tokens at 1000/s = 1.03 h -> billed 2 h on 2 nodes
    assert c.billed_hours == 2.0
    assert c.inputs["gpu_cost_to_finish"] == pytest.approx(40.0)


def test_minimum_billing_raises_first_checkpoint_cost():
    w = _w(checkpoint_every_tokens=3.6e5)  # 6 minutes to the first checkpoint
    per_s = estimate_cost(w, price_per_hour=6.0, nodes=1, tokens_per_s=1000.0,
                          pricing_model="on_demand", billing_increment_s=1)
    min_h = estimate_cost(w, price_per_hour=6.0, nodes=1, tokens_per_s=1000.0,
                          pricing_model="on_demand", billing_increment_s=1, min_billing_s=3600)
    assert per_s.cost_first_checkpoint == pytest.approx(0.6 + per_s.inputs["storage_cost"] / 100,
                                                        rel=1e-3)
    assert min_h.cost_first_checkpoint == pytest.approx(6.0 + min_h.inputs["storage_cost"] / 100,
                                                        rel=1e-3)


def test_spot_rework_is_restart_plus_half_interval_per_preemption():
    w = _w(restart_minutes=30.0)
    band = "10-15%"
    lam = preemptions_per_hour(band)
    assert lam == pytest.approx(-math.log(1 - 0.125) / 730)
    c = estimate_cost(w, price_per_hour=1.0, nodes=1, tokens_per_s=1000.0,
                      pricing_model="spot", extra={"interruption_band": band})
    interval = 1.0
    per = 0.5 + interval / 2
    assert c.rework_hours == pytest.approx(c.expected_preemptions * per)
    run_h = 0.5 + 10.0
    assert c.expected_preemptions == pytest.approx(lam * run_h / (1 - lam * per))
    assert c.inputs["interruption_band"] == band
    on_demand = estimate_cost(w, price_per_hour=1.0, nodes=1, tokens_per_s=1000.0,
                              pricing_model="on_demand")
    assert c.cost_to_finish > on_demand.cost_to_finish
    assert c.cost_per_checkpoint > on_demand.cost_per_checkpoint


def test_spot_risk_scales_with_nodes_and_run_length():
    # A job on N spot nodes stops when any node is reclaimed: N x the per-node rate.
    w = _w(restart_minutes=30.0)
    one, eight = (estimate_cost(w, price_per_hour=1.0, nodes=n, tokens_per_s=1000.0,
                                pricing_model="spot", extra={}) for n in (1, 8))
    assert eight.inputs["preemptions_per_hour"] == pytest.approx(
        8 * one.inputs["preemptions_per_hour"])
    assert eight.expected_preemptions > 8 * one.expected_preemptions  # rework is preempted too
    longer = estimate_cost(_w(restart_minutes=30.0, tokens=72e6), price_per_hour=1.0, nodes=1,
                           tokens_per_s=1000.0, pricing_model="spot", extra={})
    assert longer.expected_preemptions > 1.9 * one.expected_preemptions
    # Preempted faster than it recovers: the run never finishes (not a NaN, not a bargain).
    hopeless = estimate_cost(_w(restart_minutes=60.0, checkpoint_every_tokens=3.6e7),
                             price_per_hour=0.01, nodes=64, tokens_per_s=1000.0,
                             pricing_model="spot", extra={})
    assert hopeless.cost_to_finish == math.inf and hopeless.cost_per_checkpoint == math.inf


def test_committed_price_is_paid_for_the_whole_term():
    w = _w()  # 10 h at 1000 tokens/s
    c = estimate_cost(w, price_per_hour=2.0, nodes=2, tokens_per_s=1000.0,
                      pricing_model="committed", commitment_months=1)
    assert c.billed_hours == pytest.approx(730.0)
    assert c.inputs["gpu_cost_to_finish"] == pytest.approx(730.0 * 2.0 * 2)
    # inside the paid term, one more checkpoint costs only its storage
    assert c.marginal_checkpoint_cost == pytest.approx(c.inputs["storage_cost"] / 10)


def test_spot_without_band_uses_documented_default():
    c = estimate_cost(_w(), price_per_hour=1.0, nodes=1, tokens_per_s=1000.0,
                      pricing_model="spot", extra={})
    assert c.inputs["interruption_band"] == DEFAULT_BAND
    assert c.inputs["interruption_band_source"].startswith("assumed: 15%/day, ")
    worse = preemptions_per_hour(DEFAULT_BAND)
    assert all(preemptions_per_hour(b) <= worse for b in ("<5%", "5-10%", "15-20%"))


def test_orchestration_engineer_and_fx_scaling():
    w = _w(orchestration_usd_per_hour=1.0, engineer_hours=4, engineer_usd_per_hour=100.0)
    usd = estimate_cost(w, price_per_hour=2.0, nodes=1, tokens_per_s=1000.0,
                        pricing_model="on_demand")
    base = estimate_cost(_w(), price_per_hour=2.0, nodes=1, tokens_per_s=1000.0,
                         pricing_model="on_demand")
    assert usd.cost_to_finish - base.cost_to_finish == pytest.approx(10.0 + 400.0)
    eur = estimate_cost(w, price_per_hour=2.0, nodes=1, tokens_per_s=1000.0,
                        pricing_model="on_demand", currency="EUR", usd_to_currency=0.5)
    assert eur.inputs["egress_cost"] == pytest.approx(usd.inputs["egress_cost"] / 2)


def test_checkpoint_size_lora_vs_full():
    assert checkpoint_gb(_w()) < 1
    full = checkpoint_gb(_w(method="full", precision="bf16-mixed"))
    assert full == pytest.approx(8.03 * 12, rel=0.01)  # fp32 weights + 2 fp32 Adam states


def test_throughput_recompute_qlora_and_pcie_scaling():
    g = gpu_models()
    lora = _w()
    assert hardware_flops_per_token(_w(grad_checkpointing=True)) > hardware_flops_per_token(lora)
    assert hardware_flops_per_token(_w(method="full")) > hardware_flops_per_token(lora)
    t_lora = estimate_throughput(lora, g["H100-SXM-80GB"])
    t_q = estimate_throughput(_w(method="qlora"), g["H100-SXM-80GB"])
    assert t_q.tokens_per_s < t_lora.tokens_per_s
    full = _w(method="full", sharding="fsdp", micro_batch=1, seq_len=1024)
    nv = estimate_throughput(full, g["H100-SXM-80GB"], gpus_per_node=8)
    pcie = estimate_throughput(full, g["L40S-48GB"], gpus_per_node=8)
    assert nv.scaling_efficiency > 0.9
    assert pcie.scaling_efficiency < nv.scaling_efficiency
    multi = estimate_throughput(full, g["H100-SXM-80GB"], gpus_per_node=8, nodes=4)
    assert multi.link == "multi-node" and multi.scaling_efficiency < nv.scaling_efficiency


def test_daily_default_band_parses_and_dominates_aws_bands():
    assert DEFAULT_BAND.endswith("/day")
    assert preemptions_per_hour("15%/day") == pytest.approx(-math.log(0.85) / 24)
    with pytest.raises(ValueError):
        preemptions_per_hour("sometimes")
