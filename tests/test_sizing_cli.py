"""`size` and `rank` through typer's CliRunner; rank reads a small DuckDB warehouse."""

import datetime as dt
import json
import re
from pathlib import Path

import pyarrow as pa
import pytest
import typer
from typer.testing import CliRunner

from gpuprices.flows.cli.sizing import app, register
from gpuprices.sizing.constraints import CONSTRAINT_VERDICTS
from gpuprices.sizing.fit import measured_margin
from gpuprices.sizing.workload import load_workloads
from gpuprices.warehouse import db
from gpuprices.warehouse.contract import OFFER_SCHEMA, CaptureMeta, make_offer

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "sizing/workloads.toml"
runner = CliRunner()
DAY = dt.date(2026, 10, 1)


def test_size_json_shape():
    res = runner.invoke(app, ["size", str(WORKLOADS), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert isinstance(data, list) and len(data) == 5
    for obj in data:
        for key in ("name", "gpu", "gpus", "per_gpu_gb", "breakdown", "fits", "tokens_per_s",
                    "hours"):
            assert key in obj
        assert obj["per_gpu_gb"] == pytest.approx(sum(obj["breakdown"].values()), abs=0.02)
        assert obj["tokens_per_s"] > 0 and obj["hours"] > 0
        assert obj["verdict"] in ("fits", "tight", "no")
        assert obj["fits"] is (obj["verdict"] != "no")
        assert obj["margin_source"] == "measured"
    by = {o["name"]: o for o in data}
    q70 = by["qlora-llama3.1-70b"]
    assert q70["gpu"] == "H100-SXM-80GB" and q70["gpus"] == 1 and q70["fits"] is True
    assert q70["verdict"] == "fits" and q70["required_gb"] <= q70["capacity_gb"]


def test_size_json_names_the_layout_and_the_switches_in_force():
    data = json.loads(runner.invoke(app, ["size", str(WORKLOADS), "--json"]).stdout)
    by = {o["name"]: o for o in data}
    cpt = by["cpt-llama3.1-70b-64gpu"]
    assert cpt["parallel"] == {"tensor_parallel": 8, "pipeline_parallel": 1,
                               "context_parallel": 1, "data_parallel": 8, "sharding": "fsdp",
                               "precision": "bf16-mixed", "gpus": 64,
                               "description": "TP8 x FSDP8 over 8 nodes"}
    # torchtune's defaults: its chunked loss in 8 chunks; nothing set by the workload
    assert cpt["switches"]["loss"] == "chunked" and cpt["switches"]["loss_chunks"] == 8
    assert cpt["switches"]["set_by_workload"] == []
    assert cpt["switches"]["defaults_from"] == "torchtune"
    assert by["full-llama3.1-8b-8gpu"]["parallel"]["description"] == "FSDP8"
    q70 = by["qlora-llama3.1-70b"]
    assert q70["parallel"]["description"] == "1 GPU" and q70["switches"]["paged_optimizer"]
    # the human-readable table names the layout too
    res = runner.invoke(app, ["size", str(WORKLOADS)])
    assert "TP8 x FSDP8 over 8 nodes" in res.stdout


LORA_32B = """
[[workload]]
name = "lora-32b-2k"
model = "Qwen2.5 32B"
method = "lora"
precision = "bf16-true"
framework = "hf"
optimizer = "adamw"
seq_len = 2048
micro_batch = 1
grad_checkpointing = true
lora_rank = 16
lora_targets = "all"
gpu = "H100-SXM-80GB"
gpus = 1
"""


def test_size_says_tight_for_32b_lora_on_80gb_and_fits_stays_true(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(LORA_32B)
    res = runner.invoke(app, ["size", str(path), "--json"])
    assert res.exit_code == 0, res.output
    (obj,) = json.loads(res.stdout)
    assert obj["verdict"] == "tight" and obj["fits"] is True
    assert obj["per_gpu_gb"] <= obj["capacity_gb"] < obj["required_gb"]
    assert "TIGHT" in runner.invoke(app, ["size", str(path)]).stdout
    # An explicit margin wins: 0 makes the same estimate a plain fit.
    path.write_text(LORA_32B + "margin = 0.0\n")
    (own,) = json.loads(runner.invoke(app, ["size", str(path), "--json"]).stdout)
    assert own["verdict"] == "fits" and own["margin_source"] == "workload"


def test_size_gpu_override_and_not_fitting():
    res = runner.invoke(app, ["size", str(WORKLOADS), "--gpu", "L4-24GB", "--gpus", "1",
                              "--json"])
    assert res.exit_code == 0, res.output
    by = {o["name"]: o for o in json.loads(res.stdout)}
    assert by["qlora-llama3.1-70b"]["fits"] is False
    assert by["qlora-llama3.1-70b"]["verdict"] == "no"
    assert all(o["gpu"] == "L4-24GB" for o in by.values())


def test_size_shows_no_speed_or_duration_under_does_not_fit_and_says_what_would(tmp_path):
    """Issue 24: `size` printed tokens/s and hours under DOES NOT FIT."""
    res = runner.invoke(app, ["size", str(WORKLOADS), "--gpu", "L4-24GB", "--gpus", "1"])
    assert res.exit_code == 0, res.output
    # one block per workload, from its title to the next
    blocks = re.split(r"\n(?= *[a-z0-9.-]+: \d+ x )", res.stdout)
    nofit = [b for b in blocks if "DOES NOT FIT" in " ".join(b.split("\n")[:2])]
    assert len(nofit) == len(blocks) == len(load_workloads(WORKLOADS))  # 24 GB: none fits
    for b in nofit:
        assert "tokens/s" not in b and "hours" not in b and "cannot start" in b
        assert "does not fit: " in b and "GB per GPU needed" in b and "would fit: " in b
    by = {o["name"]: o for o in json.loads(runner.invoke(
        app, ["size", str(WORKLOADS), "--gpu", "L4-24GB", "--gpus", "1", "--json"]).stdout)}
    q70 = by["qlora-llama3.1-70b"]
    assert q70["verdict"] == "no" and q70["tokens_per_s"] is None and q70["hours"] is None
    # QLoRA on one GPU does not shard: only a bigger card holds it, and that card does
    assert q70["would_fit"]["gpus"] is None and q70["would_fit"]["gpu"]
    bigger = json.loads(runner.invoke(app, ["size", str(WORKLOADS), "--gpu",
                                            q70["would_fit"]["gpu"], "--gpus", "1",
                                            "--json"]).stdout)
    assert {o["name"]: o for o in bigger}["qlora-llama3.1-70b"]["verdict"] == "fits"
    full = by["full-llama3.1-8b-8gpu"]  # sharded: more L4s hold it too
    assert full["would_fit"]["gpus"] and full["would_fit"]["gpus"] > 1
    more = json.loads(runner.invoke(app, ["size", str(WORKLOADS), "--gpu", "L4-24GB", "--gpus",
                                          str(full["would_fit"]["gpus"]), "--json"]).stdout)
    assert {o["name"]: o for o in more}["full-llama3.1-8b-8gpu"]["verdict"] == "fits"
    # a fitting workload keeps its figures
    fits = json.loads(runner.invoke(app, ["size", str(WORKLOADS), "--json"]).stdout)
    assert all(o["tokens_per_s"] and o["would_fit"] is None for o in fits if o["fits"])


def test_size_text_and_errors(tmp_path):
    res = runner.invoke(app, ["size", str(WORKLOADS)])
    assert res.exit_code == 0 and "FITS" in res.stdout
    assert runner.invoke(app, ["size", str(WORKLOADS), "--gpu", "H100"]).exit_code == 2
    bad = tmp_path / "bad.toml"
    bad.write_text('[[workload]]\nname = "x"\nmethod = "lora"\n')
    res = runner.invoke(app, ["size", str(bad)])
    assert res.exit_code == 2


def _warehouse(tmp_path: Path, fx: bool) -> Path:
    meta = CaptureMeta(provider="runpod", url="https://example.invalid/test",
                       captured_at=dt.datetime(2026, 10, 1, 12, tzinfo=dt.UTC))
    offers = [
        make_offer(meta, sku="H100 SXM", gpu_model="H100-SXM-80GB", gpu_count=1,
                   price_per_hour=2.69, pricing_model="on_demand", billing_increment_s=1),
        make_offer(meta, sku="H100 SXM spot", gpu_model="H100-SXM-80GB", gpu_count=1,
                   price_per_hour=1.50, pricing_model="spot", billing_increment_s=1),
        make_offer(meta, sku="8x H100", gpu_model="H100-SXM-80GB", gpu_count=8,
                   price_per_hour=21.52, pricing_model="on_demand", billing_increment_s=1),
        make_offer(meta, sku="L4", gpu_model="L4-24GB", gpu_count=1, price_per_hour=0.44,
                   pricing_model="on_demand", billing_increment_s=1),
    ]
    con = db.connect(tmp_path / "warehouse.duckdb")
    db.init_schema(con)
    table = pa.Table.from_pylist([o.as_row() for o in offers], schema=OFFER_SCHEMA)
    db.load_partition(con, DAY, "runpod", table)
    if fx:
        db.load_fx_rates(con, pa.table({"date": [DAY], "currency": ["USD"],
                                        "rate_per_eur": [1.16], "source": ["test"]}))
    con.close()
    return tmp_path


def _by_workload(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["workload"], []).append(r)
    return out


def test_rank_json_from_duckdb(tmp_path):
    data_dir = _warehouse(tmp_path, fx=False)
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--data-dir", str(data_dir), "--json",
                              "--top", "4"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {r["as_of"] for r in out} == {str(DAY)} and {r["currency"] for r in out} == {"USD"}
    rows = _by_workload(out)["qlora-llama3.1-70b"]
    assert len(rows) == 4
    assert rows[0]["verdict"] == "ok"
    ok = [r["cost_per_checkpoint"] for r in rows if r["verdict"] == "ok"]
    assert ok == sorted(ok)
    assert rows[-1]["sku"] == "L4" and rows[-1]["verdict"] == "no_fit"
    spot = next(r for r in rows if r["sku"] == "H100 SXM spot")
    assert any(x.startswith("spot risk: 15%/day per node (assumed: 15%/day, ")
               for x in spot["reasons"])
    assert spot["choice"] == "spot" and spot["snapshot_date"] == str(DAY)


def test_rank_eur_without_rates_says_so(tmp_path, monkeypatch):
    data_dir = _warehouse(tmp_path, fx=False)
    monkeypatch.setenv("GPUPRICES_HOME", str(data_dir))
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--currency", "EUR"])
    assert res.exit_code == 0, res.output
    assert "FX rates are missing" in res.stdout
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--currency", "EUR", "--json"])
    js = json.loads(res.stdout)
    assert "FX rates are missing for USD" in res.stderr
    assert all(r["verdict"] != "ok" for r in _by_workload(js)["qlora-llama3.1-70b"])


def test_rank_eur_with_rates(tmp_path):
    data_dir = _warehouse(tmp_path, fx=True)
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--currency", "EUR", "--json",
                              "--data-dir", str(data_dir), "--date", str(DAY)])
    assert "FX rates are missing" not in res.stderr
    top = _by_workload(json.loads(res.stdout))["qlora-llama3.1-70b"][0]
    assert top["currency"] == "EUR" and top["verdict"] == "ok"
    assert top["price_per_hour"] == pytest.approx(1.50 / 1.16)


def test_rank_keeps_a_provider_whose_last_crawl_failed(tmp_path):
    """As cheapest_now does: a provider without a snapshot of the newest day still competes with
    its latest one (offers_as_of), not only the providers read that day."""
    data_dir = _warehouse(tmp_path, fx=False)
    later = DAY + dt.timedelta(days=1)
    meta = CaptureMeta(provider="lambda", url="https://example.invalid/lambda",
                       captured_at=dt.datetime.combine(later, dt.time(3), tzinfo=dt.UTC))
    offer = make_offer(meta, sku="gpu_1x_a10", gpu_model="A10-24GB", gpu_count=1,
                       price_per_hour=0.75, pricing_model="on_demand")
    con = db.connect(data_dir / "warehouse.duckdb")
    db.load_partition(con, later, "lambda",
                      pa.Table.from_pylist([offer.as_row()], schema=OFFER_SCHEMA))
    con.close()
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--data-dir", str(data_dir), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {r["as_of"] for r in out} == {str(later)}
    assert {r["provider"] for r in out} == {"runpod", "lambda"}


def test_rank_errors(tmp_path):
    assert runner.invoke(app, ["rank", str(WORKLOADS), "--data-dir",
                               str(tmp_path)]).exit_code == 2  # no warehouse
    data_dir = _warehouse(tmp_path, fx=False)
    assert runner.invoke(app, ["rank", str(WORKLOADS), "--data-dir", str(data_dir),
                               "--date", "yesterday"]).exit_code == 2
    assert runner.invoke(app, ["rank", str(WORKLOADS), "--data-dir", str(data_dir),
                               "--currency", "GBP"]).exit_code == 2
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--data-dir", str(data_dir),
                              "--date", "2020-01-01"])
    assert res.exit_code == 2


