"""The GPU rental price index (docs/index.md) on the bundled archive: every provider's every
archived day replayed into a warehouse as `gpuprices nightly --replay all` does, the index
computed by the load, read by `gpuprices index`, rebuilt by `index verify`; a day's value
rebuilt by hand from the offers; a x10 glitch that does not move it; a revision that never
rewrites a published value. Synthetic rows only for the aggregator rule (no bundled provider is
an aggregator yet) and the x10 fault."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import shutil
from decimal import Decimal

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from gpuprices.flows.cli.main import app
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import index_rebuild
from gpuprices.reports.render import write_report
from gpuprices.warehouse import db, index_method, index_store
from gpuprices.warehouse.contract import CaptureMeta, make_offer, offers_to_table
from tests.bundled_warehouse import GROUP, bundled_settings

pytestmark = GROUP  # one bundled warehouse per run

H100 = "H100-SXM-80GB"
DAY = dt.date(2026, 8, 22)  # 14 providers read the same day: the richest H100 panel bundled
# The H100 on-demand index of DAY as the bundled snapshots give it (built by hand below).
PANEL_0822 = 19
VALUE_0822 = Decimal("3.646770")


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> Settings:
    """Every archived provider-day of snapshots/ replayed and loaded (the load computes and
    publishes the index): the run's one bundled warehouse (tests/bundled_warehouse.py), only
    read here (the report and the watch state are written beside it, never into it)."""
    return bundled_settings(tmp_path_factory)


@pytest.fixture
def con(replayed):
    c = db.connect(replayed.db_path, read_only=True)
    yield c
    c.close()


def _row(con, day, gpu=H100, pricing="on_demand", segment="all"):
    cur = con.execute("SELECT * FROM price_index_daily WHERE day = ? AND gpu_model = ? "
                      "AND pricing_model = ? AND segment = ?", [day, gpu, pricing, segment])
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    assert len(rows) == 1
    return dict(zip(names, rows[0], strict=True))


# --- the estimator, by hand ---------------------------------------------------------------

def test_interquartile_mean_by_hand():
    # n = 4: the middle two; n = 5: (0.15 x2 + 0.2 x3 + 0.15 x4) / 0.5; order does not matter.
    assert index_method.interquartile_mean([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert index_method.interquartile_mean([10.0, 1.0, 2.0, 3.0, 4.0]) == pytest.approx(
        (0.15 * 2 + 0.2 * 3 + 0.15 * 4) / 0.5, abs=1e-12)
    # A member moved x10 at the top of the panel changes nothing inside the central half.
    assert index_method.interquartile_mean([1.0, 2.0, 3.0, 4.0, 40.0]) == \
        index_method.interquartile_mean([1.0, 2.0, 3.0, 4.0, 5.0])
    assert index_method.quantile([1.0, 2.0, 3.0, 4.0], 0.25) == 1.75


def test_a_days_index_built_by_hand_from_its_members(con):
    """2026-08-22, H100 SXM on-demand: each provider's lowest firm on-demand price on its latest
    snapshot at most 14 days old (Runpod's of 2026-08-10 included), a marketplace (Vast) through
    the median of its largest book, read from the `offers` view here, not through
    index_candidates; then the interquartile mean of the 15 prices by its definition: quartiles
    at 3.75 and 11.25 of 15, so x4 and x12 count a quarter."""
    rows = con.execute(
        """
        WITH latest AS (
            SELECT provider, max(snapshot_date) AS d FROM snapshot_dates
            WHERE snapshot_date <= ? GROUP BY provider HAVING ? - max(snapshot_date) <= 14),
        offered AS (
        SELECT o.provider, o.currency, o.price_per_gpu_hour AS price,
               (SELECT supply FROM providers p WHERE p.provider = o.provider) AS supply,
               -- whose machine an aggregator's row is: our id, else its name for the cloud
               coalesce(nullif(json_extract_string(o.extra, '$.counted_under'), ''),
                        nullif(regexp_replace(lower(json_extract_string(o.extra,
                               '$.underlying')), '[^a-z0-9]', '', 'g'), '')) AS underlying,
               json_extract_string(o.extra, '$.market_stat') AS stat,
               try_cast(json_extract_string(o.extra, '$.sellers') AS INT) AS sellers
        FROM offers o JOIN latest l ON l.provider = o.provider AND l.d = o.snapshot_date
        WHERE o.gpu_model = ? AND o.pricing_model = 'on_demand'
          AND (SELECT kind FROM providers p WHERE p.provider = o.provider) <> 'inference_host'
          AND price_caveat(o.extra) IS NULL
          AND coalesce(o.effective_from <= o.snapshot_date, true)),
        quoted AS (
        SELECT coalesce(underlying, provider) AS member, currency,
               CASE WHEN any_value(supply) = 'marketplace'
                    THEN arg_max(price, sellers) FILTER (WHERE stat = 'median' AND sellers >= 3)
                    ELSE min(price) FILTER (WHERE stat IS NULL) END AS price
        FROM offered
        WHERE NOT (supply = 'aggregator' AND underlying IS NULL)
        GROUP BY ALL)
        SELECT member, currency, price * fx_factor(currency, 'USD', ?::DATE) AS usd
        FROM quoted WHERE price IS NOT NULL
        QUALIFY row_number() OVER (PARTITION BY member ORDER BY currency <> 'USD', usd) = 1
        ORDER BY usd
        """, [DAY, DAY, H100, DAY]).fetchall()
    assert {r[1] for r in rows} == {"USD", "EUR"}  # Scaleway's EUR at the day's ECB rate
    x = [r[2] for r in rows]
    n = len(x)
    assert n == PANEL_0822
    # The interquartile mean by its definition: the middle half of the sorted prices, each
    # price standing for [i, i + 1) of [0, n), the ones that straddle n/4 or 3n/4 by a share.
    lo, hi = n / 4, 3 * n / 4
    by_hand = sum(v * max(0.0, min(i + 1, hi) - max(i, lo)) for i, v in enumerate(x)) / (hi - lo)
    stored = _row(con, DAY)
    assert stored["panel"] == n
    assert stored["value_usd"] == Decimal(by_hand).quantize(Decimal("0.000001"))
    assert stored["value_usd"] == VALUE_0822

    # The band: the 25th and 75th percentiles, linear between neighbours.
    def percentile(q: float) -> float:
        pos = q * (n - 1)
        i = int(pos)
        return x[i] + (pos - i) * (x[min(i + 1, n - 1)] - x[i])

    assert float(stored["band_low_usd"]) == pytest.approx(percentile(0.25), abs=1e-6)
    assert float(stored["band_high_usd"]) == pytest.approx(percentile(0.75), abs=1e-6)
    members = json.loads(stored["members"])
    assert sorted(m["price_usd"] for m in members) == pytest.approx(x, abs=1e-6)
    assert {m["member"] for m in members} == {r[0] for r in rows}
    # Vast enters with the median of its 1-GPU book (8 sellers), not its lowest ask 1.3867.
    assert next(m["price_usd"] for m in members if m["member"] == "vast") == 1.735556


def test_a_x10_outlier_does_not_move_the_index(con):
    """AWS's H100 on-demand price on 2026-08-22 repeats the one it listed the day before (6.88
    per GPU-hour). Read x10 that day, it is held by the outlier screen and AWS keeps its 6.88 of
    2026-08-21: every day of the series keeps its value, band and panel. The same glitch in a
    plain mean of that day's panel would move it by more than half."""
    cands = index_store.candidates(con)
    days = index_store.index_days(con)
    factors = index_store.usd_factors(con, {c.currency for c in cands}, days)
    segs = index_store.segments(con, {c.member for c in cands})

    def run(cs):
        return [r for r in index_method.compute(cs, days, segs, 14,
                                                lambda cur, d: factors.get((cur, d)))
                if r.gpu_model == H100 and r.pricing_model == "on_demand"]

    aws = [c for c in cands if c.member == "aws" and c.gpu_model == H100
           and c.pricing_model == "on_demand" and c.snapshot_date in (DAY - dt.timedelta(1), DAY)]
    assert [c.price for c in aws] == pytest.approx([6.88, 6.88])
    glitched = [dataclasses.replace(c, price=c.price * 10) if c == aws[1] else c for c in cands]
    before, after = run(cands), run(glitched)

    def figures(rows):
        return [(r.day, r.segment, r.value_usd, r.band_low_usd, r.band_high_usd, r.panel)
                for r in rows]

    assert figures(after) == figures(before)
    on_day = next(r for r in after if r.day == DAY and r.segment == "all")
    assert on_day.value_usd == VALUE_0822 and on_day.panel == PANEL_0822
    held = next(m for m in json.loads(on_day.members) if m["member"] == "aws")
    assert held == {"member": "aws", "provider": "aws", "price_usd": 6.88, "price": 6.88,
                    "currency": "USD", "snapshot_date": "2026-08-21", "status": "outlier"}
    # What the screen prevents: the plain mean of that day's panel with AWS at 68.80.
    prices = [m["price_usd"] for m in json.loads(on_day.members)]
    glitch_mean = (sum(prices) + 9 * 6.88) / len(prices)
    assert glitch_mean > 1.5 * float(on_day.value_usd)


