"""One default currency for every command that prices and for the report (issue 24): --currency,
else $GPUPRICES_CURRENCY, else USD (flows/config.py). rank runs the real CLI on the bundled W41
snapshots (tests/conftest.py: w41_settings)."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuprices.flows.cli.sizing import app
from gpuprices.flows.config import CURRENCY_ENV, default_currency

WORKLOADS = Path(__file__).resolve().parents[1] / "sizing/workloads.toml"
runner = CliRunner()


def test_the_option_wins_then_the_environment_then_usd(monkeypatch):
    monkeypatch.delenv(CURRENCY_ENV, raising=False)
    assert default_currency() == "USD"
    monkeypatch.setenv(CURRENCY_ENV, " eur ")
    assert default_currency() == "EUR" and default_currency("usd") == "USD"
    monkeypatch.setenv(CURRENCY_ENV, "euro")
    with pytest.raises(ValueError, match=r"\$GPUPRICES_CURRENCY='euro' is not a currency code"):
        default_currency()
    with pytest.raises(ValueError, match="--currency='1'"):
        default_currency("1")


def _rank(w41_settings, *extra: str):
    return runner.invoke(app, ["rank", str(WORKLOADS), "--date", "2026-10-11", "--top", "1",
                               "--data-dir", str(w41_settings.data_dir), *extra])


def test_rank_follows_the_environment_and_the_option_overrides_it(w41_settings, monkeypatch):
    monkeypatch.delenv(CURRENCY_ENV, raising=False)
    res = _rank(w41_settings, "--json")
    assert res.exit_code == 0, res.output
    assert {r["currency"] for r in json.loads(res.stdout)} == {"USD"}
    monkeypatch.setenv(CURRENCY_ENV, "EUR")
    res = _rank(w41_settings, "--json")
    assert {r["currency"] for r in json.loads(res.stdout)} == {"EUR"}
    plain = _rank(w41_settings)
    assert "currency EUR" in plain.stdout and "cost EUR" in plain.stdout
    res = _rank(w41_settings, "--json", "--currency", "usd")
    assert {r["currency"] for r in json.loads(res.stdout)} == {"USD"}
    monkeypatch.setenv(CURRENCY_ENV, "GBP")  # a currency the sizing engine does not price in
    bad = _rank(w41_settings)
    assert bad.exit_code == 2 and "currency must be USD or EUR, got GBP" in bad.output
