"""Whether the software a workload needs runs on a GPU: compatible, caveat or incompatible.

A workload needs a few pieces of software, each of which runs on some GPU architectures only
(`requirements`): its precision (bf16, fp16, fp8), the FlashAttention-2 kernels the memory model
assumes, bitsandbytes' 4-bit weights (QLoRA) and 8-bit optimizers, and its training framework.
`sizing/compat_rules.csv` holds one rule per (requirement, vendor, family) with its verdict, the
reason a buyer reads and the public statement it comes from (`source`); the families are those
of warehouse/gpus.csv. For one card the most specific rule of each requirement applies (the
family's own row, else the vendor's `*` row, else the `* , *` row); a requirement with no rule
for the card is a caveat ("no documented support"), never silently compatible.

The card's verdict is the worst of its requirements': `incompatible` (it is not ranked: rank
lists it with the reason), `caveat` (works, but the support is partial or recent: it is ranked
and the reason says so), else `compatible`. A workload's `vendors` list, when set, makes every
other vendor's card incompatible.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gpuprices.sizing.workload import Workload
from gpuprices.warehouse.gpus import GpuModel

RULES_CSV = Path(__file__).parent / "compat_rules.csv"
VERDICTS = ("compatible", "caveat", "incompatible")  # best to worst
_RANK = {v: i for i, v in enumerate(VERDICTS)}

# Which requirement each workload setting brings (the rules say where each runs).
PRECISION_NEEDS = {
    "bf16-true": ("bf16",), "bf16-mixed": ("bf16",), "fp16-mixed": ("fp16",), "fp32": (),
    # fp8 training (Transformer Engine, torchao float8) runs the matmuls in fp8 and the rest of
    # the step in bf16, so it needs both.
    "fp8": ("bf16", "fp8"),
}
BNB_OPTIMIZERS = ("adamw_8bit", "paged_adamw_8bit")  # bitsandbytes.optim (sizing/memory.py)
# torchtune's QLoRA keeps its NF4 weights in torchao's NF4Tensor (plain PyTorch ops), not in
# bitsandbytes (torchtune QLoRA tutorial, torchtune/modules/peft/lora.py `to_nf4`); the other
# profiles quantize with bitsandbytes (PEFT/transformers BitsAndBytesConfig, Unsloth's 4-bit
# models, LitGPT's `bnb.nf4` through Lightning's BitsandbytesPrecision).
BNB_4BIT_FRAMEWORKS = ("hf", "unsloth", "litgpt")
# `flash_attention = true` under transformers means attn_implementation="flash_attention_2",
# which loads the flash-attn package (transformers docs, "Attention backends"). torchtune and
# LitGPT call PyTorch's scaled_dot_product_attention and Unsloth its own kernels, all of which
# fall back to a memory-efficient kernel where FlashAttention-2 does not run (Unsloth README:
# compute capability 7.0+), so the rule binds the hf profile only.
FLASH_ATTN_FRAMEWORKS = ("hf",)


@dataclass(frozen=True)
class Rule:
    requirement: str
    vendor: str
    family: str
    verdict: str
    reason: str
    source: str

    def specificity(self, vendor: str, family: str) -> int:
        """2: this family's own rule, 1: the vendor's, 0: everyone's; -1: does not apply."""
        if self.vendor not in ("*", vendor):
            return -1
        if self.family == family:
            return 2
        if self.family == "*":
            return 1 if self.vendor == vendor else 0
        return -1


@dataclass(frozen=True)
class Compat:
    """One workload on one card: the verdict, the reasons behind a caveat or an
    incompatibility (one sentence each) and the sources of every rule applied."""
    verdict: str
    reasons: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    @property
    def runs(self) -> bool:
        return self.verdict != "incompatible"

    def summary(self) -> str:
        return f"{self.verdict}: {'; '.join(self.reasons)}" if self.reasons else self.verdict

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "reasons": list(self.reasons),
                "sources": list(self.sources)}


@cache
def rules() -> tuple[Rule, ...]:
    with RULES_CSV.open(newline="") as fh:
        out = tuple(Rule(**{k: (v or "").strip() for k, v in row.items()})
                    for row in csv.DictReader(fh))
    bad = [r for r in out if r.verdict not in VERDICTS or not r.source]
    if bad:
        raise ValueError(f"{RULES_CSV}: rules without a known verdict or a source: {bad}")
    return out


def requirements(w: Workload) -> tuple[str, ...]:
    """What the workload needs from the card, in the rules' vocabulary."""
    needs = list(PRECISION_NEEDS.get(w.precision, ()))
    if w.flash_attention and w.framework in FLASH_ATTN_FRAMEWORKS:
        needs.append("flash_attention_2")
    if w.method == "qlora" and w.framework in BNB_4BIT_FRAMEWORKS:
        needs.append("bnb_4bit")
    if w.optimizer in BNB_OPTIMIZERS:
        needs.append("bnb_8bit_optim")
    needs.append(f"framework:{w.framework}")
    return tuple(needs)


def rule_for(requirement: str, vendor: str, family: str) -> Rule | None:
    """The most specific rule of `requirement` for a card of `vendor` and `family`."""
    best, best_s = None, -1
    for r in rules():
        if r.requirement != requirement:
            continue
        s = r.specificity(vendor, family)
        if s > best_s:
            best, best_s = r, s
    return best


def check(w: Workload, gpu: GpuModel) -> Compat:
    """The workload on this card (see the module docstring)."""
    return _check(requirements(w), w.vendors, gpu.gpu_model, gpu.vendor, gpu.family)


@cache
def _check(needs: tuple[str, ...], vendors: tuple[str, ...] | None, gpu_model: str,
           vendor: str, family: str) -> Compat:
    if vendors is not None and vendor.lower() not in vendors:
        return Compat("incompatible", (f"the workload allows {', '.join(vendors)} GPUs only "
                                       f"(vendors); {gpu_model} is {vendor}",),
                      ("workload field `vendors`",))
    verdict, reasons, sources = "compatible", [], []
    for need in needs:
        rule = rule_for(need, vendor, family)
        if rule is None:
            v, why = "caveat", (f"{need}: no documented support on {vendor} {family} "
                                "(no rule in sizing/compat_rules.csv)")
        else:
            v, why = rule.verdict, f"{need} on {family}: {rule.reason}"
            sources.append(rule.source)
        if v != "compatible":
            reasons.append((-_RANK[v], why))
        if _RANK[v] > _RANK[verdict]:
            verdict = v
    # The incompatibilities first; a caveat beside one is still listed (a buyer who fixes the
    # one wants to know about the other).
    return Compat(verdict, tuple(why for _, why in sorted(reasons, key=lambda x: x[0])),
                  tuple(sources))
