"""Rent, reserve or own: the arithmetic (sizing/rent_or_own.py) on numbers worked out by hand,
then `gpuprices compare` and the report's section on the bundled 2026-W41 warehouse."""

import datetime as dt
import json
import math

import pytest
import typer
from typer.testing import CliRunner

from gpuprices.flows.cli.compare import register
from gpuprices.reports import build, render
from gpuprices.reports.rent_or_own import compare_demands, term_prices
from gpuprices.sizing.cost import HOURS_PER_MONTH
from gpuprices.sizing.rent_or_own import (
    DEFAULTS_CSV,
    EXAMPLE_DEMANDS,
    OWNERSHIP_FIELDS,
    WEEKS_PER_MONTH,
    Demand,
    DemandError,
    Ownership,
    TermPrice,
    break_even_hours,
    compare,
    load_defaults,
    load_demands,
    owned,
    ownership_for,
    rented,
)
from gpuprices.warehouse import db

W41_END = dt.date(2026, 10, 11)
DEMAND = Demand("d", "H100-SXM-80GB", 8, 40, 12)
OD = TermPrice("on_demand", None, 4.0, "p", "s")


def test_committed_break_even_is_the_hours_that_cost_the_same_on_demand():
    # 12-month term at 2.0/GPU-h against on-demand 4.0: the term costs 2.0 x 8 x 730 a month,
    # on-demand 4.0 x 8 x h x 730/168; equal at h = 84 h/week (half the week).
    committed = rented(TermPrice("committed", 12, 2.0), DEMAND)
    base = rented(OD, DEMAND)
    assert committed.fixed_monthly == pytest.approx(2.0 * 8 * HOURS_PER_MONTH)
    h = break_even_hours(committed, base)
    assert h == pytest.approx(84.0)
    assert committed.monthly(h) == pytest.approx(base.monthly(h))
    assert committed.monthly(h + 1) < base.monthly(h + 1)
    assert committed.monthly(h - 1) > base.monthly(h - 1)


def test_a_term_longer_than_the_demand_is_paid_whole():
    short = Demand("d", "H100-SXM-80GB", 8, 40, 6)
    c36 = rented(TermPrice("committed", 36, 2.0), short)
    # 36 months paid, spread over the 6 months of demand: six times the monthly term price.
    assert c36.fixed_monthly == pytest.approx(2.0 * 8 * HOURS_PER_MONTH * 6)
    assert break_even_hours(c36, rented(OD, short)) is None  # > 168 h/week
    # 14 months on 12-month terms: two terms.
    c12 = rented(TermPrice("committed", 12, 2.0), Demand("d", "x", 8, 40, 14))
    assert c12.fixed_monthly == pytest.approx(2.0 * 8 * HOURS_PER_MONTH * 24 / 14)


def test_hourly_options_break_even_at_zero_or_never():
    base = rented(OD, DEMAND)
    assert break_even_hours(rented(TermPrice("spot", None, 1.5), DEMAND), base) == 0.0
    assert break_even_hours(rented(TermPrice("reserved", None, 5.0), DEMAND), base) is None


OWN = Ownership(server_price=240_000, gpus_per_server=8, server_kw=10.0,
                electricity_per_kwh=0.10, hosting_per_kw_month=150.0, pue=1.5, years=4,
                residual_fraction=0.25, idle_fraction=0.3)


def test_owning_fixed_and_hourly_parts_by_hand():
    o = owned(OWN, DEMAND)
    depreciation = 240_000 * 0.75 / 48  # 3,750 a month
    hosting = 10 * 150.0  # 1,500
    idle = 10 * 0.3 * 730 * 0.10 * 1.5  # 328.5
    assert o.fixed_monthly == pytest.approx(depreciation + hosting + idle)
    assert o.per_hour == pytest.approx(10 * 0.7 * 0.10 * 1.5)  # 1.05 per hour used
    h = break_even_hours(o, rented(OD, DEMAND))
    assert h == pytest.approx((depreciation + hosting + idle) / ((32 - 1.05) * WEEKS_PER_MONTH))
    # Nine GPUs need two servers: twice the fixed cost.
    nine = owned(OWN, Demand("d", "H100-SXM-80GB", 9, 40, 12))
    assert nine.fixed_monthly == pytest.approx(2 * o.fixed_monthly)
    assert any("bought and unused" in n for n in nine.notes)
    assert owned(OWN, DEMAND, fx=0.5).fixed_monthly == pytest.approx(o.fixed_monthly / 2)


def test_compare_picks_the_cheapest_and_states_why_none_breaks_even():
    prices = [OD, TermPrice("committed", 12, 2.0), TermPrice("reserved", None, 5.0)]
    low = compare(Demand("d", "H100-SXM-80GB", 8, 20, 12), prices, OWN)
    high = compare(Demand("d", "H100-SXM-80GB", 8, 168, 12), prices, OWN)
    assert low["cheapest"] == "on-demand"
    assert high["cheapest"] in ("committed 12 months", "own")
    reserved = next(o for o in low["options"] if o["kind"] == "reserved")
    assert "never cheaper than on-demand" in "; ".join(reserved["notes"])
    none = compare(DEMAND, [TermPrice("spot", None, 1.0)], None)
    assert any("no firm on-demand price" in n for n in none["notes"])
    assert any("owning not priced" in n for n in none["notes"])