# --- the command ------------------------------------------------------------------------

def test_index_command_prints_every_day_with_enough_members(replayed, con):
    want = [r[0] for r in con.execute(
        "SELECT day FROM price_index_daily WHERE gpu_model = ? AND pricing_model = "
        "'on_demand' AND segment = 'all' AND panel >= 3 ORDER BY day", [H100]).fetchall()]
    assert len(want) >= 20 and DAY in want
    res = CliRunner().invoke(app, ["index", "--gpu", H100, "--data-dir",
                                   str(replayed.data_dir)])
    assert res.exit_code == 0, res.output
    printed = [line.split("│")[1].strip() for line in res.output.splitlines()
               if line.startswith("│") and line.split("│")[1].strip()[:2] == "20"]
    assert printed == [d.isoformat() for d in want]
    line = next(x for x in res.output.splitlines() if x.startswith(f"│ {DAY}"))
    stored = _row(con, DAY)
    assert f"{VALUE_0822:.4f}" in line and f"│ {PANEL_0822} " in line
    assert f"{stored['band_low_usd']:.4f} - {stored['band_high_usd']:.4f}" in line

    res = CliRunner().invoke(app, ["index", "--gpu", H100, "--json", "--currency", "EUR",
                                   "--from", "2026-08-22", "--to", "2026-08-22",
                                   "--data-dir", str(replayed.data_dir)])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)
    rate = con.execute("SELECT fx_factor('USD', 'EUR', DATE '2026-08-22')").fetchone()[0]
    assert row["currency"] == "EUR" and row["panel"] == PANEL_0822
    assert len(row["members"]) == PANEL_0822
    assert row["value"] == pytest.approx(float(VALUE_0822) * rate, abs=1e-6)

    res = CliRunner().invoke(app, ["index", "--gpu", H100, "--csv", "--all-days", "--from",
                                   "2026-08-20", "--to", "2026-08-21", "--data-dir",
                                   str(replayed.data_dir)])
    assert res.exit_code == 0, res.output
    assert "panel 2 < 3: aws, runpod" in res.output  # a gap, with why


