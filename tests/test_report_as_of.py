"""The week 2026-W41 report on a warehouse replayed from the bundled snapshots (snapshots/, as
`make run` does; AWS's 488 daily files left out for speed): firm prices within the age limit
only in its figures, every price dated, stale and not-firm offers listed apart, and no chart
line drawn across a gap or a change of the providers behind it."""

import datetime as dt
import re

import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.report_job import refresh_fx
from gpuprices.reports import build, charts, render
from gpuprices.warehouse import db
from tests.conftest import ROOT

PROVIDERS = ("runpod", "nebius", "crusoe", "lambda", "coreweave", "gcp", "azure")
WEEK = "2026-W41"
END = dt.date(2026, 10, 11)
LIMIT = 14
# The module-scoped warehouse below is built once per run: `make test` (--dist loadgroup) runs
# the whole module on one xdist worker, not a share on each.
pytestmark = pytest.mark.xdist_group("report-as-of")


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    s = Settings(tmp_path_factory.mktemp("w41") / "data", ROOT / "snapshots").ensure()
    results = [r for p in PROVIDERS for r in pipeline.reparse(s, p)]
    assert {r.provider for r in results} == set(PROVIDERS)
    loading.load(s, results, "20261011T020000-testrun")
    refresh_fx(s)
    return s


@pytest.fixture(scope="module")
def rep(settings):
    c = db.connect(settings.db_path, read_only=True)
    try:
        yield build.build_report(c, WEEK, "EUR", ())
    finally:
        c.close()


def test_price_now_and_spread_take_no_placeholder_and_no_from_price(rep):
    apart = {(r["provider"], r["gpu_model"], r["pricing_model"]): r["gpu_hour"]
             for r in rep.not_firm.rows}
    # The data has both kinds: Runpod's flagged 0.50 and Nebius' "from" floors.
    whys = " ".join(r["why"] for r in rep.not_firm.rows)
    assert "placeholder" in whys and "'from' price" in whys
    assert ("runpod", "RTX-PRO-6000-96GB", "on_demand") in apart
    assert ("nebius", "L40S-48GB", "on_demand") in apart
    for row in rep.gpu_now.rows:
        for (provider, gpu, pm), price in apart.items():
            if gpu == row["gpu_model"] and row.get(f"{pm}_at") == provider:
                assert row[f"{pm}_lowest"] != pytest.approx(price), (gpu, pm)
    for row in rep.spread.rows:
        for (provider, gpu, pm), price in apart.items():
            if pm == "on_demand" and gpu == row["gpu_model"] and row.get(provider) is not None:
                assert row[provider] != pytest.approx(price), (gpu, provider)
    # Runpod's 0.50 MI300X / RTX PRO placeholders once made a "x9.12" spread.
    assert max(r["spread"] for r in rep.spread.rows) < 5


def test_every_figure_is_dated_and_within_the_age_limit(rep):
    for row in rep.gpu_now.rows:
        for pm in ("on_demand", "spot", "community", "reserved", "committed"):
            if row.get(f"{pm}_lowest") is not None:
                assert 0 <= (END - row[f"{pm}_on"]).days <= LIMIT, (row["gpu_model"], pm)
    assert all(0 <= (END - r["oldest"]).days <= LIMIT for r in rep.spread.rows)
    # Lambda's last snapshot (2026-08-22) is listed apart with its date and age, in no figure.
    assert [(r["provider"], r["snapshot_date"], r["age_days"]) for r in rep.stale.rows] == [
        ("lambda", dt.date(2026, 8, 22), 50)]
    assert all(r.get("lambda") is None for r in rep.spread.rows)
    # The weekly trend is as of each week's end: Lambda's 2026-08-22 prices count only in the
    # weeks that end while they are at most LIMIT days old.
    lambda_weeks = {r["week_end"] for r in rep.trend.rows if "lambda" in (r["providers"] or "")}
    assert lambda_weeks
    assert all(0 <= (w - dt.date(2026, 8, 22)).days <= LIMIT for w in lambda_weeks)
    health = {r["provider"]: r for r in rep.health.rows}
    assert (health["lambda"]["state"], health["lambda"]["age_days"]) == ("stale", 50)
    assert (health["runpod"]["state"], health["runpod"]["age_days"]) == ("ok", 12)


def test_no_chart_line_joins_points_across_a_gap_or_a_change_of_providers(rep):
    behind = {(r["gpu_model"], r["week_end"]): r["providers"] for r in rep.trend.rows}
    series = charts._pick_series(rep.trend.rows, "week_end", charts._next_week)
    joined = 0
    for gpu, points in series.items():
        for seg in charts._segments(points):
            for (d0, _), (d1, _) in zip(seg, seg[1:], strict=False):
                assert d1 - d0 == dt.timedelta(weeks=1), gpu
                assert behind[(gpu, d0)] == behind[(gpu, d1)], (gpu, d0, d1)
                joined += 1
    assert joined > 0  # some lines are drawn
    # The series whose providers change in the window are broken there (the A100-SXM and
    # H200 jumps came from Runpod's snapshot ageing out).
    a100 = [behind[("A100-SXM-80GB", d)] for d in sorted(
        d for g, d in behind if g == "A100-SXM-80GB")]
    assert len(set(a100)) > 1
    assert len(charts._segments(series["A100-SXM-80GB"])) > 1
    # The SVG draws one polyline per run of points.
    svg = charts.charts(rep)["trend"]
    runs = sum(len(charts._segments(p)) for p in series.values())
    assert len(re.findall("<polyline", str(svg))) == runs


def test_the_report_says_the_rule_and_lists_what_it_left_out(rep):
    md = render.render_markdown(rep)
    assert "at most 14 days old" in md and "firm prices only" in md
    assert "### Stale offers (not recommended)" in md and "### Not firm prices" in md
    assert "from providers" in md
