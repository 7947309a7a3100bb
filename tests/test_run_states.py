"""Every configured provider in every run: the status table and the run summary list each
provider of spiders/registry.py as ok, degraded, failed, stale or not run, never by omission."""

import datetime as dt

from rich.console import Console

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.ops.status import status_table
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.results import DayResult, not_run
from gpuprices.reports import sections
from gpuprices.spiders import registry
from gpuprices.warehouse import db
from gpuprices.warehouse.states import STATES, provider_state


def test_provider_state():
    assert provider_state(["ok", "ok"], 0, 14) == "ok"
    assert provider_state(["ok", "degraded"], 3, 14) == "degraded"
    assert provider_state(["ok", "failed"], 30, 14) == "failed"  # failed outranks stale
    assert provider_state(["ok"], 15, 14) == "stale"
    assert provider_state([], 2, 14) == "not run"
    assert provider_state([], 20, 14) == "stale"
    assert provider_state([], None, 14) == "not run"  # never loaded
    assert provider_state(["ok"], 400, None) == "ok"  # no age limit known
    # A run that set out to read it and never finished: shown, unless a day failed.
    assert provider_state(["ok"], 0, 14, interrupted=True) == "interrupted"
    assert provider_state(["ok"], 30, 14, interrupted=True) == "interrupted"
    assert provider_state(["failed"], 0, 14, interrupted=True) == "failed"
    assert set(STATES) == {"ok", "degraded", "failed", "interrupted", "stale", "not run"}


def test_not_run_lists_the_others_in_registry_order():
    day = dt.date(2026, 10, 4)
    results = [DayResult("runpod", day)]
    others = not_run(results, registry.ids(), {"lambda": dt.date(2026, 1, 9),
                                               "crusoe": dt.date(2026, 10, 4)}, day, 14)
    assert [o.provider for o in others] == [p for p in registry.ids() if p != "runpod"]
    by = {o.provider: o for o in others}
    assert (by["lambda"].state, by["lambda"].age_days) == ("stale", 268)
    assert by["lambda"].describe() == "not run, stale (268 d)"
    assert (by["crusoe"].state, by["crusoe"].describe()) == ("not run", "not run")
    assert by["aws"].last_good is None and by["aws"].state == "not run"


def _table_text(table) -> str:
    console = Console(record=True, width=250)
    console.print(table)
    return console.export_text()


def test_a_run_of_one_provider_lists_every_provider(tmp_path, manifest_archive):
    """Real captures: a replay of Lambda, then of Runpod alone. The Runpod run's summary and
    status table list every configured provider; Lambda, read before but not in this run, is
    stale (its latest, 2026-08-22, is 38 days old on Runpod's 2026-09-29)."""
    settings = Settings(data_dir=tmp_path / "data",
                        archive_root=manifest_archive("lambda", "runpod")).ensure()
    loading.load(settings, pipeline.replay(settings, "lambda", "all"), "r1")
    results = pipeline.replay(settings, "runpod", "all")
    text = loading.load(settings, results, "r2").read_text()
    rows = {line.split("|")[1].strip(): line for line in text.splitlines()
            if line.startswith("| ") and "|---" not in line}
    assert set(registry.ids()) <= set(rows)
    assert "| lambda | - | not run, stale (38 d) | 0 | 0 | 0 | not in this run; serving " \
           "2026-08-22, 38 days old |" in text
    assert "| aws | - | not run | 0 | 0 | 0 | not in this run; no snapshot loaded |" in text
    others = not_run(results, registry.ids(), {"lambda": dt.date(2026, 1, 9)},
                     dt.date(2026, 9, 29), 14)
    table = _table_text(status_table(results, 14, others))
    for p in registry.ids():
        assert f"│ {p} " in table, p
    assert "not run, stale (263 d)" in table


def test_the_reports_data_health_names_every_provider_with_the_same_words():
    """The week's runs give the state: a degraded night (an unknown layout held for review) is
    degraded, a failed one failed, a provider without runs or data not run."""
    con = db.connect(":memory:")
    db.init_schema(con)
    at = dt.datetime(2026, 10, 1, 2, tzinfo=dt.UTC)
    db.record_run(con, run_id="r1", provider="lambda", status="degraded", started_at=at,
                  snapshot_date=dt.date(2026, 10, 1), message="unknown layout: 14 rows held")
    db.record_run(con, run_id="r1", provider="aws", status="failed", started_at=at,
                  error="aws: HTTP 503")
    health = sections.health(con, dt.date(2026, 9, 28), dt.date(2026, 10, 4), 14)
    states = {r["provider"]: r["state"] for r in health.rows}
    assert set(registry.ids()) <= set(states)
    assert (states["lambda"], states["aws"], states["runpod"]) == ("degraded", "failed",
                                                                   "not run")
    assert set(states[p] for p in registry.ids()) <= set(STATES)
