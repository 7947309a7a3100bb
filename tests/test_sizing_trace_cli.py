"""`size --engine trace` without the optional extra, and which workloads the trace engine
takes: these run in the normal suite, without torch (tests/test_sizing_trace.py needs it)."""

import sys
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from gpuprices.flows.cli.sizing import app
from gpuprices.sizing import trace
from gpuprices.sizing.workload import load_workloads

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "sizing/workloads.toml"
runner = CliRunner()


def test_without_the_extra_size_says_install_it_and_exits_2(monkeypatch):
    # A None entry in sys.modules is what an absent package looks like to find_spec.
    monkeypatch.setitem(sys.modules, "peft", None)
    assert trace.available() is False
    res = runner.invoke(app, ["size", str(WORKLOADS), "--engine", "trace"])
    assert res.exit_code == 2
    assert "gpuprices[trace]" in res.output


def test_an_unknown_engine_is_a_usage_error():
    res = runner.invoke(app, ["size", str(WORKLOADS), "--engine", "guess"])
    assert res.exit_code == 2 and "closed-form or trace" in res.output


def test_the_default_engine_adds_no_trace_field():
    res = runner.invoke(app, ["size", str(WORKLOADS), "--json"])
    assert res.exit_code == 0 and '"trace"' not in res.stdout


def test_lora_and_full_training_on_one_gpu_or_fsdp_sharded_are_traced():
    why = {w.name: trace.unsupported(w, w.gpus or 1) for w in load_workloads(WORKLOADS)}
    assert why["lora-qwen2.5-32b"] is None
    assert "CUDA-only" in why["qlora-llama3.1-70b"]
    # one rank of the 8-GPU FSDP full fine-tune is traced (fake process group)
    assert why["full-llama3.1-8b-8gpu"] is None
    w8 = next(w for w in load_workloads(WORKLOADS) if w.name == "full-llama3.1-8b-8gpu")
    # sharding with nothing to shard over is a contradiction, not a trace
    assert "multi-GPU" in trace.unsupported(w8, 1)
    assert trace.unsupported(replace(w8, sharding="none", gpus=1), 1) is None
    # ZeRO-2 keeps full parameters (FSDP2 cannot express it); plain data parallel is not sharded
    assert "zero2" in trace.unsupported(replace(w8, sharding="zero2"), 8)
    assert "sharding none" in trace.unsupported(replace(w8, sharding="none"), 8)
    assert "tensor, pipeline" in trace.unsupported(replace(w8, tensor_parallel=2), 8)
    assert "fused" in trace.unsupported(replace(w8, sharding="none", framework="unsloth"), 1)