def test_register_adds_both_commands():
    main = typer.Typer()

    @main.command()
    def other() -> None:
        pass

    register(main)
    res = runner.invoke(main, ["size", str(WORKLOADS), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)
    assert runner.invoke(main, ["rank", "--help"]).exit_code == 0


# --- on the real bundled snapshots (tests/conftest.py: w41_settings) ---

RANK_FIELDS = ("workload", "provider", "sku", "region", "gpu_model", "gpus_per_node", "nodes",
               "pricing_model", "firm", "snapshot_date", "age_days", "price_per_hour",
               "cost_to_finish", "cost_per_checkpoint", "expected_preemptions", "verdict",
               "reasons", "marginal_checkpoint_cost", "choice", "fit_verdict")


@pytest.fixture(scope="module")
def w41_rank(w41_settings):
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--date", "2026-10-11", "--json",
                              "--currency", "EUR", "--data-dir", str(w41_settings.data_dir)])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_rank_json_is_a_list_of_rows_with_every_field(w41_rank):
    assert isinstance(w41_rank, list) and w41_rank
    for row in w41_rank:
        assert set(RANK_FIELDS) <= set(row), set(RANK_FIELDS) - set(row)
        assert isinstance(row["reasons"], list) and all(isinstance(x, str) for x in row["reasons"])
        assert isinstance(row["firm"], bool)
        assert row["snapshot_date"] <= "2026-10-11" and row["age_days"] >= 0
        assert row["as_of"] == "2026-10-11" and row["currency"] == "EUR"
    names = {w.name for w in load_workloads(WORKLOADS)}
    assert {r["workload"] for r in w41_rank} == names
    # --top 10 (the default) per workload, plus the choices that rank lower
    for name in names:
        rows = [r for r in w41_rank if r["workload"] == name]
        assert 10 <= len(rows) <= 13


