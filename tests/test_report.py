"""The weekly report on a warehouse built from real captures (Runpod pages and API, GCP and Azure
history series, ECB rates): values, escaping, files, the CLI command, and the HTML as rendered
by headless Chromium."""

import csv
import datetime as dt
import re
import subprocess

import pytest
import typer
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from gpuprices.flows import loading
from gpuprices.flows.cli.report import register
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.report_job import make_report, refresh_fx
from gpuprices.reports import build, render, weeks
from gpuprices.sizing.workload import load_workloads
from gpuprices.spiders.archive import append_captures
from gpuprices.spiders.importer import import_capture, parse_timestamp
from gpuprices.spiders.providers.azure.history import captures_from_azure_history
from gpuprices.spiders.providers.gcp.history import captures_from_gcp_history
from gpuprices.warehouse import db
from gpuprices.warehouse.contract import CaptureMeta, make_offer, offers_to_table
from tests.conftest import BROWSER, FIXTURES, ROOT, manifest_rows, needs_chromium
from tests.no_fsync import without_fsync

WORKLOADS = ROOT / "sizing" / "workloads.toml"
# The module-scoped warehouse, report and W41 report below are built once per run: `make test`
# (--dist loadgroup) runs the whole module on one xdist worker, not a share on each.
pytestmark = pytest.mark.xdist_group("report")


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    base = tmp_path_factory.mktemp("report")
    s = Settings(base / "data", base / "snapshots").ensure()
    with without_fsync():  # the build only: no test here needs its files durable (no_fsync.py)
        for r in manifest_rows():
            if r["provider"] in ("runpod", "ecb"):
                import_capture(s.archive_root, ROOT / r["file"], r["provider"], r["url"],
                               parse_timestamp(r["captured_at"]), method=r["method"],
                               origin=r["origin"], partial=r["partial"] or None)
        append_captures(s.archive_root, captures_from_gcp_history(FIXTURES / "history" / "gcp"))
        append_captures(s.archive_root,
                        captures_from_azure_history(FIXTURES / "history" / "azure"))
        results = []
        for p in ("runpod", "gcp", "azure"):
            results += pipeline.reparse(s, p)
        assert all(r.status == "ok" for r in results)
        loading.load(s, results, "20261005T020000-testrun")
        n, problems = refresh_fx(s)
    assert (n, problems) == (221702, [])
    return s


@pytest.fixture
def con(settings):
    # Closed after each test: DuckDB refuses a read-write connection (the CLI's FX refresh) to
    # a file this process holds open read-only.
    c = db.connect(settings.db_path, read_only=True)
    yield c
    c.close()


@pytest.fixture(scope="module")
def rep(settings):
    c = db.connect(settings.db_path, read_only=True)
    try:
        return build.build_report(c, None, "EUR", load_workloads(WORKLOADS),
                                   now=dt.datetime(2026, 10, 5, 6, tzinfo=dt.UTC))
    finally:
        c.close()


def test_weeks():
    assert weeks.iso_week(dt.date(2026, 9, 29)) == "2026-W40"
    assert weeks.week_bounds("2026-W40") == (dt.date(2026, 9, 28), dt.date(2026, 10, 4))
    assert weeks.week_bounds("2026-w01") == (dt.date(2025, 12, 29), dt.date(2026, 1, 4))
    with pytest.raises(ValueError, match="YYYY-Www"):
        weeks.week_bounds("2026-40")


def test_default_week_is_latest_with_data(rep):
    # The newest snapshot is Runpod's GraphQL answer of 2026-09-29.
    assert rep.week == "2026-W40"
    assert (rep.start, rep.end) == (dt.date(2026, 9, 28), dt.date(2026, 10, 4))


def test_prices_now_converted_at_their_snapshot_rate(rep):
    h100 = next(r for r in rep.gpu_now.rows if r["gpu_model"] == "H100-SXM-80GB")
    # Runpod's 2026-09-29 on-demand H100 SXM is 3.49 USD/h; the ECB USD rate of 2026-09-29 is
    # 1.1355 per euro.
    assert h100["on_demand_lowest"] == pytest.approx(3.49 / 1.1355)
    assert h100["on_demand_at"] == "runpod"
    assert h100["community_lowest"] == pytest.approx(2.69 / 1.1355)
    assert h100["on_demand_lowest"] <= h100["on_demand_median"]
    spread = next(r for r in rep.spread.rows if r["gpu_model"] == "H100-SXM-80GB")
    assert spread["runpod"] == pytest.approx(3.49 / 1.1355)
    # GCP's and Azure's last snapshots (July) are over the 14-day age limit at the week's end:
    # listed as stale, not in the spread.
    assert spread["n_providers"] == 1 and spread["oldest"] == dt.date(2026, 9, 29)
    assert {r["provider"] for r in rep.stale.rows} == {"gcp", "azure"}


