"""Compatibility rules (sizing/compat.py, sizing/compat_rules.csv): whether the software a
workload needs runs on the offer's card, and what rank does with the answer."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuprices.flows.cli.rank_inputs import read_offers
from gpuprices.flows.cli.sizing import app
from gpuprices.sizing import compat
from gpuprices.sizing.rank import rank
from gpuprices.sizing.workload import VENDORS, WorkloadError, load_workloads, workload_from_dict
from gpuprices.warehouse.gpus import gpu_models

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "sizing" / "workloads.toml"
runner = CliRunner()


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
    from gpuprices.sizing.workload import FRAMEWORKS
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


def test_docs_document_every_rule_with_its_source():
    doc = (ROOT / "docs" / "sizing.md").read_text()
    for r in compat.rules():
        row = f"| `{r.requirement}` | {r.vendor} | {r.family} | {r.verdict} |"
        assert row in doc, row
        assert r.source.replace("|", "/") in doc, r.source


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


# --- rank ---

def _offer(gpu, price, provider="p", model="on_demand"):
    return dict(provider=provider, sku=gpu, region="r", gpu_model=gpu, gpu_count=1,
                price_per_hour=price, pricing_model=model, currency="USD")


def test_rank_lists_an_incompatible_offer_apart_with_its_reason():
    w = _workload()
    offers = [_offer("V100-32GB", 0.10), _offer("H100-SXM-80GB", 3.0),
              _offer("B200-180GB", 5.0)]
    rows = {r.gpu_model: r for r in rank([w], offers)["t"]}
    v100 = rows["V100-32GB"]
    assert v100.verdict == "incompatible" and v100.compat == "incompatible"
    assert "bf16 needs Ampere" in v100.reason and v100.choice is None
    assert rows["H100-SXM-80GB"].choice == "on_demand"
    b200 = rows["B200-180GB"]  # caveat: ranked, the caveat first among its reasons
    assert b200.verdict == "ok" and b200.compat == "caveat"
    assert b200.reasons[0].startswith("caveat: flash_attention_2")


def test_size_json_reports_the_cards_compatibility():
    res = runner.invoke(app, ["size", str(WORKLOADS), "--gpu", "V100-32GB", "--json"])
    assert res.exit_code == 0, res.output
    for r in json.loads(res.stdout):
        assert r["compatibility"]["verdict"] == "incompatible"
        assert r["compatibility"]["sources"]
    res = runner.invoke(app, ["size", str(WORKLOADS), "--gpu", "MI300X-192GB"])
    assert "compatibility on MI300X-192GB: caveat" in res.stdout


# --- on the real bundled snapshots (tests/conftest.py: w41_settings) ---

@pytest.fixture(scope="module")
def w41_offers(w41_settings):
    _, offers, _ = read_offers(w41_settings.data_dir / "warehouse.duckdb", None)
    return offers


def test_w41_qlora_70b_on_amd_is_flagged_and_vendors_nvidia_removes_it(w41_offers):
    (w,) = [x for x in load_workloads(WORKLOADS) if x.name == "qlora-llama3.1-70b"]
    amd = {g for g, spec in gpu_models().items() if spec.vendor == "AMD"}
    assert any(o["gpu_model"] in amd for o in w41_offers), "W41 sells no AMD card"
    rows = rank([w], w41_offers)[w.name]
    amd_ok = [r for r in rows if r.gpu_model in amd and r.verdict == "ok"]
    assert amd_ok, "no AMD row fits the 70B QLoRA on W41"
    for r in amd_ok:  # ranked, and the reasons say why a buyer should check first
        assert r.compat == "caveat" and "bitsandbytes" in r.reasons[0]
    nv = replace(w, vendors=("nvidia",))
    rows = rank([nv], w41_offers)[w.name]
    assert all(r.verdict == "incompatible" for r in rows if r.gpu_model in amd)
    assert not any(r.choice and r.gpu_model in amd for r in rows)
    assert any(r.choice == "on_demand" for r in rows)


def test_no_published_measurement_ran_on_a_card_the_rules_call_incompatible():
    """Every calibration row (tests/fixtures/sizing/measured_calibration.csv) ran: a rule that
    called its card incompatible for its workload would contradict a published run."""
    import sys
    sys.path.insert(0, str(ROOT / "bench"))
    import sizing_accuracy as bench
    checked = 0
    with bench.CSV.open(newline="") as fh:
        for r in csv.DictReader(fh):
            d, _ = bench.row_to_workload(r)
            if d is None or not d.get("gpu"):
                continue
            w = workload_from_dict(d)
            assert compat.check(w, gpu_models()[d["gpu"]]).runs, (r["source"], d["gpu"])
            checked += 1
    assert checked >= 40