def test_history_from_2023_with_the_reasons_for_gaps(con):
    first, n_days = con.execute(
        "SELECT min(day), count(DISTINCT day) FROM price_index_daily").fetchone()
    held = con.execute("SELECT count(DISTINCT snapshot_date) FROM snapshot_dates "
                       "WHERE snapshot_date >= DATE '2023-01-01'").fetchone()[0]
    assert first >= dt.date(2023, 1, 1) and n_days == held
    gaps = con.execute("SELECT count(*) FROM price_index_daily WHERE value_usd IS NULL "
                       "AND (reason IS NULL OR reason = '')").fetchone()[0]
    assert gaps == 0
    assert _row(con, dt.date(2023, 9, 29))["reason"] == "panel 2 < 3: coreweave, runpod"


def test_sub_indices_split_neoclouds_from_hyperscalers(con):
    hyper = json.loads(_row(con, DAY, segment="hyperscaler")["members"])
    neo = json.loads(_row(con, DAY, segment="neocloud")["members"])
    everyone = {m["member"] for m in json.loads(_row(con, DAY)["members"])}
    assert {m["member"] for m in hyper} == {"aws", "azure", "digitalocean", "oracle"}
    neo_members = {m["member"] for m in neo}
    assert neo_members == everyone - {"aws", "azure", "digitalocean", "oracle"}
    assert len(neo) == PANEL_0822 - 4