def test_the_report_opens_with_its_coverage(rep, con):
    """The counts of the first line, derived here from the snapshots loaded: fresh within the
    age limit at the week's end, stale, and the registry's providers never read."""
    from gpuprices.spiders import registry
    last = dict(con.execute("SELECT provider, max(snapshot_date) FROM provider_snapshots "
                            "WHERE snapshot_date <= ? GROUP BY provider", [rep.end]).fetchall())
    fresh = [p for p, d in last.items() if (rep.end - d).days <= rep.max_age_days]
    stale = [p for p in last if p not in fresh]
    never = set(registry.ids()) - set(last)
    assert fresh and stale and never  # runpod; gcp and azure; the providers not in the fixture
    line = (f"Figures cover {len(fresh)} of {len(last) + len(never)} providers (latest "
            f"snapshot on or before {rep.end} at most {rep.max_age_days} days old); "
            f"{len(stale)} stale, listed below; {len(never)} never read.")
    assert rep.coverage == line
    # The stale providers are the ones the Stale offers table lists below it.
    assert {r["provider"] for r in rep.stale.rows} == set(stale)
    md = render.render_markdown(rep)
    assert md.splitlines()[2] == f"**{line}**"
    html = render.render_html(rep)
    assert html.index(line) < html.index("<nav>")


def test_usd_report_uses_usd_prices_unchanged(con):
    rep = build.build_report(con, "2026-W40", "USD", ())
    h100 = next(r for r in rep.gpu_now.rows if r["gpu_model"] == "H100-SXM-80GB")
    assert h100["on_demand_lowest"] == pytest.approx(3.49)


def test_workload_sections(rep):
    names = [w["name"] for w in rep.workloads]
    assert names == [w.name for w in load_workloads(WORKLOADS)]
    for w in rep.workloads:
        top = w["top"].rows
        if not top:  # fresh here: Runpod's 1-GPU pods only; a multi-GPU job on separate pods
            # is no cluster: every such option is listed apart, saying so
            assert any(r["verdict"] == "not_cluster" for r in w["apart"].rows), w["name"]
            continue
        costs = [r["cost_per_checkpoint"] for r in top]
        assert costs == sorted(costs)
        assert all(r["verdict"] == "ok" and r["currency"] == "EUR" for r in top)
        # best per provider: one row per provider, the provider's best being no better than
        # the overall best.
        provs = [r["provider"] for r in w["per_provider"].rows]
        assert len(provs) == len(set(provs))
        assert w["per_provider"].rows[0]["cost_per_checkpoint"] == costs[0]
        assert all(r["reason"] for r in w["nofit"].rows)
    # A 70B QLoRA needs more than a 24 GB card: the reason says so.
    nofit = next(w for w in rep.workloads if w["name"] == "qlora-llama3.1-70b")["nofit"].rows
    l4 = [r for r in nofit if r["gpu_model"] == "L4-24GB" and r["verdict"] == "no_fit"]
    assert l4 and "does not fit" in l4[0]["reason"] and "24 GB" in l4[0]["reason"]
    assert len(rep.headline.rows) == 3 * len(names)


@pytest.fixture(scope="module")
def w41(w41_settings):
    c = db.connect(w41_settings.db_path, read_only=True)
    try:
        return build.build_report(c, "2026-W41", "EUR", load_workloads(WORKLOADS),
                                  now=dt.datetime(2026, 10, 12, 6, tzinfo=dt.UTC))
    finally:
        c.close()


