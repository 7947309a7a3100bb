"""Workloads (TOML `[[workload]]` tables) and model architectures (sizing/models.csv).

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
import tomllib
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
MODELS_CSV = HERE / "models.csv"

METHODS = ("qlora", "lora", "full", "full_8bit")
# fp8: Transformer Engine-style fp8 matmuls, higher-precision master weights (sizing/parallel.py);
# needs a card with fp8 tensor cores (sizing/compat.py's fp8 rule).
PRECISIONS = ("bf16-true", "bf16-mixed", "fp16-mixed", "fp32", "fp8")
FRAMEWORKS = ("hf", "torchtune", "litgpt", "unsloth")
OPTIMIZERS = ("adamw", "adamw_8bit", "paged_adamw_8bit")
LORA_TARGETS = ("all", "attn", "qv")
SHARDINGS = ("none", "zero2", "zero3", "fsdp")
LOSSES = ("full", "chunked", "fused")  # sizing/switches.py
# The GPU vendors of warehouse/gpus.csv (its `vendor` column, lower-cased): what `vendors` may
# name (tests/test_sizing_compat.py keeps the two in step).
VENDORS = ("nvidia", "amd")
ARCH_FIELDS = (
    "hidden_size", "num_layers", "num_attention_heads", "num_kv_heads", "intermediate_size",
    "vocab_size",
)
INFER_VOCAB = 128256  # Llama 3 vocab_size (models.csv, Llama 3.1 8B)
INFER_HEAD_DIM = 128  # Llama 2/3, Qwen2.5 7B+ (models.csv)
INFER_ASPECT = 128  # hidden / layers of Llama 2 7B and 13B (models.csv)


class WorkloadError(ValueError):
    """A workload file or table that cannot be used, with the workload name and the field."""


@dataclass(frozen=True)
class Architecture:
    name: str
    params_b: float
    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_embeddings: bool = False
    mlp: str = "swiglu"  # swiglu (gated: 3 matrices) or gelu (2 matrices)
    inferred: tuple[str, ...] = ()
    source: str = ""

    @property
    def q_dim(self) -> int:
        return self.num_attention_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    def linear_params_per_layer(self) -> int:
        h, i = self.hidden_size, self.intermediate_size
        attn = h * self.q_dim + 2 * h * self.kv_dim + self.q_dim * h
        mlp = (3 if self.mlp == "swiglu" else 2) * h * i
        return attn + mlp

    @property
    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    @property
    def lm_head_params(self) -> int:
        return 0 if self.tie_embeddings else self.vocab_size * self.hidden_size

    @property
    def params(self) -> float:
        """Parameter count: the stated params_b (models.csv computes it from the config)."""
        return self.params_b * 1e9


@dataclass(frozen=True)
class Workload:
    name: str
    arch: Architecture
    method: str = "lora"
    precision: str = "bf16-true"
    framework: str = "hf"
    optimizer: str = "adamw"
    seq_len: int = 2048
    micro_batch: int = 1
    grad_accum: int = 1
    grad_checkpointing: bool = False
    flash_attention: bool = True
    lora_rank: int = 16
    lora_targets: str = "all"
    lora_dropout: bool = True
    double_quant: bool = True
    sharding: str = "none"
    # Parallelism (sizing/parallel.py): tensor, pipeline and context-parallel degrees; `sharding`
    # shards over the remaining data-parallel degree gpus / (tp * pp * cp).
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    context_parallel: int = 1
    gpu: str | None = None
    gpus: int | None = None
    # The most GPUs `rank` may scale the job out to (default: `gpus`, so a job of `gpus = 1`
    # is never priced as if it ran on 8). None with `gpus` unset: as many as it needs to fit.
    max_gpus: int | None = None
    # The GPU vendors the job may run on (e.g. ("nvidia",)); None: any. Cards of other vendors
    # are `incompatible` in rank (sizing/compat.py).
    vendors: tuple[str, ...] | None = None
    tokens: float = 1e8
    checkpoint_every_tokens: float = 1e7
    # None: the estimator's measured error margin (sizing/fit.py, sizing/fit_margin.csv); a
    # number set here wins over it.
    margin: float | None = None
    # Memory switches (sizing/switches.py, docs/sizing.md "Long context and memory switches").
    # None: the framework profile's default (sizing/frameworks.py).
    loss: str | None = None  # full | chunked | fused
    loss_chunks: int | None = None  # chunks of a chunked loss
    activation_offload: bool | None = None  # saved / checkpointed activations in host RAM
    optimizer_in_backward: bool | None = None  # step each parameter as its gradient is ready
    paged_optimizer: bool | None = None  # None: true for optimizer = "paged_*"
    packing: bool | None = None  # sample packing: full rows, no padding
    tiled_mlp: bool | None = None  # MLP over sequence shards (ALST TiledMLP)
    mean_sample_tokens: float | None = None  # mean sample length (padding waste w/o packing)
    # cost inputs (documented defaults in sizing/cost.py)
    restart_minutes: float = 15.0
    checkpoint_write_minutes: float | None = None
    dataset_gb: float | None = None
    egress_gb: float | None = None
    checkpoint_retention_days: float = 30.0
    orchestration_usd_per_hour: float = 0.0
    engineer_hours: float = 0.0
    engineer_usd_per_hour: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def gpu_cap(self) -> int | None:
        """The most GPUs the job may use: `max_gpus`, else `gpus`, else no limit (None)."""
        return self.max_gpus or self.gpus

    def __hash__(self) -> int:
        return hash((self.name, self.arch, self.method, self.precision, self.framework,
                     self.optimizer, self.seq_len, self.micro_batch, self.grad_checkpointing,
                     self.sharding, self.lora_rank, self.lora_targets, self.tokens,
                     self.tensor_parallel, self.pipeline_parallel, self.context_parallel))


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
        inferred=inferred, source="inferred from params_b (sizing/workload.py rule)",
    )


_SCALAR_FIELDS = {f.name: f for f in fields(Workload)
                  if f.name not in ("arch", "extra", "vendors")}
_CHOICES = {
    "method": METHODS, "precision": PRECISIONS, "framework": FRAMEWORKS,
    "optimizer": OPTIMIZERS, "lora_targets": LORA_TARGETS, "sharding": SHARDINGS,
    "loss": LOSSES,
}
# Switch fields whose default is None but whose type is fixed (sizing/switches.py).
_SWITCH_BOOLS = ("activation_offload", "optimizer_in_backward", "paged_optimizer", "packing",
                 "tiled_mlp")
_POSITIVE = ("seq_len", "micro_batch", "grad_accum", "lora_rank", "tokens",
             "checkpoint_every_tokens", "gpus", "max_gpus",
             "tensor_parallel", "pipeline_parallel", "context_parallel",
             "loss_chunks", "mean_sample_tokens")
_KNOWN = set(_SCALAR_FIELDS) | set(ARCH_FIELDS) | {"model", "params_b", "head_dim", "mlp",
                                                   "tie_embeddings", "vendors"}


def _vendors(name: str, value: Any) -> tuple[str, ...]:
    """`vendors = ["nvidia"]`: a non-empty list of names in VENDORS (any case)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise WorkloadError(f"{name}: vendors = {value!r}; expected a list such as [\"nvidia\"]")
    out = tuple(dict.fromkeys(v.strip().lower() for v in value))
    unknown = [v for v in out if v not in VENDORS]
    if unknown:
        raise WorkloadError(f"{name}: vendors {unknown} unknown; expected some of {VENDORS}")
    return out


