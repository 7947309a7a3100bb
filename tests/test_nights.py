"""Nights that fail or stall on something outside the pipeline (docs/operations.md, "Nights
that fail or stall"): a webhook that trickles bytes, no name resolution. On the real Runpod
captures; the webhook is a loopback server."""

import fcntl
import re

import pytest

from flows import alerts, pipeline
from flows.config import Settings
from flows.results import DayResult
from spiders.net_failures import unhealable
from tests.faults.kill import DAY
from tests.faults.nights import (
    NO_DNS_ENV,
    trickling_webhook,
)
from tests.test_cli import gp


@pytest.fixture
def settings(tmp_path, runpod_archive):
    return Settings(data_dir=tmp_path / "data", archive_root=runpod_archive).ensure()


# ---------------------------------------------------------------------------------------------
# 7. A webhook that trickles bytes

def test_a_trickling_webhook_costs_one_deadline_and_is_hung_up_on():
    # One byte every 0.5 s: a per-read timeout of 1.5 s never fires (the answer takes ~35 s).
    with trickling_webhook(gap_s=0.5, body_bytes=0) as (url, hung_up):
        problem = alerts.post_webhook(url, {"text": "x"}, timeout=1.5)
        assert problem == "webhook post abandoned: no complete answer within the 1.5 s deadline"
        assert hung_up.wait(10)  # the socket was shut, nothing lingers


def test_a_run_alerting_a_trickling_webhook_ends_and_frees_its_lock(tmp_path, runpod_archive):
    data = tmp_path / "data"
    with trickling_webhook(gap_s=5) as (url, hung_up):
        # A date with no capture: a failure to alert on.
        r = gp("crawl", "--replay", "2026-10-01", "-p", "runpod", "--data-dir", data,
               "--archive", runpod_archive,
               env={"GPUPRICES_WEBHOOK_URL": url, "GPUPRICES_WEBHOOK_TIMEOUT_S": "2"})
        assert hung_up.is_set()
    assert r.returncode == 1
    assert ("alert not delivered: webhook post abandoned: no complete answer within the 2 s "
            "deadline") in r.stderr
    summary = re.search(r"run summary: (\S+)", r.stdout).group(1)
    assert "Webhook: NOT delivered (webhook post abandoned" in open(summary).read()
    with (data / "nightly.lock").open("a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: raises if anyone still holds it


# ---------------------------------------------------------------------------------------------
# 10. No network

# What a crawl reported (its summary's errors) with no DNS and no route: Scrapy 2.19 on Twisted
# 26.10 (the first two captured here, offline), Twisted's NoRouteError text for ENETUNREACH.
NO_NAME = ["runpod: https://api.runpod.io/graphql: CannotResolveHostError: DNS lookup failed: "
           "address 'proxy.invalid' not found: [Errno -2] Name or service not known.",
           "lambda: https://lambda.ai/pricing: CannotResolveHostError: DNS lookup failed: "
           "no results for hostname lookup: lambda.ai."]
NO_ROUTE = ["aws: https://pricing.us-east-1.amazonaws.com/x: NoRouteError: No route to host."]
CAN_HEAL = ["runpod: https://api.runpod.io/graphql: DownloadConnectionRefusedError: "
            "Connection was refused by other side: 111: Connection refused.",
            "runpod: https://api.runpod.io/graphql: HTTP 503"]


def test_failures_that_cannot_heal_in_minutes_are_told_apart():
    assert unhealable(NO_NAME) == "no name resolution"
    assert unhealable(NO_ROUTE) == "no route to the host"
    assert unhealable(NO_NAME + NO_ROUTE) == "no name resolution and no route to the host"
    assert unhealable(NO_NAME + CAN_HEAL[:1]) is None
    assert unhealable(CAN_HEAL) is None and unhealable([]) is None


def test_no_name_resolution_fails_fast_instead_of_waiting_for_the_backoff(settings,
                                                                          monkeypatch):
    for k, v in NO_DNS_ENV.items():
        monkeypatch.setenv(k, v)
    slept = []
    res = pipeline.live_day_with_backoff(settings, "runpod", [60, 300], sleep=slept.append)
    assert slept == [] and res.status == "failed"
    assert "DNS lookup failed" in res.errors[0]
    assert res.errors[-1] == "runpod: not retried: no name resolution does not heal in minutes"


def test_a_refused_connection_keeps_its_retries(settings, monkeypatch):
    outcomes = [DayResult("runpod", None, status="failed", errors=CAN_HEAL[:1]),
                DayResult("runpod", DAY, rows=61)]
    monkeypatch.setattr(pipeline, "live_day", lambda s, p: outcomes.pop(0))
    slept = []
    res = pipeline.live_day_with_backoff(settings, "runpod", [60, 300], sleep=slept.append)
    assert (res.status, slept) == ("ok", [60])