def test_publish_writes_csv_and_parquet_beside_the_warehouse(replayed, con):
    n = con.execute("SELECT count(*) FROM price_index_daily").fetchone()[0]
    folder = replayed.db_path.parent / "index"
    assert pq.read_table(folder / "price_index_daily.parquet").num_rows == n
    lines = (folder / "price_index_daily.csv").read_text().splitlines()
    assert len(lines) == n + 1 and lines[0].startswith("day,gpu_model,pricing_model,segment")


def test_report_shows_the_index_chart(replayed, con):
    html = write_report(con, replayed.data_dir / "reports", "2026-W41", "USD")
    text = html.read_text()
    assert f"{H100} on-demand index, 12 weeks to 2026-10-11" in text
    assert f"{H100} on-demand index since 2023" in text
    assert 'class="band"' in text and "week&#39;s move" in text
    md = html.with_name("report.md").read_text()
    latest = _row(con, dt.date(2026, 10, 5))
    assert f"| {H100} | 2026-10-05 | {latest['value_usd']:.4f} |" in md


# --- never revised; verify ----------------------------------------------------------------

def test_a_reparse_that_changes_a_value_writes_a_revision_beside_it(replayed, tmp_path):
    path = tmp_path / "warehouse.duckdb"
    shutil.copyfile(replayed.db_path, path)
    c = db.connect(path)
    try:
        before = _row(c, dt.date(2026, 10, 4))
        # As a parser fix would: Crusoe's 2026-10-04 H100 price read 10 % higher.
        c.execute("UPDATE offer_points SET price_per_hour = price_per_hour * 1.1 WHERE "
                  "provider = 'crusoe' AND snapshot_date = DATE '2026-10-04' AND gpu_model = ?",
                  [H100])
        assert index_store.update(c, "reparse")[0] == 0
        assert _row(c, dt.date(2026, 10, 4)) == before  # the published row stands
        rev = c.execute("SELECT value_usd, published_value_usd, revised_run FROM "
                        "price_index_revisions WHERE day = DATE '2026-10-04' AND gpu_model = ? "
                        "AND pricing_model = 'on_demand' AND segment = 'all'", [H100]).fetchall()
        assert len(rev) == 1 and rev[0][1] == before["value_usd"] != rev[0][0]
        assert rev[0][2] == "reparse"
        revisions = c.execute("SELECT count(*) FROM price_index_revisions").fetchone()[0]
        assert index_store.update(c, "again") == (0, 0)  # the same recomputation: once
        assert c.execute("SELECT count(*) FROM price_index_revisions").fetchone()[0] == revisions
    finally:
        c.close()


def test_index_verify_rebuilds_it_from_the_archive(replayed):
    v = index_rebuild.verify(replayed)
    assert v.ok and v.equal > 1000 and not v.differences, v
    # And a difference is found: one stored digit changed is listed with its field.
    stored, revisions = index_rebuild.stored_index(replayed)
    key = (DAY, H100, "on_demand", "all")
    tampered = dict(stored)
    changed = VALUE_0822 + Decimal("0.000001")
    tampered[key] = (changed,) + stored[key][1:]
    found = index_rebuild.compare(tampered, revisions, stored)
    assert not found.ok
    assert found.differences == [(key, "value_usd", changed, VALUE_0822)]


