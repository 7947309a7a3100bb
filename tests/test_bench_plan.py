"""`gpuprices plan` and sizing/bench_plan.py on the real bundled warehouse of 2026-10-11
(tests/conftest.py: w41_settings)."""

import datetime as dt
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuprices.flows.cli.main import app
from gpuprices.flows.cli.rank_inputs import read_offers
from gpuprices.sizing import bench_plan as bp
from gpuprices.sizing.cost import CHECKPOINT_WRITE_GBS, checkpoint_gb
from gpuprices.sizing.rank import rank
from gpuprices.sizing.workload import load_workloads
from gpuprices.spiders import registry

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "sizing/workloads.toml"
DAY = "2026-10-11"
runner = CliRunner()
STEPS = ["memory fit", "micro-batch sweep", "one-node step benchmark + NCCL tests",
         "checkpoint write and restore", "simulated preemption and recovery"]
MULTI = "multi-node collective test + step benchmark"


@pytest.fixture(scope="module")
def plans(w41_settings):
    res = runner.invoke(app, ["plan", str(WORKLOADS), "--top", "3", "--json", "--date", DAY,
                              "--data-dir", str(w41_settings.data_dir)])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def offers(w41_settings):
    return read_offers(w41_settings.db_path, dt.date.fromisoformat(DAY))[1]


def test_plan_json_lists_steps_with_durations_and_costs_per_offer(plans):
    names = [w.name for w in load_workloads(WORKLOADS)]
    assert [p["workload"] for p in plans] == [n for n in names for _ in range(3)]
    for p in plans:
        assert p["as_of"] == DAY and p["currency"] == "USD"
        steps = [s["step"] for s in p["steps"]]
        # the multi-node test only when the job spans nodes, before the preemption drill
        expected = STEPS[:-1] + ([MULTI] if p["nodes"] > 1 else []) + STEPS[-1:]
        if p["gpus_per_node"] == 1 and p["gpus"] > 1:  # one-GPU nodes: no one-node test
            expected.remove(STEPS[2])
        assert steps == expected
        for s in p["steps"]:
            assert s["hours"] > 0 and s["billed_hours"] >= s["hours"] - 1e-9
            assert s["cost"] == pytest.approx(s["billed_hours"] * p["price_per_hour"] * s["nodes"])
            assert s["duration"] and s["record"] and 1 <= s["gpus"] <= p["gpus"]
        assert p["hours"] == pytest.approx(sum(s["hours"] for s in p["steps"]))
        assert 0 < p["cost"] <= p["cost_steps_alone"] + 1e-9


def test_plan_offers_are_ranks_best_offers_in_its_order(plans, w41_settings):
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--top", "3", "--json", "--date", DAY,
                              "--data-dir", str(w41_settings.data_dir)])
    ok = [r for r in json.loads(res.stdout) if r["verdict"] == "ok"]
    for name in {p["workload"] for p in plans}:
        ranked = [(r["provider"], r["sku"], r["region"], r["price_per_hour"])
                  for r in ok if r["workload"] == name][:3]
        planned = [(p["provider"], p["sku"], p["region"], p["price_per_hour"])
                   for p in plans if p["workload"] == name]
        assert planned == ranked


def test_durations_come_from_the_workloads_estimate(offers):
    w = {w.name: w for w in load_workloads(WORKLOADS)}["full-llama3.1-8b-8gpu"]
    row = next(r for r in rank([w], offers, top=3, node_shapes=registry.node_shapes())[w.name]
               if r.verdict == "ok")
    steps = {s.step: s for s in bp.plan_offer(w, row).steps}
    start = w.restart_minutes / 60
    step_s = w.micro_batch * w.grad_accum * w.seq_len / (row.tokens_per_s / row.gpus)
    assert steps[STEPS[2]].hours == pytest.approx(
        bp.NCCL_TESTS_MINUTES / 60 + start + bp.STEP_BENCH_STEPS * step_s / 3600)
    write_h = checkpoint_gb(w) / CHECKPOINT_WRITE_GBS / 3600
    assert steps[STEPS[3]].hours == pytest.approx(start + bp.CHECKPOINT_CYCLES * 2 * write_h)
    assert steps[STEPS[0]].gpus == 8  # an FSDP job over 8 GPUs is tested at its shard count


def test_minimum_billing_makes_short_tests_dear_and_says_so(offers):
    """GCP's DWS calendar mode is billed in whole days (spiders/providers/gcp/parser.py)."""
    dws = [o for o in offers if o["min_billing_s"] == 86_400]
    assert dws, "the 2026-10-11 GCP snapshot lists DWS calendar prices"
    w = {w.name: w for w in load_workloads(WORKLOADS)}["qlora-llama3.1-70b"]
    rows = [r for r in rank([w], dws, node_shapes=registry.node_shapes())[w.name]
            if r.verdict == "ok"]
    assert rows
    p = bp.plan_offer(w, rows[0])
    for s in p.steps:
        assert s.hours < 24 and s.billed_hours == 24
        assert s.cost == pytest.approx(24 * p.row.price_per_hour * s.nodes)
        assert any("minimum 24 h" in n and "dear" in n for n in s.notes), s.notes
    # back to back on one node: one day billed, not one per step
    assert p.billed_hours == 24 and p.cost == pytest.approx(24 * p.row.price_per_hour)
    assert p.cost_steps_alone == pytest.approx(len(p.steps) * p.cost)
    assert any("one session" in n for n in p.notes)


def test_spot_plan_names_its_preemption_rate(plans):
    spot = [p for p in plans if p["pricing_model"] == "spot"]
    assert spot
    for p in spot:
        drill = p["steps"][-1]
        assert any(n.startswith("spot: the run expects") for n in drill["notes"])
        assert all(math.isfinite(s["cost"]) for s in p["steps"])


def test_plan_terminal_output_names_every_step(w41_settings):
    res = runner.invoke(app, ["plan", str(WORKLOADS), "--top", "1", "--date", DAY,
                              "--data-dir", str(w41_settings.data_dir)])
    assert res.exit_code == 0, res.output
    for step in (*STEPS, MULTI, "plan, back to back"):
        assert step in res.stdout