def test_w41_headline_gives_firm_spot_and_committed_choices_with_dates(w41):
    names = [w.name for w in load_workloads(WORKLOADS)]
    cells = w41.headline.rows
    assert [r["workload"] for r in cells] == [n for n in names for _ in range(3)]
    # a committed cell without a choice says that no commitment pays for the run, and which
    # would (sizing/commitment_pays.py)
    notes = [r for r in cells if not r.get("choice")]
    assert all(r["choice_label"] == "committed / reserved" and r["reason"].startswith(
        "no commitment pays") for r in notes)
    rows = [r for r in cells if r.get("choice")]
    for r in rows:
        # every choice is a priced, fresh, firm offer with its date, age and reasons
        assert r["verdict"] == "ok" and r["firm"] and not r["stale"], r
        assert r["snapshot_date"] <= dt.date(2026, 10, 11) and r["age_days"] >= 0
        assert r["cost_to_finish"] > 0 and r["reason"]
        assert r["cost_per_checkpoint"] == pytest.approx(
            r["cost_to_finish"] / r["inputs"]["checkpoints"])
    kinds = {(r["workload"], r["choice"]): r for r in rows}
    for n in names:
        assert kinds[(n, "spot")]["pricing_model"] == "spot"
        assert kinds[(n, "on_demand")]["pricing_model"] in ("on_demand", "community")
        if (n, "committed") in kinds:
            assert kinds[(n, "committed")]["pricing_model"] in ("committed", "reserved")
    # not the same offer five times
    assert len({(r["provider"], r["sku"], r["gpus"]) for r in rows if r["choice"] == "spot"}) > 1
    assert len({(r["provider"], r["sku"]) for r in rows}) > 3
    # a 1-GPU workload is never priced as if it ran on 8 GPUs
    small = [r for r in rows if r["workload"] == "qlora-llama3.1-8b-15M"]
    assert all(r["gpus"] == 1 for r in small)
    md = render.render_markdown(w41)
    head = md.split("## Where to rent this week", 1)[1].split("## Workloads", 1)[0]
    assert "2026-09-29" in head and "per successful checkpoint" in head
    assert "assumed: 15%/day" in head


def test_appendix_plans_every_recommended_offer(w41):
    plan = w41.bench_plan
    assert plan is not None and plan in w41.tables()
    chosen = {(r["workload"], r["choice_label"], f"{r['provider']} {r['sku']} {r['region'] or ''}"
               .strip()) for r in w41.headline.rows if r.get("choice")}
    planned = {(r["workload"], r["choice_label"], r["offer"]) for r in plan.rows}
    assert planned == chosen and len(chosen) >= 2 * len(load_workloads(WORKLOADS))
    totals = [r for r in plan.rows if r["step"] == "plan, back to back"]
    assert len(totals) == len(chosen)
    for r in plan.rows:
        assert r["hours"] > 0 and r["cost"] > 0 and r["currency"] == "EUR"
    # a committed choice (only where it pays) says its term is bought whole, after the plan
    committed = [r for r in totals if r["choice_label"].startswith("committed")]
    for r in committed:
        assert "term is bought whole" in r["reason"] or "minimum 24 h" in r["reason"], r


def test_appendix_is_in_markdown_and_html(w41):
    md = render.render_markdown(w41)
    appendix = md.split("## Appendix: Benchmark plan before committing", 1)[1]
    assert "simulated preemption and recovery" in appendix and "micro-batch sweep" in appendix
    html = render.render_html(w41)
    assert 'id="bench-plan"' in html and 'id="benchmark_plan"' in html


def test_health(rep):
    h = {r["provider"]: r for r in rep.health.rows}
    assert h["runpod"]["last_snapshot"] == dt.date(2026, 9, 29)
    # 88 rows: 61 before Runpod's GeForce, RTX PRO and MIG wordings were mapped
    assert h["runpod"]["rows"] == 88 and h["runpod"]["state"] == "ok"
    assert h["gcp"]["last_snapshot"] == dt.date(2026, 7, 30)
    assert h["gcp"]["state"] == "stale" and h["gcp"]["age_days"] == 66
    assert h["lambda"]["state"] == "not run"  # never read: listed, not left out
    assert h["ecb (FX)"]["last_snapshot"] == dt.date(2026, 10, 2)


def test_failures_this_week_are_counted(settings, tmp_path):
    """A failed run recorded in the week shows in data health with its error."""
    c = db.connect(":memory:")
    db.init_schema(c)
    c.execute(f"ATTACH '{settings.db_path}' AS src (READ_ONLY)")
    for table in (*db._STORE_TABLES, "fx_rates"):
        c.execute(f"INSERT INTO {table} SELECT * FROM src.{table}")  # noqa: S608
    db.record_run(c, run_id="20261001T020000-abc", provider="runpod", status="failed",
                  error="runpod: https://api.runpod.io/graphql: HTTP 503",
                  started_at=dt.datetime(2026, 10, 1, 2, tzinfo=dt.UTC))
    rep = build.build_report(c, "2026-W40", "EUR", ())
    runpod = next(r for r in rep.health.rows if r["provider"] == "runpod")
    assert runpod["failures"] == 1 and runpod["state"] == "failed"
    assert "HTTP 503" in runpod["last_error"]