# --- aggregators are not counted twice (synthetic: no bundled provider is one yet) --------

def test_aggregator_rows_count_for_their_underlying_seller_once(tmp_path):
    day = dt.date(2026, 8, 22)

    def offers(provider, *rows):
        meta = CaptureMeta(provider=provider, url=f"https://example.test/{provider}",
                           captured_at=dt.datetime.combine(day, dt.time(3), tzinfo=dt.UTC))
        return offers_to_table([make_offer(meta, sku=sku, gpu_model=H100, gpu_count=1,
                                           price_per_hour=price, pricing_model="on_demand",
                                           extra=extra) for sku, price, extra in rows])

    c = db.connect(":memory:")
    db.init_schema(c)
    db.load_providers(c, [
        {"provider": "lambda", "name": "Lambda", "kind": "gpu_cloud", "supply": "own"},
        # Standing in for an aggregator provider (another helper is adding real ones).
        {"provider": "together", "name": "Agg", "kind": "gpu_cloud", "supply": "aggregator"},
    ])
    db.load_partition(c, day, "lambda", offers("lambda", ("gpu_1x_h100", 2.99, None)))
    db.load_partition(c, day, "together", offers(
        "together",
        # Lambda is read itself: its own price stands, the relayed one is left out.
        ("via-lambda", 2.49, {"underlying": "lambdalabs", "counted_under": "lambda"}),
        # A cloud not read itself, under two spellings: one member at its lowest price.
        ("via-acme", 2.10, {"underlying": "Acme Cloud"}),
        ("via-acme-2", 2.20, {"underlying": "acme-cloud"}),
        ("own-listing", 1.00, None),  # names no seller: cannot be shown distinct
    ))
    got = c.execute("SELECT member, provider, price_per_gpu_hour FROM index_candidates "
                    "ORDER BY member").fetchall()
    assert got == [("acmecloud", "together", 2.10), ("lambda", "lambda", 2.99)]
    c.close()


def test_an_index_watch_rule_is_sent_once_when_its_move_holds(replayed, con, tmp_path,
                                                               monkeypatch):
    """`kind = "index"` (flows/ops/watching.py) on the real index: its figures are the stored
    ones, and a rule whose threshold the move passes is sent once, one it does not is not."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    from gpuprices.flows.ops import notify, watching
    from gpuprices.warehouse.queries import watch

    move = watch.index_move(con, gpu_model=H100, days=7)
    assert move["then_day"] <= move["day"] - dt.timedelta(days=7)
    for day, value in ((move["day"], move["value"]), (move["then_day"], move["then_value"])):
        assert Decimal(str(value)).quantize(Decimal("0.000001")) == _row(con, day)["value_usd"]
    posts = []

    class Receiver(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    Thread(target=srv.serve_forever, daemon=True).start()
    monkeypatch.setenv(notify.NOTIFY_ENV, f"json://127.0.0.1:{srv.server_address[1]}/w")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    way = "falls_pct" if move["pct"] < 0 else "rises_pct"
    rules = tmp_path / "rules.toml"
    rules.write_text(
        f'[[rule]]\nname = "passed"\nkind = "index"\ngpu = "{H100}"\n'
        f'{way} = {abs(move["pct"]) - 0.05:.4f}\n'
        f'[[rule]]\nname = "not passed"\nkind = "index"\ngpu = "{H100}"\n'
        f'{way} = {abs(move["pct"]) + 0.05:.4f}\n')
    try:
        first = watching.evaluate(replayed, watching.load_rules(rules))
        second = watching.evaluate(replayed, watching.load_rules(rules))
    finally:
        srv.shutdown()
        (replayed.data_dir / watching.STATE_FILE).unlink(missing_ok=True)
    assert [len(o.new) for o in first] == [1, 0] and [len(o.new) for o in second] == [0, 0]
    (post,) = posts
    assert post["title"] == "gpuprices watch: passed (1 new)"
    assert f"on {move['then_day']} -> " in post["message"] and f"({move['pct']:+.1f} %)" \
        in post["message"]
