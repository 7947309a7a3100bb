"""A class per provider (own / marketplace / reseller) from the registry's declarations into the
warehouse (`providers`, read through `provider_classes`), beside the provider in the views a buyer
reads and in the report."""

import duckdb
import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import provider_classes
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.reports.workloads import MARKETPLACE_NOTE, choices_table
from gpuprices.spiders import registry
from gpuprices.warehouse import db


def test_every_load_stores_the_declared_classes(tmp_path, runpod_archive):
    settings = Settings(data_dir=tmp_path / "data", archive_root=runpod_archive).ensure()
    loading.load(settings, pipeline.replay(settings, "runpod", "all"), "r1")
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        classes = dict(con.execute("SELECT provider, supply FROM provider_classes").fetchall())
        assert classes == {p.id: p.supply for p in registry.declarations().values()}
        assert classes["runpod"] == "reseller" and classes["aws"] == "own"
        assert con.execute("SELECT DISTINCT supply FROM latest_offers").fetchall() == [
            ("reseller",)]
        rows = con.execute("SELECT provider, supply FROM cheapest_now").fetchall()
        assert rows and set(rows) == {("runpod", "reseller")}
    finally:
        con.close()


def test_a_reload_replaces_the_table_and_refuses_a_provider_twice():
    con = db.connect(":memory:")
    db.init_schema(con)
    assert provider_classes.store(con) == len(registry.ids())
    assert provider_classes.store(con) == len(registry.ids())  # replaced, not appended
    assert con.execute("SELECT count(*) FROM provider_classes").fetchone()[0] == len(
        registry.ids())
    with pytest.raises(ValueError, match="given twice"):
        db.load_providers(con, [dict(provider="aws", supply="own")] * 2)
    assert con.execute("SELECT count(*) FROM providers").fetchone()[0] == len(registry.ids())


def test_the_headline_says_when_the_best_offer_is_a_marketplace_listing():
    """Rendering only (synthetic rows): a marketplace's cheapest is one host's listing."""
    base = dict(cost_to_finish=10.0, reason="fits")
    sections = [dict(name="w", choices={
        "on_demand": dict(base, offer="vast H100 SXM", supply="marketplace"),
        "spot": dict(base, offer="runpod H100", supply="reseller")})]
    rows = {r["choice_label"]: r for r in choices_table(sections).rows}
    assert rows["on-demand (firm)"]["reason"] == f"{MARKETPLACE_NOTE}; fits"
    assert rows["spot / preemptible"]["reason"] == "fits"
    assert "seller" in [c.label for c in choices_table(sections).columns]
