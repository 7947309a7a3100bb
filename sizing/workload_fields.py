"""What a workload is: the `Workload` and `Architecture` dataclasses, the values each workload
field may take, and `WorkloadError` (docs/sizing.md "Workloads").

Reading them from TOML and validating them is sizing/workload.py; the architecture table
(sizing/models.csv) and the inference of missing architecture fields is sizing/architecture.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

METHODS = ("qlora", "lora", "full", "full_8bit")
# fp8: Transformer Engine-style fp8 matmuls, higher-precision master weights (sizing/parallel.py);
# needs a card with fp8 tensor cores (sizing/compat.py's fp8 rule).
PRECISIONS = ("bf16-true", "bf16-mixed", "fp16-mixed", "fp32", "fp8")
FRAMEWORKS = ("hf", "torchtune", "litgpt", "unsloth", "liger")
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
    # The buyer's constraints (sizing/constraint_fields.py, docs/sizing.md "Constraints"): the
    # hours by which the run must be done (deadline_days x 24 in TOML), and where it may run:
    # areas such as "eu" or provider regions, and ISO countries. None: no constraint.
    deadline_hours: float | None = None
    regions: tuple[str, ...] | None = None
    countries: tuple[str, ...] | None = None
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
    # ZeRO-3 offload_param + offload_optimizer (DeepSpeed ZeRO-Infinity / ZeRO-Offload): weights,
    # gradients and optimizer states live in host RAM; the GPU holds the gathered layer(s)
    offload_params: bool | None = None
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