def test_rank_recommends_only_firm_prices(w41_rank):
    recommended = [r for r in w41_rank if r["verdict"] == "ok"]
    assert recommended and all(r["firm"] for r in recommended)
    assert not any("placeholder" in " ".join(r["reasons"]) or "'from' price" in
                   " ".join(r["reasons"]) for r in recommended)
    for r in w41_rank:
        if r["choice"]:
            assert r["verdict"] == "ok" and r["firm"] and not r["stale"]
        if not r["firm"]:
            assert r["verdict"] in ("not_firm", "stale") and r["choice"] is None


def test_rank_gives_three_choices_per_workload_and_they_differ(w41_rank):
    picks = {}
    for r in w41_rank:
        if r["choice"]:
            picks.setdefault(r["workload"], {})[r["choice"]] = r
    assert len(picks) == len(load_workloads(WORKLOADS))
    # a committed choice only where it pays for the run (sizing/commitment_pays.py); else a row
    # of the workload says which term would pay
    noted = {r["workload"] for r in w41_rank if r["choice_note"]}
    for name, by in picks.items():
        assert set(by) == {"on_demand", "spot"} | ({"committed"} if name not in noted
                                                   else set()), name
        assert by["on_demand"]["pricing_model"] in ("on_demand", "community")
        assert by["spot"]["pricing_model"] == "spot"
        if "committed" in by:
            assert by["committed"]["pricing_model"] in ("reserved", "committed")
        assert len({(r["provider"], r["sku"], r["region"]) for r in by.values()}) == len(by)
    # Not the same offer for every workload (the old headline said Azure MI300X spot 5 times).
    assert len({(p["spot"]["sku"], p["spot"]["gpus"]) for p in picks.values()}) > 1
    assert len({p["on_demand"]["sku"] for p in picks.values()}) > 1