def _check_parallel(name: str, kw: dict[str, Any], arch: Architecture) -> None:
    """The divisibility rules of tensor / pipeline / context parallelism (Megatron-LM
    `arguments.py` asserts the same), and what fp8 cannot be combined with."""
    tp, pp, cp = (kw.get(k, 1) for k in ("tensor_parallel", "pipeline_parallel",
                                          "context_parallel"))
    mp = tp * pp * cp
    if mp > 1 and not kw.get("gpus"):
        raise WorkloadError(f"{name}: tensor_parallel x pipeline_parallel x context_parallel = "
                            f"{mp} needs `gpus` (a multiple of {mp})")
    if kw.get("gpus") and kw["gpus"] % mp:
        raise WorkloadError(f"{name}: gpus = {kw['gpus']} is not a multiple of tensor_parallel "
                            f"x pipeline_parallel x context_parallel = {tp} x {pp} x {cp} = {mp}")
    for field_, heads in (("num_attention_heads", arch.num_attention_heads),
                          ("num_kv_heads", arch.num_kv_heads)):
        if heads % tp:  # each TP rank computes whole heads (Megatron: heads / query groups % tp)
            raise WorkloadError(f"{name}: tensor_parallel = {tp} does not divide the model's "
                                f"{field_} ({heads})")
    if pp > arch.num_layers:
        raise WorkloadError(f"{name}: pipeline_parallel = {pp} exceeds the model's "
                            f"{arch.num_layers} layers")
    seq = kw.get("seq_len", 2048)
    if cp > 1 and seq % (2 * cp):  # causal load balancing splits the sequence in 2 x cp chunks
        raise WorkloadError(f"{name}: context_parallel = {cp} needs seq_len ({seq}) divisible "
                            f"by 2 x context_parallel = {2 * cp} (Megatron-Core context "
                            "parallelism splits the sequence into 2 x cp chunks)")
    if kw.get("precision") == "fp8" and kw.get("method") == "qlora":
        raise WorkloadError(f"{name}: precision = \"fp8\" with method = \"qlora\": QLoRA's "
                            "base weights are NF4, not fp8")


