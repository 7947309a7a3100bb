"""Inference hosts (DeepInfra, fal): declared as such, and the report's seller column says so
beside their class, so a buyer never reads their GPU hours as a training VM."""

from gpuprices.flows.pipeline import provider_classes
from gpuprices.reports.tables import provider_supply
from gpuprices.spiders import registry
from gpuprices.warehouse import db


def test_declared_inference_hosts_with_a_note():
    hosts = {p.id for p in registry.declarations().values() if p.kind == "inference_host"}
    assert {"deepinfra", "fal"} <= hosts
    for pid in hosts:
        note = registry.declaration(pid).note
        assert note and "no root VM" in note and "never" in note
    assert registry.declaration("tensorpool").kind == "gpu_cloud"


def test_report_seller_names_the_inference_host():
    con = db.connect(":memory:")
    db.init_schema(con)
    provider_classes.store(con)
    supply = provider_supply(con)
    assert supply["deepinfra"] == supply["fal"] == "own, inference host"
    assert supply["civo"] == "own" and supply["e2e"] == "own"
