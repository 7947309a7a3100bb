"""Compatibility rules (sizing/compat.py, sizing/compat_rules.csv): whether the software a
workload needs runs on the offer's card, and what rank does with the answer."""

from __future__ import annotations

import csv
from dataclasses import replace

import pytest

from sizing import compat
from sizing.workload import VENDORS, WorkloadError, workload_from_dict
from warehouse.gpus import gpu_models


def _workload(**kw):
    base = dict(name="t", model="Llama 3.1 8B", method="lora", precision="bf16-true",
                framework="hf", seq_len=2048, grad_checkpointing=True, gpus=1, tokens=1e7,
                checkpoint_every_tokens=1e6)
    base.update(kw)
    return workload_from_dict(base)


def _every_requirement() -> set[str]:
    """Every requirement some workload setting can bring."""
    needs = set()
    for p in compat.PRECISION_NEEDS.values():
        needs |= set(p)
    needs |= {"flash_attention_2", "bnb_4bit", "bnb_8bit_optim"}
    from sizing.workload import FRAMEWORKS
    return needs | {f"framework:{f}" for f in FRAMEWORKS}


# --- the rules table ---

def test_every_rule_has_a_verdict_a_reason_and_a_public_source():
    with compat.RULES_CSV.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for r in rows:
        assert r["verdict"] in compat.VERDICTS, r
        assert r["reason"].strip() and len(r["source"].strip()) > 20, r
        assert r["requirement"] in _every_requirement(), r  # no rule for nothing
    keys = [(r["requirement"], r["vendor"], r["family"]) for r in rows]
    assert len(keys) == len(set(keys)), "two rules for one requirement and card"


def test_every_requirement_has_a_rule_for_every_card_family():
    families = {(g.vendor, g.family) for g in gpu_models().values()}
    for need in _every_requirement():
        for vendor, family in families:
            assert compat.rule_for(need, vendor, family) is not None, (need, vendor, family)


def test_vendors_are_those_of_gpus_csv():
    assert set(VENDORS) == {g.vendor.lower() for g in gpu_models().values()}


# --- verdicts ---

def test_bf16_is_incompatible_on_volta_and_turing_and_fp16_is_not():
    g = gpu_models()
    bf16 = _workload()
    for card in ("V100-32GB", "V100-16GB", "T4-16GB"):
        c = compat.check(bf16, g[card])
        assert c.verdict == "incompatible" and any("bf16 needs Ampere" in x for x in c.reasons)
    fp16 = _workload(precision="fp16-mixed", flash_attention=False)
    assert compat.check(fp16, g["V100-32GB"]).verdict == "compatible"
    assert compat.check(bf16, g["A100-SXM-80GB"]).verdict == "compatible"


def test_flash_attention_2_binds_the_hf_profile_on_turing():
    t4 = gpu_models()["T4-16GB"]
    fa = compat.check(_workload(precision="fp16-mixed"), t4)
    assert fa.verdict == "incompatible" and "FlashAttention-2" in fa.summary()
    # torchtune calls PyTorch's SDPA, which falls back where FlashAttention-2 does not run
    assert compat.check(_workload(precision="fp16-mixed", framework="torchtune"),
                        t4).verdict == "compatible"


def test_fp8_needs_ada_hopper_blackwell_or_cdna3():
    fp8_cards = {"H100-SXM-80GB", "L40S-48GB", "B200-180GB", "MI300X-192GB"}
    for name, g in gpu_models().items():
        need = compat.rule_for("fp8", g.vendor, g.family)
        if name in fp8_cards:
            assert need.verdict == "compatible", name
        if g.family in ("Ampere", "Volta", "Turing"):
            assert need.verdict == "incompatible", name


def test_qlora_on_amd_is_a_caveat_naming_bitsandbytes():
    w = _workload(method="qlora", optimizer="paged_adamw_8bit")
    c = compat.check(w, gpu_models()["MI300X-192GB"])
    assert c.verdict == "caveat" and c.runs
    assert any("bitsandbytes" in x for x in c.reasons)
    assert compat.check(w, gpu_models()["H100-SXM-80GB"]).verdict == "compatible"
    # torchtune's QLoRA uses torchao's NF4, not bitsandbytes
    tt = compat.check(replace(w, framework="torchtune", optimizer="adamw"),
                      gpu_models()["MI300X-192GB"])
    assert tt.verdict == "compatible"


# --- the vendors field ---

def test_vendors_field_parses_and_restricts():
    w = _workload(vendors=["NVIDIA"])
    assert w.vendors == ("nvidia",)
    c = compat.check(w, gpu_models()["MI300X-192GB"])
    assert c.verdict == "incompatible" and "vendors" in c.summary()
    assert compat.check(w, gpu_models()["H100-SXM-80GB"]).verdict == "compatible"
    assert _workload().vendors is None
    for bad in ("nvidia", [], ["intel"], [1]):
        with pytest.raises(WorkloadError, match="vendors"):
            _workload(vendors=bad)