def workload_from_dict(d: dict[str, Any], known_gpus: set[str] | None = None) -> Workload:
    name = d.get("name")
    if not name or not isinstance(name, str):
        raise WorkloadError("workload without a `name`")
    unknown = set(d) - _KNOWN
    if unknown:
        raise WorkloadError(f"{name}: unknown field(s) {sorted(unknown)}")
    arch_given = {k: d[k] for k in ARCH_FIELDS if k in d}
    if "model" in d:
        arch = lookup_model(str(d["model"]))
        if arch is None:
            raise WorkloadError(f"{name}: model {d['model']!r} is not in sizing/models.csv;"
                                " give params_b (and architecture fields) instead")
        if arch_given:
            arch = replace(arch, **{k: int(v) for k, v in arch_given.items()})
    elif "params_b" in d:
        try:
            params_b = float(d["params_b"])
        except (TypeError, ValueError):
            raise WorkloadError(f"{name}: params_b {d['params_b']!r} is not a number") from None
        arch = infer_architecture(params_b, arch_given, name=f"{name} ({params_b:g}B)")
        if "head_dim" in d:
            arch = replace(arch, head_dim=int(d["head_dim"]))
        if "mlp" in d:
            arch = replace(arch, mlp=str(d["mlp"]))
        if "tie_embeddings" in d:
            arch = replace(arch, tie_embeddings=bool(d["tie_embeddings"]))
    else:
        raise WorkloadError(f"{name}: needs `model` (a name in sizing/models.csv) or `params_b`")
    kwargs: dict[str, Any] = {}
    for key, f in _SCALAR_FIELDS.items():
        if key not in d or key == "name":
            continue
        value = d[key]
        if key in _CHOICES and value not in _CHOICES[key]:
            raise WorkloadError(f"{name}: {key} = {value!r}; expected one of {_CHOICES[key]}")
        default = f.default
        try:
            if isinstance(default, bool) or key in _SWITCH_BOOLS:
                if not isinstance(value, bool):
                    raise TypeError
            elif isinstance(default, int) or key in ("gpus", "max_gpus", "loss_chunks"):
                value = int(value)
            elif isinstance(default, float) or key in ("checkpoint_write_minutes",
                                                       "dataset_gb", "egress_gb", "margin",
                                                       "mean_sample_tokens"):
                value = float(value)
        except (TypeError, ValueError):
            raise WorkloadError(f"{name}: {key} = {value!r} has the wrong type") from None
        kwargs[key] = value
    for key in _POSITIVE:
        if key in kwargs and kwargs[key] <= 0:
            raise WorkloadError(f"{name}: {key} must be positive, got {kwargs[key]}")
    if kwargs.get("max_gpus") and kwargs.get("gpus") and kwargs["max_gpus"] < kwargs["gpus"]:
        raise WorkloadError(f"{name}: max_gpus ({kwargs['max_gpus']}) is below gpus "
                            f"({kwargs['gpus']})")
    if not 0 <= kwargs.get("margin", 0.0) < 1:
        raise WorkloadError(f"{name}: margin must be in [0, 1)")
    if known_gpus is not None and kwargs.get("gpu") and kwargs["gpu"] not in known_gpus:
        raise WorkloadError(f"{name}: gpu {kwargs['gpu']!r} is not a canonical GPU model"
                            " (warehouse/gpus.csv)")
    if "vendors" in d:
        kwargs["vendors"] = _vendors(name, d["vendors"])
    _check_parallel(name, kwargs, arch)
    if kwargs.get("optimizer_in_backward") and kwargs.get("grad_accum", 1) > 1:
        # torchtune memory-optimisation tutorial: optimizer in backward is "not compatible
        # with gradient accumulation" (the step runs before the next micro-batch's gradients).
        raise WorkloadError(f"{name}: optimizer_in_backward cannot be combined with "
                            "grad_accum > 1")
    if kwargs.get("method") == "full_8bit" and "optimizer" not in kwargs:
        kwargs["optimizer"] = "adamw_8bit"
    return Workload(name=name, arch=arch, **kwargs)


def load_workloads(path: str | Path, known_gpus: set[str] | None = None) -> list[Workload]:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise WorkloadError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise WorkloadError(f"{path}: not valid TOML ({exc})") from None
    tables = data.get("workload")
    if not isinstance(tables, list) or not tables:
        raise WorkloadError(f"{path}: no [[workload]] tables")
    workloads = [workload_from_dict(t, known_gpus) for t in tables]
    names = [w.name for w in workloads]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise WorkloadError(f"{path}: duplicate workload names {sorted(dupes)}")
    return workloads