def test_changes_leave_out_snapshots_further_apart_than_the_age_limit(con):
    """Week 31: GCP's 2026-07-30 snapshot against its 2026-01-22 one, 189 days apart. Their
    price differences are half a year's, not the week's: no change, no offer appeared or
    disappeared, and the tables' notes say what was left out and why."""
    rep = build.build_report(con, "2026-W31", "EUR", ())
    changed, appeared, gone = rep.changes[:3]
    assert changed.rows == appeared.rows == gone.rows == []
    (n,) = con.execute("SELECT count(*) FROM price_changes WHERE provider = 'gcp' "
                       "AND new_date = DATE '2026-07-30'").fetchone()
    assert n > 0
    assert f"gcp {n} price differences, against prices as old as 2026-01-22" in changed.note
    gap = (dt.date(2026, 7, 30) - dt.date(2026, 1, 22)).days
    assert f"gcp (2026-07-30 against 2026-01-22, {gap} days apart)" in appeared.note
    assert appeared.note == gone.note


def test_changes_match_the_views_within_the_age_limit(con):
    """Week 35: Runpod's 2026-08-25 API answer against its 2026-08-10 page, 15 days apart: one
    day over the default limit (nothing counted), within a limit of 15 (every change counted)."""
    gap = (dt.date(2026, 8, 25) - dt.date(2026, 8, 10)).days
    strict = build.build_report(con, "2026-W35", "EUR", (), max_age_days=gap - 1)
    assert strict.changes[0].rows == strict.changes[1].rows == strict.changes[2].rows == []
    assert f"runpod ({dt.date(2026, 8, 25)} against 2026-08-10, {gap} days apart)" in \
        strict.changes[1].note
    rep = build.build_report(con, "2026-W35", "EUR", (), max_age_days=gap)
    changes = rep.changes[0].rows
    week = "new_date BETWEEN DATE '2026-08-24' AND DATE '2026-08-30'"
    expected = con.execute(f"SELECT count(*) FROM price_changes WHERE {week} "  # noqa: S608
                           "AND gap_days <= ?", [gap]).fetchone()[0]
    assert len(changes) == expected > 0
    pcts = [abs(r["pct_change"]) for r in changes]
    assert pcts == sorted(pcts, reverse=True)
    assert {(r["provider"], r["old_date"]) for r in changes} == {("runpod", dt.date(2026, 8, 10))}
    # The one offer last seen on the 2023 page is a difference over three years: named, not
    # counted.
    (older,) = con.execute(f"SELECT count(*) FROM price_changes WHERE {week} "  # noqa: S608
                           "AND old_date = DATE '2023-09-29'").fetchone()
    assert older == 1
    assert "runpod 1 price differences, against prices as old as 2023-09-29" in \
        rep.changes[0].note
    new_ids = {r[0] for r in con.execute(
        "SELECT offer_id FROM offer_observations WHERE provider = 'runpod' "
        "AND snapshot_date = DATE '2026-08-25'").fetchall()}
    old_ids = {r[0] for r in con.execute(
        "SELECT offer_id FROM offer_observations WHERE provider = 'runpod' "
        "AND snapshot_date = DATE '2026-08-10'").fetchall()}
    # The 2026-08-25 answer is a trimmed recording (9 GPU types), marked partial: the offers
    # of 2026-08-10 it does not list were not read, not withdrawn. What it lists and the full
    # page of 2026-08-10 did not is new (appeared, or a new price of a listed machine).
    assert old_ids - new_ids
    assert rep.changes[2].rows == []
    added = rep.changes[1].rows + [r for r in rep.changes[3].rows
                                   if r["change"] == "new pricing"]
    assert len(added) == len(new_ids - old_ids) > 0
    assert not [r for r in rep.changes[3].rows if r["change"] == "pricing withdrawn"]
    assert "runpod 2026-08-25 (trimmed recording" in rep.changes[2].note


def test_trend_and_history(rep):
    weeks = sorted({r["week_end"] for r in rep.trend.rows})
    assert len(rep.trend_ends) == 12 and rep.trend_ends[-1] == dt.date(2026, 10, 4)
    assert set(weeks) <= set(rep.trend_ends)
    months = sorted({r["month"] for r in rep.history.rows})
    # The backfilled GCP series starts in January 2023.
    assert months[0] == dt.date(2023, 1, 1) and months[-1] == dt.date(2026, 9, 1)


