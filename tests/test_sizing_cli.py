"""`size` and `rank` through typer's CliRunner; rank reads a small DuckDB warehouse."""

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest
import typer
from typer.testing import CliRunner

from flows.sizing_cli import app, register
from warehouse import db
from warehouse.contract import OFFER_SCHEMA, CaptureMeta, make_offer

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
    by = {o["name"]: o for o in data}
    q70 = by["qlora-llama3.1-70b"]
    assert q70["gpu"] == "H100-SXM-80GB" and q70["gpus"] == 1 and q70["fits"] is True


def test_size_gpu_override_and_not_fitting():
    res = runner.invoke(app, ["size", str(WORKLOADS), "--gpu", "L4-24GB", "--gpus", "1",
                              "--json"])
    assert res.exit_code == 0, res.output
    by = {o["name"]: o for o in json.loads(res.stdout)}
    assert by["qlora-llama3.1-70b"]["fits"] is False
    assert all(o["gpu"] == "L4-24GB" for o in by.values())


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


def test_rank_json_from_duckdb(tmp_path):
    data_dir = _warehouse(tmp_path, fx=False)
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--data-dir", str(data_dir), "--json",
                              "--top", "4"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["date"] == str(DAY) and out["currency"] == "USD"
    rows = out["workloads"]["qlora-llama3.1-70b"]
    assert len(rows) == 4
    assert rows[0]["verdict"] == "ok"
    ok = [r["cost_per_checkpoint"] for r in rows if r["verdict"] == "ok"]
    assert ok == sorted(ok)
    assert rows[-1]["sku"] == "L4" and rows[-1]["verdict"] == "no_fit"
    spot = next(r for r in rows if r["sku"] == "H100 SXM spot")
    assert "default band" in spot["reason"]


def test_rank_eur_without_rates_says_so(tmp_path, monkeypatch):
    data_dir = _warehouse(tmp_path, fx=False)
    monkeypatch.setenv("GPUPRICES_HOME", str(data_dir))
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--currency", "EUR"])
    assert res.exit_code == 0, res.output
    assert "FX rates are missing" in res.stdout
    js = json.loads(runner.invoke(app, ["rank", str(WORKLOADS), "--currency", "EUR",
                                        "--json"]).stdout)
    assert js["fx_missing"] == ["USD"]
    assert all(r["verdict"] != "ok" for r in js["workloads"]["qlora-llama3.1-70b"])


def test_rank_eur_with_rates(tmp_path):
    data_dir = _warehouse(tmp_path, fx=True)
    res = runner.invoke(app, ["rank", str(WORKLOADS), "--currency", "EUR", "--json",
                              "--data-dir", str(data_dir), "--date", str(DAY)])
    out = json.loads(res.stdout)
    assert out["fx_missing"] == []
    top = out["workloads"]["qlora-llama3.1-70b"][0]
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
    assert out["date"] == str(later)
    providers = {r["provider"] for rows in out["workloads"].values() for r in rows}
    assert providers == {"runpod", "lambda"}


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