def test_rank_spot_preemptions_grow_with_nodes_and_say_where_the_rate_comes_from(w41_rank):
    spot = [r for r in w41_rank if r["pricing_model"] == "spot" and r["verdict"] == "ok"]
    by_nodes: dict[int, list[float]] = {}
    for r in spot:
        per_hour = r["inputs"]["preemptions_per_hour"]
        assert per_hour == pytest.approx(r["nodes"] * r["inputs"]["preemptions_per_node_hour"])
        by_nodes.setdefault(r["nodes"], []).append(r["expected_preemptions"] / r["hours"])
        text = " ".join(r["reasons"])
        assert ("assumed: 15%/day" in text) or ("AWS Spot Instance Advisor" in text)
    assert len(by_nodes) >= 2
    # per hour of run, a job on more nodes expects more preemptions
    rates = [max(by_nodes[n]) for n in sorted(by_nodes)]
    assert rates == sorted(rates) and rates[-1] > rates[0]
    big = next(r for r in spot if r["workload"] == "cpt-llama3.1-70b-64gpu" and r["choice"])
    assert big["nodes"] == 8 and big["expected_preemptions"] > 1


def test_rank_never_uses_more_gpus_than_max_gpus(w41_rank):
    caps = {w.name: w.gpu_cap for w in load_workloads(WORKLOADS)}
    for r in w41_rank:
        if r["verdict"] == "ok":
            assert r["gpus"] <= caps[r["workload"]], r
            if r["gpus"] < r["gpus_per_node"] * r["nodes"]:
                assert any("priced whole for a" in x for x in r["reasons"])
    # A 1-GPU workload on an 8-GPU node: the node is paid whole and the job uses one GPU.
    whole = [r for r in w41_rank if r["workload"] == "qlora-llama3.1-8b-15M"
             and r["gpus_per_node"] == 8 and r["verdict"] == "ok"]
    assert whole and all(r["gpus"] == 1 for r in whole)
    assert any("8-GPU node priced whole for a 1-GPU job" in x for x in whole[0]["reasons"])


