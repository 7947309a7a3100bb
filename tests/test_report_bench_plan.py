"""The report's appendix "Benchmark plan before committing", on the real bundled warehouse of
2026-10-11 (tests/conftest.py: w41_settings)."""

import datetime as dt
from pathlib import Path

import pytest

from reports import build, render
from sizing.workload import load_workloads
from warehouse import db

WORKLOADS = Path(__file__).resolve().parents[1] / "sizing/workloads.toml"


@pytest.fixture(scope="module")
def w41(w41_settings):
    c = db.connect(w41_settings.db_path, read_only=True)
    try:
        return build.build_report(c, "2026-W41", "EUR", load_workloads(WORKLOADS),
                                  now=dt.datetime(2026, 10, 12, 6, tzinfo=dt.UTC))
    finally:
        c.close()


def test_appendix_plans_every_recommended_offer(w41):
    plan = w41.bench_plan
    assert plan is not None and plan in w41.tables()
    chosen = {(r["workload"], r["choice_label"], f"{r['provider']} {r['sku']} {r['region'] or ''}"
               .strip()) for r in w41.headline.rows if r.get("choice")}
    planned = {(r["workload"], r["choice_label"], r["offer"]) for r in plan.rows}
    assert planned == chosen and len(chosen) == 3 * len(load_workloads(WORKLOADS))
    totals = [r for r in plan.rows if r["step"] == "plan, back to back"]
    assert len(totals) == len(chosen)
    for r in plan.rows:
        assert r["hours"] > 0 and r["cost"] > 0 and r["currency"] == "EUR"
    # a committed choice says its term is bought whole, after the plan
    committed = [r for r in totals if r["choice_label"].startswith("committed")]
    assert committed
    for r in committed:
        assert "term is bought whole" in r["reason"] or "minimum 24 h" in r["reason"], r


def test_appendix_is_in_markdown_and_html(w41):
    md = render.render_markdown(w41)
    appendix = md.split("## Appendix: Benchmark plan before committing", 1)[1]
    assert "simulated preemption and recovery" in appendix and "micro-batch sweep" in appendix
    html = render.render_html(w41)
    assert 'id="bench-plan"' in html and 'id="benchmark_plan"' in html
