"""Nights that fail or stall on something outside the pipeline (docs/operations.md, "Nights
that fail or stall"): no name resolution. On the real Runpod captures."""

import pytest

from flows import pipeline
from flows.config import Settings
from flows.results import DayResult
from spiders.net_failures import unhealable
from tests.faults.kill import DAY
from tests.faults.nights import (
    NO_DNS_ENV,
)


@pytest.fixture
def settings(tmp_path, runpod_archive):
    return Settings(data_dir=tmp_path / "data", archive_root=runpod_archive).ensure()


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