def _plain_rank(w41_settings, *extra: str) -> str:
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--date", "2026-10-11", "--currency",
                              "EUR", "--data-dir", str(w41_settings.data_dir), *extra])
    assert res.exit_code == 0, res.output
    return res.stdout


TABLE_ROW = re.compile(r"^ *(\d+) {2,}\S")


def test_plain_rank_is_one_compact_table_per_workload(w41_settings):
    """Plain `rank`: the one line per workload, then per workload one table of one line per
    offer that may be chosen (the --top cheapest and each choice), no reasons, and one line
    per kind of offer set apart (issue 24: it printed ~1,400 lines for these workloads)."""
    out = _plain_rank(w41_settings)
    lines = out.splitlines()
    names = [w.name for w in load_workloads(WORKLOADS)]
    heads = [line.split(":")[0] for line in lines if ": rent " in line]
    assert heads == names  # the one line per workload, above the tables
    assert len(lines) < 40 * len(names), len(lines)
    for name in names:
        assert out.count(f"{name}: ranked by cost per successful checkpoint") == 1
    # the rows: the ok rows of --json (same --top), ranked 1..10 plus each choice ranked lower
    rows = json.loads(_plain_rank(w41_settings, "--json"))
    numbers = [int(m.group(1)) for m in map(TABLE_ROW.match, lines) if m]
    for name in names:
        ok = [r for r in rows if r["workload"] == name and r["verdict"] == "ok"]
        assert {r["choice"] for r in ok if r["choice"]} >= {"on_demand", "spot"}
    # (a committed row set aside because it does not pay is not a choice: the "committed:"
    # line says which term would)
    expected = sum(len([i for i, r in enumerate(
        (r for r in rows if r["workload"] == n and r["verdict"] == "ok"), 1)
        if i <= 10 or r["choice"]]) for n in names)
    assert len(numbers) == expected and numbers.count(1) == len(names)
    assert "on-demand pick" in out and "spot pick" in out
    # no reasons in plain mode: they are --why's
    for reason in ("headroom", "spot risk:", "community cloud (third-party", "rework"):
        assert reason not in out, reason
    # the 64-GPU job's separate pods: one summary line, not a table of them
    apart = [line for line in lines if line.startswith("  set apart, not a cluster")]
    assert len(apart) == 1 and "cheapest: 8×8" in apart[0]
    assert "--why" in lines[-1]
    # nothing left to choose: one sentence, not an empty table
    tight = _plain_rank(w41_settings, "--deadline", "3d", "--region", "eu")
    assert "cpt-llama3.1-70b-64gpu: no offer may be chosen" in tight
    assert "  set apart, misses the deadline: " in tight


