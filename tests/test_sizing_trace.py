"""The trace engine (sizing/trace.py) on real calibration rows. NEEDS TORCH: the whole module
is skipped unless torch, transformers and peft are importable (`pip install 'gpuprices[trace]'`),
so the normal suite stays fast and green without them. Each trace takes 1-10 s on the CPU."""

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

# The engine is an optional extra (192 MB of CPU torch): `make test` does not install it, and
# tests/test_sizing_trace_cli.py checks, without torch, that `size --engine trace` then refuses
# with the install command. These tests trace real steps and need the extra itself.
_NOT_INSTALLED = ("NOT RUN: these trace real training steps with PyTorch, which is the optional "
                  "extra gpuprices[trace] (~200 MB CPU torch) that `make test` leaves out; "
                  "tests/test_sizing_trace_cli.py still checks that `size --engine trace` "
                  "refuses clearly without it. To run them: `make test-trace` (installs the "
                  "extra with a CPU build of torch, then runs this file)")
for _module in ("torch", "transformers", "peft"):
    pytest.importorskip(_module, reason=_NOT_INSTALLED)

from typer.testing import CliRunner  # noqa: E402

from gpuprices.flows.cli.sizing import app  # noqa: E402
from gpuprices.sizing import trace  # noqa: E402
from gpuprices.sizing.workload import workload_from_dict  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION = ROOT / "tests/fixtures/sizing/measured_calibration.csv"
# LitGPT resource tables, LoRA r=8 on q,v, bf16-true, one A100 40GB (calibration rows; the
# workload rules are bench/sizing_accuracy.py's).
LITGPT = dict(method="lora", framework="litgpt", lora_rank=8, lora_targets="qv",
              gpu="A100-40GB", gpus=1)


def _measured(model: str, micro_batch: str) -> str:
    for r in csv.DictReader(CALIBRATION.open(newline="")):
        if (r["source"].startswith("LitGPT resource tables - Finetuning with LoRA on 1 GPU")
                and r["model"] == model and r["micro_batch"] == micro_batch
                and r["precision"] == "bf16-true"):
            return r["peak_mem_gb_per_gpu"]
    raise LookupError(model)


def test_llama2_7b_lora_traced_within_10_percent_of_its_published_peak():
    w = workload_from_dict(dict(name="l7", model="Llama 2 7B", seq_len=1304, **LITGPT))
    t = trace.trace(w)
    measured = float(_measured("Llama-2-7B", "1"))  # torch.cuda.max_memory_allocated
    assert abs(t.allocated_gb / measured - 1) < 0.10, t.allocated_gb
    assert t.per_gpu_gb == pytest.approx(t.allocated_gb + 0.5)  # + CUDA context term
    # frozen bf16 weights dominate: 6.74e9 params x 2 B
    assert t.peak_breakdown["Parameter"] / 1e9 == pytest.approx(13.5, rel=0.02)


def test_the_published_out_of_memory_row_is_over_the_card():
    assert _measured("Llama-2-13B", "2") == ""  # measured_oom on 40 GB
    w = workload_from_dict(dict(name="l13", model="Llama 2 13B", seq_len=1304, micro_batch=2,
                                **LITGPT))
    assert trace.trace(w).per_gpu_gb > 40


def test_checkpointing_lowers_the_traced_peak():
    base = dict(name="q", model="Qwen2.5 0.5B", method="lora", seq_len=2048, micro_batch=2)
    plain = trace.trace(workload_from_dict(base))
    ckpt = trace.trace(workload_from_dict(dict(base, grad_checkpointing=True)))
    assert ckpt.peak_bytes < 0.8 * plain.peak_bytes


def test_size_engine_trace_json(tmp_path):
    toml = tmp_path / "w.toml"
    toml.write_text('[[workload]]\nname = "small"\nmodel = "Qwen2.5 0.5B"\nmethod = "full"\n'
                    'seq_len = 512\ngpu = "L4-24GB"\n\n'
                    '[[workload]]\nname = "q"\nmodel = "Qwen2.5 0.5B"\nmethod = "qlora"\n')
    res = CliRunner().invoke(app, ["size", str(toml), "--engine", "trace", "--json"])
    assert res.exit_code == 0, res.output
    small, q = json.loads(res.stdout)
    tr = small["trace"]
    assert tr["supported"] and tr["verdict"] in ("fits", "tight", "no")
    assert tr["difference_gb"] == pytest.approx(tr["per_gpu_gb"] - small["per_gpu_gb"], abs=0.02)
    assert q["trace"] == {"supported": False, "reason": trace.unsupported(
        workload_from_dict(dict(name="q", model="Qwen2.5 0.5B", method="qlora")))}


# One rank of an FSDP job: a fake process group, fully_shard per decoder layer, FSDPMemTracker.
FSDP_FULL = dict(name="f", model="Qwen2.5 1.5B", method="full", precision="bf16-mixed",
                 sharding="fsdp", seq_len=1024, grad_checkpointing=True)


@pytest.mark.parametrize("gpus", [2, 4])
def test_one_fsdp_rank_holds_its_shard_of_the_fp32_weights_and_adam_states(gpus):
    w = workload_from_dict(dict(FSDP_FULL, gpus=gpus))
    t = trace.trace(w, gpus)
    params = w.arch.params
    b = t.peak_breakdown
    assert b["Sharded Param"] == pytest.approx(params * 4 / gpus, rel=0.03)  # fp32 shard
    assert b["OptState"] == pytest.approx(2 * b["Sharded Param"], rel=0.01)  # exp_avg, exp_avg_sq
    # only the layers being computed are gathered, never the whole model
    assert b["Unsharded Param"] < params * 2 / 2
    one = trace.trace(replace(w, sharding="none", gpus=1), 1)
    assert t.peak_bytes < one.peak_bytes


def test_size_traces_a_2_rank_fsdp_lora_of_an_8b(tmp_path):
    toml = tmp_path / "w.toml"
    toml.write_text('[[workload]]\nname = "l8"\nmodel = "Llama 3.1 8B"\nmethod = "lora"\n'
                    'sharding = "fsdp"\ngpus = 2\nseq_len = 2048\ngrad_checkpointing = true\n'
                    'gpu = "A100-SXM-80GB"\n')
    res = CliRunner().invoke(app, ["size", str(toml), "--engine", "trace", "--json"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    tr = row["trace"]
    assert tr["supported"] and tr["verdict"] == "fits"
    # the frozen bf16 base split over two ranks: 8.03e9 x 2 B / 2
    assert tr["peak_breakdown_gb"]["Sharded Param"] == pytest.approx(8.03, rel=0.02)
    assert abs(tr["difference_pct"]) < 25


def test_litgpt_fsdp_adds_its_full_weight_copy_as_a_named_term():
    base = dict(name="p", model="phi-1.5", method="full", framework="litgpt",
                precision="bf16-true", sharding="fsdp", gpus=2, seq_len=512)
    t = trace.trace(workload_from_dict(base), 2)
    w = workload_from_dict(base)
    assert t.peak_breakdown["full weight copy (litgpt FSDP)"] == int(w.arch.params * 2)
    hf = trace.trace(workload_from_dict(dict(base, framework="hf")), 2)
    assert "full weight copy (litgpt FSDP)" not in hf.peak_breakdown
