"""The buyers' rule-of-thumb fit table against the estimator, cell by cell.

    .venv/bin/python bench/rule_of_thumb.py [--markdown] [--table PATH]
                                            [--precision-full bf16-true|bf16-mixed]

The table (tests/fixtures/sizing/rule_of_thumb_fit_table.csv, copied unchanged from the
planning article this project started from; origin in tests/fixtures/SOURCES.md) says, per
card, the largest model (billions of parameters) that QLoRA, LoRA r=16 and full fine-tuning
fit on one card; an empty cell means "nothing of the sizes it names". It is a rough table, not
ground truth: this script states where the estimator (gpuprices.sizing.memory.estimate_memory with
the fits / tight / no verdicts of sizing/fit.py) agrees and where not; docs/sizing.md explains each
disagreement.

Assumptions (the table states only "full FT assumes an 8-bit optimizer; typical sequence
lengths"; everything else is the shipped workloads' typical single-GPU setting,
sizing/workloads.toml, and the issue's 32B LoRA example):
* one card, no sharding, the card's memory from warehouse/gpus.csv (the table's `memory_gb` is
  printed beside it: it says 192 GB for the B200, gpus.csv 180 GB);
* framework hf (transformers + PEFT), as every shipped LoRA/QLoRA workload;
* seq_len 2048, micro-batch 1, activation checkpointing on (the shipped 70B QLoRA workload and
  the issue's 32B LoRA example; "typical sequence lengths" gives no number);
* QLoRA: NF4 with double quantization, bf16 compute, LoRA r=16 on all linear layers, paged 8-bit
  AdamW (the shipped QLoRA workloads);
* LoRA: bf16 base (bf16-true), r=16 (the column's name) on all linear layers, AdamW;
* full: the table's 8-bit optimizer (method full_8bit, bitsandbytes 8-bit AdamW) with bf16
  weights and gradients (bf16-true, as every shipped single-GPU workload; with fp32 master
  weights an 8B model's weights, gradients and states alone are 80 GB: `--precision-full`
  shows that case).

Models: a size the table names stands for every models.csv row sold under that size (its name
says "8B", "32B", "70B": Llama 3.1 8B; Qwen2.5 32B; Llama 2 70B and Llama 3.1 70B); a size no
row is named after would be an architecture inferred from the size by
gpuprices.sizing.architecture.infer_architecture. Above the table's largest size the ladder goes on
with the next size a models.csv name states at least the table's smallest step (70/32 = 2.2x) above
it (405B; Qwen2.5 72B is the 70B class), so a "70B" cell's "nothing larger" is checked too.
A cell claims: every model of its size is accepted and no model of the next size up is. It
agrees when the estimator says the same; `tight` counts as accepted, because the cells are
"largest that fits" claims, the configurations the issue wants `fits` or `tight`. A
disagreement is "table more generous" (the estimator says `no` to a model of the table's size)
or "table more cautious" (it accepts a model of the next size up). The estimator's largest model
in all of models.csv is printed beside it: the table's sizes are a coarse ladder.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuprices.sizing.architecture import infer_architecture, model_table  # noqa: E402
from gpuprices.sizing.memory import estimate_memory  # noqa: E402
from gpuprices.sizing.workload_fields import Architecture, Workload  # noqa: E402
from gpuprices.warehouse.gpus import canonical_gpu, gpu_models  # noqa: E402

TABLE = ROOT / "tests/fixtures/sizing/rule_of_thumb_fit_table.csv"
# table column -> the estimator's method
METHOD_COLUMNS = {"qlora": "qlora_max_b", "lora": "lora16_max_b", "full_8bit": "full_max_b"}
# a size stated in a model name, e.g. "Llama 3.1 70B" -> 70 (not "8x7B" nor "2.5")
SIZE_IN_NAME = r"(?<![\w.x])({size})B\b"
# The assumptions of the module docstring, as workload fields.
COMMON = dict(framework="hf", seq_len=2048, micro_batch=1, grad_checkpointing=True, gpus=1,
              sharding="none", lora_rank=16, lora_targets="all")
PER_METHOD = {
    "qlora": dict(precision="bf16-true", optimizer="paged_adamw_8bit", double_quant=True),
    "lora": dict(precision="bf16-true", optimizer="adamw"),
    "full_8bit": dict(precision="bf16-true", optimizer="adamw_8bit"),
}


class Check(NamedTuple):
    """The estimator's answer for one model on the cell's card and method."""
    model: str
    estimate_gb: float
    verdict: str  # fits | tight | no


@dataclass(frozen=True)
class Cell:
    """One cell of the table beside the estimator's answer for the same card and method."""
    card: str  # the table's wording
    gpu: str  # canonical model (warehouse/gpus.csv)
    table_gb: float
    capacity_gb: float
    method: str
    rule_b: float | None  # the table's largest size; None: an empty cell
    rule_checks: tuple[Check, ...]  # the models of the table's size
    next_b: float | None  # the next of the table's sizes up (None above its largest)
    next_checks: tuple[Check, ...]  # the models of that size
    list_fits: str | None  # the largest models.csv model that `fits`
    list_accepted: str | None  # the largest models.csv model that `fits` or is `tight`

    @property
    def generous(self) -> bool:
        """The table's size is `no` for some model of that size."""
        return any(c.verdict == "no" for c in self.rule_checks)

    @property
    def cautious(self) -> bool:
        """Some model of the next size up is accepted (`fits` or `tight`)."""
        return any(c.verdict != "no" for c in self.next_checks)

    @property
    def agree(self) -> bool:
        return not (self.generous or self.cautious)

    @property
    def judgement(self) -> str:
        if self.agree:
            tight = any(c.verdict == "tight" for c in self.rule_checks)
            return "agree (tight)" if tight else "agree"
        sides = [s for s, on in (("table more generous", self.generous),
                                 ("table more cautious", self.cautious)) if on]
        return "disagree: " + " and ".join(sides)