def test_rank_why_gives_each_rows_reasons_dates_and_every_offer_set_apart(w41_settings):
    plain, why = _plain_rank(w41_settings), _plain_rank(w41_settings, "--why")
    assert len(why.splitlines()) > 3 * len(plain.splitlines())
    assert "spot risk:" in why and "fits with" in why and "headroom" in why
    assert "snapshot 2026-" in why and "(12 d)" in why
    # every offer set apart is listed with its reason
    assert "not a cluster: 8 separate machines" in why
    rows = json.loads(_plain_rank(w41_settings, "--json", "--set-apart"))
    cluster = [r for r in rows if r["verdict"] == "not_cluster"]
    assert cluster and all(f"at {r['provider']} {r['sku']}" in why for r in cluster)


def test_rank_json_holds_no_stale_or_not_firm_row_unless_asked(w41_settings):
    """Even with every offer ranked (--top 1000), a plain --json lists nothing stale and no
    placeholder or "from" price; --set-apart adds them, labelled by their verdict."""
    args = ["rank", str(WORKLOADS), "--date", "2026-10-11", "--json", "--top", "1000",
            "--data-dir", str(w41_settings.data_dir)]
    plain = json.loads(runner.invoke(app, args).stdout)
    assert plain and all(r["firm"] and not r["stale"] for r in plain)
    assert all(r["age_days"] <= 14 for r in plain)
    full = json.loads(runner.invoke(app, [*args, "--set-apart"]).stdout)
    apart = [r for r in full if r["stale"] or not r["firm"]
             or r["verdict"] in CONSTRAINT_VERDICTS]
    assert {r["verdict"] for r in apart} >= {"stale", "not_firm"}
    # The bundled W41 day has Runpod's flagged placeholders and Nebius' "from" floors.
    assert {r["provider"] for r in apart if not r["firm"]} >= {"runpod", "nebius"}
    assert len(full) == len(plain) + len(apart)


def test_a_calendar_reservation_is_paid_by_the_day(w41_rank):
    """GCP's calendar-mode prices are hourly but booked in whole days: the best committed offer
    on one costs at least a day per node, and says so (and so is not the committed choice for
    these short runs: its choice_note says so)."""
    cal = [r for r in w41_rank if (r["choice"] == "committed" or r["choice_note"])
           and r["provider"] == "gcp" and r["pricing_model"] == "reserved"]
    assert cal
    for r in cal:
        assert any("at least 24 h" in x for x in r["reasons"]), r["reasons"]
        assert r["cost_to_finish"] >= 24 * r["price_per_hour"] * r["nodes"]


def test_rank_keeps_tight_offers_flagged_on_the_w41_day(w41_settings, tmp_path):
    """The 32B LoRA of issue 13 on the real bundled W41 offers: the 80 GB cards are ranked
    (verdict ok, fit_verdict tight, the risk in the reasons); a headline choice is a `fits` row
    whenever one of its kind exists (docs/sizing.md, "Fit verdicts")."""
    path = tmp_path / "w.toml"
    path.write_text(LORA_32B)
    res = runner.invoke(app, ["rank", str(path), "--date", "2026-10-11", "--json", "--top",
                              "1000", "--data-dir", str(w41_settings.data_dir)])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    margin = measured_margin().margin
    ok = [r for r in rows if r["verdict"] == "ok"]
    tight = [r for r in ok if r["fit_verdict"] == "tight"]
    assert {r["gpu_model"] for r in tight} >= {"H100-SXM-80GB", "A100-SXM-80GB"}
    for r in tight:
        assert r["fits"] is True and r["per_gpu_gb"] <= r["capacity_gb"]
        assert r["reasons"][0].startswith(f"tight: estimate {r['per_gpu_gb']:.1f} GB of "
                                          f"{r['capacity_gb']:g} GB, within the estimator's "
                                          f"error margin {margin:.1%}")
    fits = [r for r in ok if r["fit_verdict"] == "fits"]
    assert fits and all(r["capacity_gb"] >= r["per_gpu_gb"] * (1 + margin) - 0.01
                        for r in fits)
    # Ranked by cost with their flag: some tight row is cheaper than the cheapest fitting one.
    assert min(r["cost_per_checkpoint"] for r in tight) < min(
        r["cost_per_checkpoint"] for r in fits)
    for r in rows:
        if r["choice"]:
            kind = [o for o in fits if o["pricing_model"] == r["pricing_model"]]
            assert r["fit_verdict"] == "fits" or not kind, r
    assert all(r["fit_verdict"] == "no" for r in rows if r["verdict"] == "no_fit")