def test_defaults_cite_a_source_and_date_for_every_figure():
    defaults = load_defaults()
    h100 = ownership_for("H100-SXM-80GB", defaults=defaults)
    assert h100 is not None and h100.gpus_per_server == 8
    for name in OWNERSHIP_FIELDS:
        assert "(as of 20" in h100.sources[name], name
    text = DEFAULTS_CSV.read_text()
    assert "assumed" in text  # figures without a public source say so
    assert ownership_for("A100-SXM-80GB", defaults=defaults) is None  # no purchase price
    own = ownership_for("A100-SXM-80GB", {"server_price": 150_000, "gpus_per_server": 8,
                                          "server_kw": 6.5}, defaults)
    assert own is not None and own.sources["server_price"] == "set by the user"
    with pytest.raises(DemandError, match="unknown ownership figure"):
        ownership_for("H100-SXM-80GB", {"price": 1})


def test_bad_demands_are_named(tmp_path):
    bad = tmp_path / "d.toml"
    bad.write_text('[[demand]]\ngpu = "H100-SXM-80GB"\ngpus = 8\nhours_per_week = 200\n'
                   'months = 12\n')
    with pytest.raises(DemandError, match="more than a week's 168"):
        load_demands(bad)
    bad.write_text('[[demand]]\ngpu = "H100-SXM-80GB"\ngpus = 8\nhours_per_week = 40\n')
    with pytest.raises(DemandError, match="demand 1: months must be a positive number"):
        load_demands(bad)
    bad.write_text("")
    with pytest.raises(DemandError, match="no \\[\\[demand\\]\\] table"):
        load_demands(bad)


# --- the bundled data: each provider's latest snapshot on or before 2026-10-11 ---------------

@pytest.fixture(scope="module")
def con(w41_settings):
    c = db.connect(w41_settings.db_path, read_only=True)
    yield c
    c.close()


def test_w41_prices_hold_each_committed_term_and_the_cheapest_on_demand(con):
    prices, usd = term_prices(con, W41_END, "USD", 14)
    h100 = {(p.pricing_model, p.commitment_months): p for p in prices["H100-SXM-80GB"]}
    assert {("committed", 12), ("committed", 36), ("on_demand", None),
            ("spot", None)} <= set(h100)
    assert usd == 1.0
    # The cheapest firm on-demand H100 of the week is the lowest of gpu_prices_as_of too.
    low = con.execute("SELECT lowest FROM gpu_prices_as_of(?::DATE, 'USD', 14) WHERE "
                      "gpu_model = 'H100-SXM-80GB' AND pricing_model = 'on_demand'",
                      [W41_END]).fetchone()[0]
    assert h100[("on_demand", None)].price_per_gpu_hour == pytest.approx(low)
    assert h100[("committed", 36)].price_per_gpu_hour < h100[("committed", 12)].price_per_gpu_hour


def test_w41_compare_of_the_example_demands(con):
    results = compare_demands(con, W41_END, "EUR", load_demands(EXAMPLE_DEMANDS), 14)
    assert [r["gpu_model"] for r in results] == ["H100-SXM-80GB", "H100-SXM-80GB",
                                                 "A100-SXM-80GB"]
    team, around_the_clock, a100 = results
    kinds = {o["kind"] for o in team["options"]}
    assert {"on_demand", "spot", "committed", "own"} <= kinds
    own = next(o for o in team["options"] if o["kind"] == "own")
    # Owning beats renting above a computed utilisation: at 168 h/week it is cheaper than
    # on-demand, at 40 h/week it is not.
    assert 0 < own["break_even_hours_per_week"] < 168
    assert around_the_clock["cheapest"] in ("own", "spot", "community (marketplace)")
    base = next(o for o in team["options"] if o["kind"] == "on_demand")
    h = own["break_even_hours_per_week"]
    assert own["fixed_monthly"] + own["per_hour"] * h * WEEKS_PER_MONTH == pytest.approx(
        base["per_hour"] * h * WEEKS_PER_MONTH)
    assert any("owning not priced" in n for n in a100["notes"])
    for r in results:
        for o in r["options"]:
            assert math.isfinite(o["monthly_cost"]) and o["monthly_cost"] > 0


def test_w41_compare_command_json_and_table(w41_settings):
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # two commands, so typer keeps the command name
    runner = CliRunner()
    args = ["compare", str(EXAMPLE_DEMANDS), "--date", "2026-10-11", "--data-dir",
            str(w41_settings.data_dir)]
    r = runner.invoke(app, [*args, "--json", "--own", "server_price=250000"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out[0]["as_of"] == "2026-10-11" and out[0]["currency"] == "USD"
    own = next(o for o in out[0]["options"] if o["kind"] == "own")
    default = compare_demands_own(w41_settings)
    assert own["fixed_monthly"] < default  # the cheaper server given on the command line
    r = runner.invoke(app, [*args, "--currency", "EUR"])
    assert r.exit_code == 0, r.output
    assert "break-even" in r.output and "owning not priced" in r.output
    r = runner.invoke(app, [*args, "--own", "watts=3"])
    assert r.exit_code == 2 and "KEY one of" in r.output


def compare_demands_own(settings) -> float:
    c = db.connect(settings.db_path, read_only=True)
    try:
        res = compare_demands(c, W41_END, "USD", load_demands(EXAMPLE_DEMANDS)[:1], 14)
    finally:
        c.close()
    return next(o for o in res[0]["options"] if o["kind"] == "own")["fixed_monthly"]


def test_w41_report_has_the_rent_reserve_own_section(con):
    rep = build.build_report(con, "2026-W41", "EUR",
                             now=dt.datetime(2026, 10, 12, 6, tzinfo=dt.UTC))
    t = rep.rent_own
    assert t is not None and t in rep.tables()
    options = {(r["demand"], r["option"]) for r in t.rows}
    assert any(o == "own" for _, o in options)
    assert any(o.startswith("committed 36") for _, o in options)
    md = render.render_markdown(rep)
    assert "## Rent, reserve or own" in md
    assert "Rent, reserve or own" in render.render_html(rep)
