"""The team mode's deployments as built (no server: tests/test_team_workers.py runs them on a
real one), and what `gpuprices worker` says without a server."""

import datetime as dt
import importlib
import subprocess

import pytest
from typer.testing import CliRunner

from gpuprices.flows.cli.main import app
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.flows.team import steps as team_steps
from gpuprices.warehouse.contract import PROVIDERS


@pytest.fixture
def team_deploy(tmp_path_factory, monkeypatch):
    # Prefect reads its home on import: never the user's ~/.prefect from a test.
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path_factory.mktemp("prefect")))
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    monkeypatch.setenv("DO_NOT_TRACK", "1")
    return importlib.import_module("gpuprices.flows.team.deploy")


def test_one_crawl_deployment_per_provider_and_one_load(team_deploy):
    deps = team_deploy.build_deployments(list(PROVIDERS), "pool-x")
    crawls, (load,) = deps[:-1], deps[-1:]
    assert [d.name for d in crawls] == list(PROVIDERS)
    for d, provider in zip(crawls, PROVIDERS, strict=True):
        assert (d.flow_name, d.entrypoint) == ("gpuprices-crawl",
                                               "gpuprices.flows.team.flows.crawl_provider")
        assert d.parameters == {"provider": provider, "data_dir": "", "archive_root": "",
                                "replay": ""}
        assert (d.work_pool_name, d.work_queue_name) == ("pool-x", "crawl")
        # Marketplaces and spot feeds every hour, list prices nightly (registry cadence).
        hourly = provider in ("vast", "hyperbolic", "lium", "gpuai", "azure")
        assert d.schedules[0].schedule.cron == ("0 * * * *" if hourly else "0 2 * * *")
    assert (load.flow_name, load.entrypoint) == ("gpuprices-load",
                                                 "gpuprices.flows.team.flows.load_lake")
    assert (load.work_queue_name, load.parameters) == ("load", {"data_dir": "",
                                                                "archive_root": ""})
    assert load.schedules[0].schedule.cron == "30 * * * *"
    for d in deps:
        assert d.concurrency_limit == 1
        assert d._path is None and d.storage is None  # the installed package is the code
        assert d.job_variables == {}


def test_an_image_for_container_pools(team_deploy):
    (crawl, load) = team_deploy.build_deployments(["runpod"], "k8s", image="reg/gpuprices:1")
    assert crawl.job_variables == load.job_variables == {"image": "reg/gpuprices:1"}


def test_a_deployment_version_changes_with_what_registering_it_sends(team_deploy):
    """A worker skips the deployments the server holds at their version: the version must
    change with anything a registration would change, and only then."""
    from gpuprices import __version__

    def version(**kw):
        (crawl, load) = team_deploy.build_deployments(["runpod"], **{"pool": "p", **kw})
        return crawl.version, load.version

    first = version()
    assert first == version()  # the same spec built again
    assert first[0] != first[1] and all(v.startswith(f"{__version__}+") for v in first)
    for changed in (version(pool="q"), version(image="reg/gpuprices:2"),
                    version(crawl_cron="0 3 * * *", load_cron="45 * * * *")):
        assert changed[0] != first[0] and changed[1] != first[1], changed
    assert version(crawl_cron="0 3 * * *")[1] == first[1]  # the load's own spec is unchanged
    (crawl, _) = team_deploy.build_deployments(["runpod"], "p")
    crawl.parameters["replay"] = "all"
    assert team_deploy.spec_version(crawl) != first[0]


def test_the_version_sent_is_ours_inside_a_git_checkout(team_deploy, tmp_path, monkeypatch):
    """A worker started in a clone (a git checkout with a remote): Prefect would infer the
    deployment's version from the commit and send that instead of spec_version, and the next
    worker would find every deployment at another version."""
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.test", *args],
                       cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("remote", "add", "origin", "https://example.test/team/gpuprices.git")
    git("commit", "-q", "--allow-empty", "-m", "a commit")
    monkeypatch.chdir(tmp_path)
    for d in team_deploy.build_deployments(["runpod"], "p"):
        # What apply() sends as the deployment's version.
        assert d._get_deployment_version_info(d.version_type).version == \
            team_deploy.spec_version(d) == d.version


def test_a_pool_type_with_no_worker_installed_is_named(team_deploy):
    with pytest.raises(team_deploy.SetupError, match="no Prefect worker for pools of type "
                                                     "'nomad'"):
        team_deploy.worker_class("nomad")


def test_a_crawl_fails_when_a_day_wrote_nothing():
    ok = DayResult("runpod", dt.date(2026, 9, 29), rows=88)
    bad = DayResult("lambda", None, status="failed", errors=["lambda: no archived snapshot"])
    assert team_steps.crawl_failure([ok]) is None
    assert team_steps.crawl_failure([ok, bad]) == "lambda: no archived snapshot"
    assert team_steps.crawl_lines([ok]) == ["runpod 2026-09-29: ok, 88 rows"]


def test_worker_without_a_server_says_how_to_set_one(monkeypatch, tmp_path):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    r = CliRunner().invoke(app, ["worker", "--pool", "p", "--data-dir", str(tmp_path)])
    assert r.exit_code == 2
    assert "set PREFECT_API_URL" in r.output
