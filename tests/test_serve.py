"""`gpuprices serve`: the two deployments are built with the right schedules, parameters and
one-run-at-a-time limits. Nothing is served (that would run forever)."""

import importlib

import pytest
from typer.testing import CliRunner

from gpuprices.flows.cli.main import app
from gpuprices.flows.config import Settings


@pytest.fixture
def serve_module(tmp_path_factory, monkeypatch):
    # Prefect reads its home on import: never the user's ~/.prefect from a test.
    home = tmp_path_factory.mktemp("prefect")
    monkeypatch.setenv("PREFECT_HOME", str(home))
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    monkeypatch.setenv("DO_NOT_TRACK", "1")
    return importlib.import_module("gpuprices.flows.serve")


def _schedule(dep):
    (sched,) = dep.schedules
    return sched.schedule.cron, sched.schedule.timezone, sched.active


def test_default_deployments(serve_module, tmp_path, monkeypatch):
    from prefect.client.schemas.objects import ConcurrencyLimitStrategy

    from gpuprices.flows.config import CURRENCY_ENV
    monkeypatch.delenv(CURRENCY_ENV, raising=False)

    s = Settings(tmp_path / "data", tmp_path / "snapshots")
    nightly, weekly = serve_module.build_deployments(s)
    assert (nightly.name, nightly.flow_name) == ("nightly", "gpuprices-scheduled-nightly")
    assert (weekly.name, weekly.flow_name) == ("weekly", "gpuprices-scheduled-weekly")
    assert _schedule(nightly) == ("0 2 * * *", "UTC", True)
    assert _schedule(weekly) == ("0 6 * * 1", "UTC", True)
    for dep in (nightly, weekly):
        assert dep.concurrency_limit == 1
        assert dep.concurrency_options.collision_strategy == ConcurrencyLimitStrategy.CANCEL_NEW
        assert dep.parameters["data_dir"] == str(s.data_dir)
        assert dep.parameters["archive_root"] == str(s.archive_root)
        assert dep.work_pool_name is None  # served from this process
    assert weekly.parameters["currency"] == "USD"  # the one default (flows/config.py)
    monkeypatch.setenv(CURRENCY_ENV, "EUR")
    assert serve_module.build_deployments(s)[1].parameters["currency"] == "EUR"
    assert weekly.parameters["workloads_file"] is None
    assert nightly.entrypoint.endswith("flows/serve.py:scheduled_nightly")


def test_custom_schedules_and_pool(serve_module, tmp_path):
    s = Settings(tmp_path / "data", tmp_path / "snapshots")
    nightly, weekly = serve_module.build_deployments(
        s, nightly_cron="30 3 * * *", weekly_cron="0 7 * * 2", currency="USD",
        workloads=tmp_path / "w.toml", work_pool_name="gpu-pool")
    assert _schedule(nightly)[0] == "30 3 * * *"
    assert _schedule(weekly)[0] == "0 7 * * 2"
    assert weekly.parameters["currency"] == "USD"
    assert weekly.parameters["workloads_file"] == str(tmp_path / "w.toml")
    assert nightly.work_pool_name == weekly.work_pool_name == "gpu-pool"


def test_serve_command_builds_and_serves(serve_module, tmp_path, monkeypatch):
    served = []
    monkeypatch.setattr(serve_module, "serve_deployments",
                        lambda deps, printer: served.append(deps))
    # A configured server: nothing is started (tests/test_service_stop.py starts real ones).
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    r = CliRunner().invoke(app, ["serve", "--nightly-cron", "15 1 * * *",
                                 "--data-dir", str(tmp_path / "data"),
                                 "--archive", str(tmp_path / "snapshots")])
    assert r.exit_code == 0, r.output
    (deps,) = served
    assert [d.name for d in deps] == ["nightly", "weekly"]
    assert _schedule(deps[0])[0] == "15 1 * * *"
    assert _schedule(deps[1])[0] == "0 6 * * 1"
    assert "serving nightly, weekly" in r.output


def test_serve_describes_each_deployment(serve_module, tmp_path):
    s = Settings(tmp_path / "data", tmp_path / "snapshots")
    lines = serve_module.describe(serve_module.build_deployments(s))
    assert lines == [
        "  gpuprices-scheduled-nightly/nightly: cron '0 2 * * *' UTC; runs in this process",
        "  gpuprices-scheduled-weekly/weekly: cron '0 6 * * 1' UTC; runs in this process"]
