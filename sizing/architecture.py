"""Model architectures: the table in sizing/models.csv, and the one rule that infers the
fields a workload does not give.

A workload names a model from models.csv or gives `params_b` plus any architecture fields it
knows. Missing fields are inferred from `params_b` by one documented rule (`infer_architecture`):

* shape of a Llama-style decoder: gated (SwiGLU) MLP with intermediate = 8/3 x hidden rounded up
  to a multiple of 256, head_dim 128, hidden / num_layers = 128 (Llama 2 7B 4096/32 and 13B
  5120/40, models.csv), multi-head attention (num_kv_heads = heads: the larger, safer activation
  count), untied embeddings, vocab 128256 (Llama 3 tokenizer; a large vocab is the safe side for
  the logits buffer);
* params = num_layers x (4 h^2 + 3 h i) + 2 x vocab x h; the number of layers is the integer
  that brings this closest to params_b, hidden = 128 x num_layers.

Given fields always win over inferred ones; the result records which fields were inferred.
"""

from __future__ import annotations

import csv
import math
from functools import cache
from pathlib import Path
from typing import Any

from gpuprices.sizing.workload_fields import ARCH_FIELDS, Architecture, WorkloadError

HERE = Path(__file__).parent
MODELS_CSV = HERE / "models.csv"
INFER_VOCAB = 128256  # Llama 3 vocab_size (models.csv, Llama 3.1 8B)
INFER_HEAD_DIM = 128  # Llama 2/3, Qwen2.5 7B+ (models.csv)
INFER_ASPECT = 128  # hidden / layers of Llama 2 7B and 13B (models.csv)


def _bool(text: str) -> bool:
    return text.strip().lower() == "true"


@cache
def model_table() -> dict[str, Architecture]:
    with MODELS_CSV.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    table = {}
    for r in rows:
        table[r["name"].lower()] = Architecture(
            name=r["name"],
            params_b=float(r["params_b"]),
            hidden_size=int(r["hidden_size"]),
            num_layers=int(r["num_layers"]),
            num_attention_heads=int(r["num_attention_heads"]),
            num_kv_heads=int(r["num_kv_heads"]),
            head_dim=int(r["head_dim"]),
            intermediate_size=int(r["intermediate_size"]),
            vocab_size=int(r["vocab_size"]),
            tie_embeddings=_bool(r["tie_embeddings"]),
            mlp=r["mlp"] or "swiglu",
            source=r["source"],
        )
    return table


def lookup_model(name: str) -> Architecture | None:
    table = model_table()
    key = name.strip().lower()
    if key in table:
        return table[key]
    for arch in table.values():  # also accept the Hugging Face repo id
        if key == _hf_repo(arch.name).lower():
            return arch
    return None


@cache
def _hf_repos() -> dict[str, str]:
    with MODELS_CSV.open(newline="") as fh:
        return {r["name"]: r["hf_repo"] for r in csv.DictReader(fh)}


def _hf_repo(name: str) -> str:
    return _hf_repos().get(name, "")


def _round_up(x: float, step: int) -> int:
    return int(math.ceil(x / step) * step)


def infer_architecture(params_b: float, given: dict[str, Any] | None = None,
                       name: str = "custom") -> Architecture:
    """Fill the architecture fields not in `given` by the rule in the module docstring."""
    given = {k: v for k, v in (given or {}).items() if v is not None}
    if params_b <= 0:
        raise WorkloadError(f"{name}: params_b must be positive, got {params_b}")
    vocab = int(given.get("vocab_size", INFER_VOCAB))
    target = params_b * 1e9
    if "hidden_size" in given and "num_layers" in given:
        h, layers = int(given["hidden_size"]), int(given["num_layers"])
    elif "hidden_size" in given:
        h = int(given["hidden_size"])
        i = int(given.get("intermediate_size", _round_up(8 * h / 3, 256)))
        per_layer = 4 * h * h + 3 * h * i
        layers = max(1, round((target - 2 * vocab * h) / per_layer))
    else:
        best = None
        for cand in range(1, 257):
            hh = int(given.get("hidden_size", INFER_ASPECT * cand))
            ii = int(given.get("intermediate_size", _round_up(8 * hh / 3, 256)))
            n_layers = int(given.get("num_layers", cand))
            est = n_layers * (4 * hh * hh + 3 * hh * ii) + 2 * vocab * hh
            err = abs(est - target)
            if best is None or err < best[0]:
                best = (err, hh, n_layers)
        _, h, layers = best
    heads = int(given.get("num_attention_heads", max(1, h // INFER_HEAD_DIM)))
    kv = int(given.get("num_kv_heads", heads))
    inter = int(given.get("intermediate_size", _round_up(8 * h / 3, 256)))
    inferred = tuple(f for f in ARCH_FIELDS if f not in given)
    return Architecture(
        name=name, params_b=params_b, hidden_size=h, num_layers=layers,
        num_attention_heads=heads, num_kv_heads=kv, head_dim=h // heads,
        intermediate_size=inter, vocab_size=vocab, tie_embeddings=False, mlp="swiglu",
        inferred=inferred, source="inferred from params_b (sizing/architecture.py rule)",
    )
