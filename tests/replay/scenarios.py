"""Fault nights shared by tests/test_live_replay*.py and bench/fault_probes/live_path.py: which
answer each URL gets, and what the crawler must then report."""

from __future__ import annotations

from gpuprices.spiders.providers.runpod.source import GRAPHQL_URL, PRICING_URL
from tests.replay.server import Fault

# Providers whose archived captures were made under other URLs than their plan asks for today,
# and why. Their live path is replayed as its error path only (every planned URL answers 404 and
# the crawl fails naming it); tests/test_live_replay.py fails for an entry whose plan matches
# again, to be removed.
# A one-second download timeout stands for the crawler's 60 s; the retry policy is its own.
TIMEOUT = {"DOWNLOAD_TIMEOUT": 1}
TRIES = 1 + 3  # the first try and RETRY_TIMES (spiders/crawl.py)
MANY = 99  # a fault that outlasts every retry
LAMBDA = "https://lambda.ai/pricing"
NEBIUS = "https://nebius.com/prices"
COREWEAVE = "https://www.coreweave.com/pricing"
CRUSOE = "https://www.crusoe.ai/cloud/pricing"
CUT_SHORT = ("ResponseDataLossError: the connection closed before the announced body length "
             "arrived (body cut short)")


def fault_night() -> dict[str, list[Fault]]:
    """Runpod meets a 429 with Retry-After twice and a body cut short once (both recover); the
    others meet a fault that outlasts the retries. Fresh Faults each time: they count down."""
    return {
        GRAPHQL_URL: [Fault("status", 429, retry_after=1, times=2)],
        PRICING_URL: [Fault("truncate", times=1)],
        CRUSOE: [Fault("status", 503, times=MANY)],
        LAMBDA: [Fault("hang", times=MANY)],
        NEBIUS: [Fault("slow", times=MANY, interval=0.4)],
        COREWEAVE: [Fault("truncate", times=MANY)],
    }


def timeout_error(url: str) -> str:
    return f"DownloadTimeoutError: Getting {url} took longer than 1.0 seconds."


# What each provider's crawl must report after fault_night(): its errors, exactly.
FAULT_NIGHT_ERRORS = {
    "runpod": [],
    "crusoe": [{"url": CRUSOE, "error": "HTTP 503"}],
    "lambda": [{"url": LAMBDA, "error": timeout_error(LAMBDA)}],
    "nebius": [{"url": NEBIUS, "error": timeout_error(NEBIUS)}],
    "coreweave": [{"url": COREWEAVE, "error": CUT_SHORT}],
}