def _add_hostile_offer(c, day: dt.date) -> None:
    meta = CaptureMeta(provider="runpod", url="https://www.runpod.io/pricing",
                       captured_at=dt.datetime.combine(day, dt.time(12), dt.UTC),
                       sha256="0" * 64)
    offers = [make_offer(meta, sku='<script>alert("x")</script>|H100', gpu_model="H100-SXM-80GB",
                         gpu_count=1, price_per_hour=0.01, pricing_model="on_demand",
                         currency="USD", extra={"gpu_wording": "<b>H100</b>"})]
    db.load_partition(c, day, "runpod", offers_to_table(offers))


def test_provider_text_is_escaped(settings, tmp_path):
    c = db.connect(":memory:")
    db.init_schema(c)
    c.execute(f"ATTACH '{settings.db_path}' AS src (READ_ONLY)")
    c.execute("INSERT INTO fx_rates SELECT * FROM src.fx_rates")
    _add_hostile_offer(c, dt.date(2026, 9, 29))
    html = render.write_report(c, tmp_path, "2026-W40", "EUR", load_workloads(WORKLOADS))
    text = html.read_text()
    assert "<script" not in text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;|H100" in text
    md = html.with_name("report.md").read_text()
    # Markdown escapes by backslash, never by HTML entity (reports/markdown_text.py): no raw
    # tag survives a CommonMark viewer, and the raw file reads as the SKU
    assert r'\<script>alert("x")\</script>\|H100' in md and "&lt;" not in md
    shown = MarkdownIt("commonmark").enable("table").render(md)
    assert "<script" not in shown and "&lt;script&gt;alert(" in shown


def test_files_written(settings):
    html = make_report(settings, None, "EUR", None)
    folder = html.parent
    assert folder == settings.reports_dir / "2026-W40"
    names = {p.name for p in folder.iterdir()}
    assert {"report.html", "report.md", "gpu_prices_now.csv", "data_health.csv",
            "price_changes_week.csv", "gpu_trend_12w.csv",
            "workload_qlora-llama3.1-70b_top.csv"} <= names
    assert not [n for n in names if n.endswith(".part")]
    with (folder / "data_health.csv").open() as fh:
        rows = {r["provider"]: r for r in csv.DictReader(fh)}
    assert rows["runpod"]["rows"] == "88"
    text = html.read_text()
    # Self-contained: no external script, stylesheet or image.
    assert not re.search(r"<script|<link|src=\"http|@import", text)
    md = (folder / "report.md").read_text()
    assert md.startswith("# GPU prices — week 2026-W40")
    assert "| GPU |" in md


def test_the_report_currency_is_the_commands_default(settings, monkeypatch):
    """The report and the command line share one default (flows/config.py): USD, or
    $GPUPRICES_CURRENCY; the report used to default to EUR and the commands to USD."""
    from gpuprices.flows.config import CURRENCY_ENV
    monkeypatch.delenv(CURRENCY_ENV, raising=False)
    md = make_report(settings, "2026-W40").with_name("report.md").read_text()
    assert "Prices in USD per hour" in md
    monkeypatch.setenv(CURRENCY_ENV, "EUR")
    md = make_report(settings, "2026-W40").with_name("report.md").read_text()
    assert "Prices in EUR per hour" in md


@pytest.mark.parametrize(("week", "currency", "env_currency"), [
    ("2026-W39", "usd", None),  # a currency code in any case
    ("2026-W40", "USD", "EUR"),  # --currency over $GPUPRICES_CURRENCY
])
def test_cli_report_command(settings, monkeypatch, week, currency, env_currency):
    from gpuprices.flows.config import CURRENCY_ENV
    if env_currency:
        monkeypatch.setenv(CURRENCY_ENV, env_currency)
    else:
        monkeypatch.delenv(CURRENCY_ENV, raising=False)
    app = typer.Typer()
    register(app)
    r = CliRunner().invoke(app, ["report", "--week", week, "--currency", currency,
                                 "--data-dir", str(settings.data_dir),
                                 "--archive", str(settings.archive_root)])
    assert r.exit_code == 0, r.output
    assert "221702 ECB rates" in r.output
    folder = settings.reports_dir / week
    assert (folder / "report.html").exists()
    assert "Prices in USD per hour" in (folder / "report.md").read_text()