def read_table(path: Path = TABLE) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def table_sizes(rows: list[dict[str, str]]) -> list[float]:
    """The model sizes the table names, smallest first, then the next size a models.csv name
    states at least the table's smallest step above its largest (70/32 = 2.2x: Qwen2.5 72B is
    the 70B class, Llama 3.1 405B the next rung; module docstring)."""
    sizes = sorted({float(r[c]) for r in rows for c in METHOD_COLUMNS.values() if r[c]})
    step = min((b / a for a, b in pairwise(sizes)), default=2.0)
    named = re.compile(SIZE_IN_NAME.format(size=r"\d+(?:\.\d+)?"))
    above = [float(m.group(1)) for a in model_table().values()
             for m in named.finditer(a.name) if float(m.group(1)) >= sizes[-1] * step]
    return sizes + ([min(above)] if above else [])


def models_of_size(size_b: float) -> list[Architecture]:
    """The models.csv rows sold under that size (their name says e.g. "70B": a buyer reading
    "70B" in the table means such a model), else one architecture inferred from the size."""
    said = re.compile(SIZE_IN_NAME.format(size=re.escape(f"{size_b:g}")))
    named = [a for a in model_table().values() if said.search(a.name)]
    return named or [infer_architecture(size_b, name=f"{size_b:g}B (inferred)")]


def workload(arch: Architecture, method: str, precision: str | None = None) -> Workload:
    fields = {**COMMON, **PER_METHOD[method]}
    if precision:
        fields["precision"] = precision
    return Workload(name=f"{arch.name} {method}", arch=arch, method=method, **fields)


def check(arch: Architecture, method: str, gpu: str, capacity_gb: float,
          precision: str | None = None) -> Check:
    est = estimate_memory(workload(arch, method, precision), gpu=gpu, gpus=1,
                          capacity_gb=capacity_gb)
    return Check(arch.name, est.per_gpu_gb, est.verdict or "no")


def _largest(checks: list[tuple[Architecture, Check]], accepted: tuple[str, ...]) -> str | None:
    ok = [a for a, c in checks if c.verdict in accepted]
    return max(ok, key=lambda a: a.params_b).name if ok else None


def compare_cell(row: dict[str, str], method: str, ladder: list[float],
                 precision: str | None = None) -> Cell:
    """The estimator on the table's card and method: its verdict for the models of the table's
    size and of the next size up, and its own largest model in models.csv."""
    table_gb = float(row["memory_gb"])
    gpu = canonical_gpu(row["gpu"], table_gb)
    if gpu is None:
        raise ValueError(f"card {row['gpu']!r} ({table_gb:g} GB) is not in warehouse/gpus.csv")
    capacity = gpu_models()[gpu].memory_gb
    cell = row[METHOD_COLUMNS[method]]
    rule_b = float(cell) if cell else None
    ups = [s for s in ladder if rule_b is None or s > rule_b]
    next_b = ups[0] if ups else None

    def checks(size: float | None) -> tuple[Check, ...]:
        if size is None:
            return ()
        return tuple(check(a, method, gpu, capacity, precision) for a in models_of_size(size))

    every = [(a, check(a, method, gpu, capacity, precision)) for a in model_table().values()]
    return Cell(card=row["gpu"], gpu=gpu, table_gb=table_gb, capacity_gb=capacity,
                method=method, rule_b=rule_b, rule_checks=checks(rule_b), next_b=next_b,
                next_checks=checks(next_b), list_fits=_largest(every, ("fits",)),
                list_accepted=_largest(every, ("fits", "tight")))


def compare(path: Path = TABLE, precision_full: str | None = None) -> list[Cell]:
    """Every cell of the table (card x method), in the table's order."""
    rows = read_table(path)
    ladder = table_sizes(rows)
    return [compare_cell(r, m, ladder, precision_full if m == "full_8bit" else None)
            for r in rows for m in METHOD_COLUMNS]


def _size(b: float | None) -> str:
    return f"{b:g}B" if b is not None else "none"


def _checks(checks: tuple[Check, ...]) -> str:
    return "; ".join(f"{c.model} {c.estimate_gb:.1f} GB {c.verdict}" for c in checks) or "-"


HEADER = ("card", "GB (table / gpus.csv)", "method", "table's largest",
          "estimator on it", "next size up",
          "estimator's largest in models.csv: fits / fits or tight",
          "table vs estimator")


def cell_fields(c: Cell) -> tuple[str, ...]:
    return (c.card, f"{c.table_gb:g} / {c.capacity_gb:g}", c.method, _size(c.rule_b),
            _checks(c.rule_checks), _checks(c.next_checks),
            f"{c.list_fits or 'none'} / {c.list_accepted or 'none'}", c.judgement)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", type=Path, default=TABLE)
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--precision-full", choices=("bf16-true", "bf16-mixed"), default=None,
                    help="precision of the full fine-tuning column (default bf16-true)")
    args = ap.parse_args()
    cells = compare(args.table, args.precision_full)
    rows = [cell_fields(c) for c in cells]
    if args.markdown:
        print("| " + " | ".join(HEADER) + " |")
        print("|" + "---|" * len(HEADER))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(str(x[i])) for x in [HEADER, *rows]) for i in range(len(HEADER))]
        for r in [HEADER, *rows]:
            print("  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)).rstrip())
    agree = sum(c.agree for c in cells)
    tight = sum(c.judgement == "agree (tight)" for c in cells)
    print(f"\n{agree} of {len(cells)} cells agree ({tight} of them tight); assumptions: "
          "bench/rule_of_thumb.py docstring")


if __name__ == "__main__":
    main()
