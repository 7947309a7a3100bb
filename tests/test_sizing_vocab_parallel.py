"""Vocabulary-parallel loss under tensor parallelism (sizing/parallel.py `logits_split`, the
`vocab_parallel_loss` field, the megatron / torchtitan profiles) and the 405B 3D-parallel layout
of sizing/pretraining.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuprices.flows.cli.sizing import app
from gpuprices.sizing import parallel
from gpuprices.sizing.frameworks import PROFILES
from gpuprices.sizing.memory import GB, estimate_memory
from gpuprices.sizing.workload import WorkloadError, load_workloads, workload_from_dict

ROOT = Path(__file__).resolve().parents[1]
PRETRAINING = ROOT / "sizing" / "pretraining.toml"


def _405b(**kw):
    (w,) = load_workloads(PRETRAINING)
    d = dict(name=w.name, model="Llama 3.1 405B", method="full", precision="bf16-mixed",
             framework="torchtitan", seq_len=8192, micro_batch=1, grad_accum=16,
             grad_checkpointing=True, tensor_parallel=8, pipeline_parallel=8,
             sharding="fsdp", gpus=512, gpu="H100-SXM-80GB")
    d.update(kw)
    return workload_from_dict(d)


def test_405b_layout_splits_the_fp32_logits_by_tp():
    (w,) = load_workloads(PRETRAINING)
    assert (w.tensor_parallel, w.pipeline_parallel, w.gpus, w.framework) == \
        (8, 8, 512, "torchtitan")
    est = estimate_memory(w, gpus=512)
    full = 8192 * 128256 * 12.0 / GB  # the 12.6 GB of fp32 logits per GPU
    assert full == pytest.approx(12.6, abs=0.05)
    assert est.breakdown["logits"] == pytest.approx(full / 8)
    assert est.labels["logits"] == "logits, vocabulary-parallel over TP 8"


def test_field_turns_it_off_and_says_so():
    est = estimate_memory(_405b(vocab_parallel_loss=False), gpus=512)
    assert est.breakdown["logits"] == pytest.approx(8192 * 128256 * 12.0 / GB)
    assert "vocab_parallel_loss = false" in est.labels["logits"]


def test_frameworks_without_it_gather_the_logits():
    # torchtune's TP plan gathers the output (output_layouts=Replicate())
    assert not PROFILES["torchtune"].vocab_parallel_loss
    assert PROFILES["megatron"].vocab_parallel_loss and PROFILES["torchtitan"].vocab_parallel_loss
    tt = estimate_memory(_405b(framework="torchtune"), gpus=512)
    tt_tokens = 8192 * 128256 * PROFILES["torchtune"].logits_bytes / GB
    assert tt.breakdown["logits"] == pytest.approx(tt_tokens)
    assert "gathered" in tt.labels["logits"]
    # and torchtune can be told it runs a loss-parallel plan
    on = estimate_memory(_405b(framework="torchtune", vocab_parallel_loss=True), gpus=512)
    assert on.breakdown["logits"] == pytest.approx(tt_tokens / 8)


def test_megatron_holds_fp32_softmax_and_bf16_grad_per_logit():
    est = estimate_memory(_405b(framework="megatron"), gpus=512)
    assert est.breakdown["logits"] == pytest.approx(8192 * 128256 * 6.0 / 8 / GB)


def test_no_split_without_tp_and_cp_still_divides():
    one = workload_from_dict(dict(name="x", model="Llama 3.1 8B", method="full",
                                  framework="torchtitan", gpus=8, sharding="fsdp"))
    assert parallel.logits_split(one, parallel.layout(one, 8)[0]) == (1, "")
    cp = _405b(context_parallel=2, pipeline_parallel=4)
    split, words = parallel.logits_split(cp, parallel.layout(cp, 512)[0])
    assert split == 16 and words.endswith("TP 8 x CP 2")


def test_field_must_be_a_bool():
    with pytest.raises(WorkloadError, match="vocab_parallel_loss"):
        workload_from_dict(dict(name="x", model="Llama 3.1 8B", vocab_parallel_loss="yes"))


def test_size_names_the_split_in_its_breakdown():
    res = CliRunner().invoke(app, ["size", str(PRETRAINING)])
    assert res.exit_code == 0, res.output
    assert "logits, vocabulary-parallel over TP 8" in res.output
    res = CliRunner().invoke(app, ["size", str(PRETRAINING), "--json"])
    (obj,) = json.loads(res.stdout)
    assert obj["breakdown_labels"] == {"logits": "logits, vocabulary-parallel over TP 8"}
    assert obj["breakdown"]["logits"] == pytest.approx(1.58, abs=0.01)
    lay = obj["parallel"]
    assert (lay["vocab_parallel_loss"], lay["pipeline_schedule"], lay["virtual_stages"],
            lay["pipeline_micro_batches"]) == (True, "1f1b", 1, 16)


def test_a_layout_that_does_not_fit_keeps_the_split_label_and_has_no_speed():
    # 64 GPUs: TP 8 x PP 8 with no data parallelism left to shard the states over
    res = CliRunner().invoke(app, ["size", str(PRETRAINING), "--gpus", "64", "--json"])
    assert res.exit_code == 0, res.output
    (r,) = json.loads(res.stdout)
    assert r["verdict"] == "no"
    assert r["breakdown_labels"]["logits"] == "logits, vocabulary-parallel over TP 8"
    assert r["tokens_per_s"] is None and r["hours"] is None
    assert r["would_fit"]["gpus"] > 64
