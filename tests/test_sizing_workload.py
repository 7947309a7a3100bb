"""Workload TOML parsing, architecture inference and bad input."""

from pathlib import Path

import pytest

from gpuprices.sizing.workload import (
    WorkloadError,
    infer_architecture,
    load_workloads,
    lookup_model,
    workload_from_dict,
)
from gpuprices.warehouse.gpus import gpu_models

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_workloads_parse():
    ws = load_workloads(ROOT / "sizing/workloads.toml", known_gpus=set(gpu_models()))
    assert len(ws) == 5
    by = {w.name: w for w in ws}
    assert by["qlora-llama3.1-70b"].arch.params_b == pytest.approx(70.55)
    assert by["cpt-llama3.1-70b-64gpu"].gpus == 64
    assert by["full-llama3.1-8b-8gpu"].sharding == "fsdp"
    assert by["qlora-llama3.1-8b-15M"].tokens == 15e6


def test_model_lookup_by_name_or_repo():
    assert lookup_model("llama 3.1 8b").hidden_size == 4096
    assert lookup_model("meta-llama/Llama-3.1-8B").num_kv_heads == 8
    assert lookup_model("no such model") is None


@pytest.mark.parametrize("name", ["Llama 2 7B", "Llama 2 13B", "Llama 3.1 8B",
                                  "Llama 3.1 70B", "Qwen2.5 32B"])
def test_inference_rule_recovers_known_shapes(name):
    real = lookup_model(name)
    guess = infer_architecture(real.params_b, {"vocab_size": real.vocab_size})
    # same parameter budget, layer count within ~25% of the real one
    total = guess.num_layers * guess.linear_params_per_layer() + 2 * guess.embedding_params
    assert total == pytest.approx(real.params_b * 1e9, rel=0.12)
    assert abs(guess.num_layers - real.num_layers) / real.num_layers < 0.3


def test_missing_fields_are_inferred_and_given_ones_kept(tmp_path):
    p = tmp_path / "w.toml"
    p.write_text('[[workload]]\nname = "custom"\nparams_b = 13\nhidden_size = 5120\n'
                 'vocab_size = 32000\nmethod = "lora"\n')
    (w,) = load_workloads(p)
    assert w.arch.hidden_size == 5120 and w.arch.vocab_size == 32000
    assert "hidden_size" not in w.arch.inferred
    assert {"num_layers", "num_attention_heads", "intermediate_size"} <= set(w.arch.inferred)
    assert 36 <= w.arch.num_layers <= 44  # Llama 2 13B has 40
    assert w.arch.intermediate_size % 256 == 0


@pytest.mark.parametrize("text,fragment", [
    ('[[workload]]\nname = "a"\nmethod = "lora"\n', "needs `model`"),
    ('[[workload]]\nname = "a"\nmodel = "Nope 9B"\n', "not in sizing/models.csv"),
    ('[[workload]]\nname = "a"\nparams_b = 7\nmethod = "dpo"\n', "method"),
    ('[[workload]]\nname = "a"\nparams_b = 7\nseq_len = 0\n', "seq_len must be positive"),
    ('[[workload]]\nname = "a"\nparams_b = 7\nseq_len = "long"\n', "wrong type"),
    ('[[workload]]\nname = "a"\nparams_b = 7\ngrad_checkpointing = "yes"\n', "wrong type"),
    ('[[workload]]\nname = "a"\nparams_b = 7\nsequence_length = 9\n', "unknown field"),
    ('[[workload]]\nname = "a"\nparams_b = 7\ngpu = "H100"\n', "canonical GPU"),
    ('[[workload]]\nname = "a"\nparams_b = -1\n', "positive"),
    ('[[workload]]\nname = "a"\nparams_b = 7\ngpus = 8\nmax_gpus = 4\n', "max_gpus (4) is below"),
    ('[[workload]]\nname = "a"\nparams_b = 7\nmax_gpus = 0\n', "max_gpus must be positive"),
    ('[[workload]]\nname = "a"\nparams_b = 7\n[[workload]]\nname = "a"\nparams_b = 8\n',
     "duplicate"),
    ('name = "a"\n', "no [[workload]]"),
    ('[[workload]\nname = "a"\n', "not valid TOML"),
])
def test_bad_input_errors_name_the_problem(tmp_path, text, fragment):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(WorkloadError, match=None) as exc:
        load_workloads(p, known_gpus=set(gpu_models()))
    assert fragment in str(exc.value)


def test_missing_file():
    with pytest.raises(WorkloadError, match="no such file"):
        load_workloads("/nonexistent/w.toml")


def test_full_8bit_defaults_to_8bit_optimizer():
    w = workload_from_dict(dict(name="x", params_b=7, method="full_8bit"))
    assert w.optimizer == "adamw_8bit"


def test_max_gpus_defaults_to_gpus():
    assert workload_from_dict(dict(name="x", params_b=7, gpus=1)).gpu_cap == 1
    assert workload_from_dict(dict(name="x", params_b=7, gpus=1, max_gpus=8)).gpu_cap == 8
    assert workload_from_dict(dict(name="x", params_b=7)).gpu_cap is None