def test_cli_report_refuses_a_bad_week_or_an_unknown_currency(settings):
    app = typer.Typer()
    register(app)
    bad = CliRunner().invoke(app, ["report", "--week", "39",
                                   "--data-dir", str(settings.data_dir)])
    assert bad.exit_code == 2
    nokey = CliRunner().invoke(app, ["report", "--currency", "XYZ",
                                     "--data-dir", str(settings.data_dir),
                                     "--archive", str(settings.archive_root)])
    assert nokey.exit_code == 2 and "no ECB rates for XYZ" in nokey.output


@needs_chromium
def test_chromium_renders_tables_and_charts(settings, tmp_path):
    html = make_report(settings, "2026-W40", "EUR", None)
    flags = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--no-first-run", "--disable-sync",
             "--disable-component-update", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(flags + ["--dump-dom", html.as_uri()], capture_output=True,
                         text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    out = dom.stdout
    n_workloads = len(load_workloads(WORKLOADS))
    # 3 tables per workload + prices now, spread, 4 change tables (the empty ones say
    # "None.") and data health.
    assert out.count("<table") >= 3 * n_workloads + 3
    assert out.count("<svg") == 2
    assert out.count("<polyline") >= 4
    assert "Where to rent this week" in out and "Data health" in out
    shot = tmp_path / "report.png"
    r = subprocess.run(flags + [f"--screenshot={shot}", "--window-size=1400,3000",
                                html.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1400, 3000)
    assert len(data) > 100_000  # a blank page of that size compresses to a few kB


def test_no_data_is_a_clear_error(tmp_path):
    c = db.connect(":memory:")
    db.init_schema(c)
    with pytest.raises(ValueError, match="no offers"):
        build.build_report(c)


def test_workload_summary_names_the_planned_layout():
    """The report's workload summary says how the job's GPUs divide the work."""
    from gpuprices.reports.workloads import _planned_layout
    by = {w.name: w for w in load_workloads(ROOT / "sizing/workloads.toml")}
    assert _planned_layout(by["cpt-llama3.1-70b-64gpu"]) == "TP8 x FSDP8 over 8 nodes"
    assert _planned_layout(by["full-llama3.1-8b-8gpu"]) == "FSDP8"
    assert _planned_layout(by["qlora-llama3.1-70b"]) == "1 GPU"


# --- the network of each recommended offer (docs/sizing.md, "Network") ---


def test_each_choice_shows_its_network(w41, w41_settings):
    rows = [r for r in w41.headline.rows if r.get("choice")]
    assert rows and all(r["network"] for r in rows)
    con = db.connect(w41_settings.db_path, read_only=True)
    try:
        for r in rows:  # the label is the view's, offer by offer
            (label,) = con.execute("SELECT net_label FROM offer_network WHERE provider = ? AND "
                                   "sku = ?", [r["provider"], r["sku"]]).fetchone()
            assert r["network"] == label
    finally:
        con.close()
    md = render.render_markdown(w41)
    head = md.split("## Where to rent this week", 1)[1].split("## Workloads", 1)[0]
    assert "| GPUs | network |" in head
    assert any(r["network"] in head for r in rows)


def test_multi_node_choices_name_their_fabric(w41):
    cpt = [r for r in w41.headline.rows if r["workload"] == "cpt-llama3.1-70b-64gpu"
           and r.get("choice")]
    assert cpt and all(r["nodes"] > 1 for r in cpt)
    for r in cpt:  # only clusters: a published RDMA fabric, no warning about the network
        assert any(f in r["network"] for f in ("InfiniBand", "RoCE", "EFA", "GPUDirect")), r
        assert not any("no fast fabric" in x or "publishes no fabric" in x
                       for x in r["reasons"]), r


def test_w41_a_committed_offer_dearer_than_on_demand_is_no_choice_and_says_so(w41):
    cells = {(r["workload"], r["choice_label"]): r for r in w41.headline.rows}
    for (name, label), r in cells.items():
        if label != "committed / reserved" or not r.get("choice"):
            continue
        assert r["cost_to_finish"] <= cells[(name, "on-demand (firm)")]["cost_to_finish"]
    # the 1-GPU QLoRA's best commitment is GCP's 24-hour-minimum reserved node: hundreds of times
    # the on-demand cost of a 2-hour run; the cell says so, not a price
    small = cells[("qlora-llama3.1-8b-15M", "committed / reserved")]
    assert small["offer"] == "none: no commitment pays for this run"
    assert small["reason"].startswith("no commitment pays for a run this size: the best "
                                      "committed offer (gcp a3-highgpu-8g) costs x")
