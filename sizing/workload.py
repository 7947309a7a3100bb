"""Workloads from TOML `[[workload]]` tables: parsing and validation (docs/sizing.md
"Workloads"). Every error names the workload and the field.

The dataclasses and the allowed values are sizing/workload_fields.py, the architecture table and
inference sizing/architecture.py; the names callers use are imported here as well, so
`from gpuprices.sizing.workload import Workload, load_workloads` keeps working.
"""

from __future__ import annotations

import math
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from gpuprices.sizing import constraint_fields
from gpuprices.sizing.architecture import infer_architecture, lookup_model
from gpuprices.sizing.toml_tables import read_tables
from gpuprices.sizing.workload_fields import (
    ARCH_FIELDS,
    FRAMEWORKS,
    LORA_TARGETS,
    LOSSES,
    METHODS,
    OPTIMIZERS,
    PRECISIONS,
    SHARDINGS,
    VENDORS,
    Architecture,
    Workload,
    WorkloadError,
)

__all__ = [
    "ARCH_FIELDS", "FRAMEWORKS", "LORA_TARGETS", "LOSSES", "METHODS", "OPTIMIZERS",
    "PRECISIONS", "SHARDINGS", "VENDORS", "Architecture", "Workload", "WorkloadError",
    "infer_architecture", "load_workloads", "lookup_model", "workload_from_dict",
]

_SCALAR_FIELDS = {f.name: f for f in fields(Workload)
                  if f.name not in ("arch", "extra", "vendors", "deadline_hours", "regions",
                                    "countries")}
_CHOICES = {
    "method": METHODS, "precision": PRECISIONS, "framework": FRAMEWORKS,
    "optimizer": OPTIMIZERS, "lora_targets": LORA_TARGETS, "sharding": SHARDINGS,
    "loss": LOSSES,
}
# Switch fields whose default is None but whose type is fixed (sizing/switches.py).
_SWITCH_BOOLS = ("activation_offload", "optimizer_in_backward", "paged_optimizer", "packing",
                 "tiled_mlp", "offload_params")
_POSITIVE = ("seq_len", "micro_batch", "grad_accum", "lora_rank", "tokens",
             "checkpoint_every_tokens", "gpus", "max_gpus",
             "tensor_parallel", "pipeline_parallel", "context_parallel",
             "loss_chunks", "mean_sample_tokens")
_KNOWN = set(_SCALAR_FIELDS) | set(ARCH_FIELDS) | {"model", "params_b", "head_dim", "mlp",
                                                   "tie_embeddings", "vendors",
                                                   *constraint_fields.CONSTRAINT_FIELDS}


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
        if not math.isfinite(params_b):
            raise WorkloadError(f"{name}: params_b = {params_b!r} is not a finite number")
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
        if isinstance(value, float) and not math.isfinite(value):
            # TOML has nan and inf; no size, count or share is either.
            raise WorkloadError(f"{name}: {key} = {value!r} is not a finite number")
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
    kwargs.update(constraint_fields.parse(name, d))
    _check_parallel(name, kwargs, arch)
    if kwargs.get("optimizer_in_backward") and kwargs.get("grad_accum", 1) > 1:
        # torchtune memory-optimisation tutorial: optimizer in backward is "not compatible
        # with gradient accumulation" (the step runs before the next micro-batch's gradients).
        raise WorkloadError(f"{name}: optimizer_in_backward cannot be combined with "
                            "grad_accum > 1")
    if kwargs.get("method") == "full_8bit" and "optimizer" not in kwargs:
        kwargs["optimizer"] = "adamw_8bit"
    if kwargs.get("framework") == "unsloth" and "lora_dropout" not in kwargs:
        # Unsloth's recipes set lora_dropout = 0 ("Supports any, but = 0 is optimized", the
        # get_peft_model call of its notebooks and docs): its fast LoRA kernels patch in only
        # then (sizing/unsloth_activations.py). Other frameworks keep the field's default.
        kwargs["lora_dropout"] = False
    return Workload(name=name, arch=arch, **kwargs)


def load_workloads(path: str | Path, known_gpus: set[str] | None = None) -> list[Workload]:
    path = Path(path)
    tables = read_tables(path, "workload", WorkloadError)
    workloads = [workload_from_dict(t, known_gpus) for t in tables]
    names = [w.name for w in workloads]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise WorkloadError(f"{path}: duplicate workload names {sorted(dupes)}")
    return workloads
