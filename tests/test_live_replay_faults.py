"""The live path, offline, with faults: real fetch plans against the replay server while it
answers 429 (with Retry-After), 503, nothing at all, a body trickled past the timeout, or a body
cut short. The crawler retries as docs/operations.md says (RETRY_TIMES 3 on 429/5xx, timeouts
and cut bodies), then fails naming the provider's URL, keeps every raw answer it got, and the
other providers' nights are unaffected."""

from __future__ import annotations

import gzip
import json

import pytest

from gpuprices.spiders.archive import latest_per_request, list_archives
from gpuprices.spiders.providers.gcp.source import SKUS
from gpuprices.spiders.providers.runpod.source import GRAPHQL_URL, PRICING_URL
from tests.replay.drive import (
    REPLAY_GROUP,
    comparable,
    day_offers,
    once,
    replay_night,
    shared_archive,
)
from tests.replay.pagers import AZURE_PRICES, azure_pages
from tests.replay.scenarios import (
    COREWEAVE,
    CRUSOE,
    CUT_SHORT,
    FAULT_NIGHT_ERRORS,
    LAMBDA,
    NEBIUS,
    TIMEOUT,
    TRIES,
    fault_night,
    timeout_error,
)

pytestmark = REPLAY_GROUP


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return shared_archive(tmp_path_factory)


@pytest.fixture(scope="module")
def night(archive, tmp_path_factory):
    return once(tmp_path_factory, "replay-fault-night", lambda d: replay_night(
        archive, d, list(FAULT_NIGHT_ERRORS), faults=fault_night(), **TIMEOUT))


KEY = "replay-secret-KEY-0123"


@pytest.fixture(scope="module")
def paged_night(archive, tmp_path_factory):
    """GCP with GOOGLE_CLOUD_API_KEY and Azure served 30 items a page, in one crawl (one Scrapy
    start-up; neither plan reads what the other's test sets)."""
    return once(tmp_path_factory, "replay-gcp-key-azure-pages-night", lambda d: replay_night(
        archive, d, ["gcp", "azure"], env={"GOOGLE_CLOUD_API_KEY": KEY},
        pagers={AZURE_PRICES: azure_pages(30)}))


def _tries(night, url: str) -> list[str]:
    return [s.match for s in night.seen if s.url == url]


def test_429_with_retry_after_is_retried_and_the_answer_kept(night):
    assert _tries(night, GRAPHQL_URL) == ["fault:status", "fault:status", "exact"]
    assert night.crawls["runpod"].summary["errors"] == []


def test_a_body_cut_short_once_is_fetched_again(night):
    assert _tries(night, PRICING_URL) == ["fault:truncate", "exact"]


def test_each_provider_reports_exactly_its_own_faults(night):
    for provider, errors in FAULT_NIGHT_ERRORS.items():
        assert night.crawls[provider].summary["errors"] == errors, provider


def test_the_other_providers_night_is_unaffected(night):
    """Runpod met a 429 and a cut body and recovered: its offers are the direct replay's."""
    live, direct = night.offers("runpod")
    assert live and live == direct
    assert night.crawls["runpod"].summary["errors"] == []


def test_503_is_retried_then_fails_naming_the_url_and_the_raw_answer_is_kept(night):
    crawl = night.crawls["crusoe"]
    assert _tries(night, CRUSOE) == ["fault:status"] * TRIES
    assert crawl.summary["errors"] == [{"url": CRUSOE, "error": "HTTP 503"}]
    assert [c.status for c in crawl.captures()] == [503]


@pytest.mark.parametrize(("provider", "url", "kind"), [
    ("lambda", LAMBDA, "hang"), ("nebius", NEBIUS, "slow")])
def test_a_silent_or_slow_server_times_out_and_fails_naming_the_url(night, provider, url, kind):
    crawl = night.crawls[provider]
    assert _tries(night, url) == [f"fault:{kind}"] * TRIES
    assert crawl.summary["errors"] == [{"url": url, "error": timeout_error(url)}]
    assert not crawl.captures()


def test_a_body_always_cut_short_fails_naming_the_url(night):
    crawl = night.crawls["coreweave"]
    assert _tries(night, COREWEAVE) == ["fault:truncate"] * TRIES
    assert crawl.summary["errors"] == [{"url": COREWEAVE, "error": CUT_SHORT}]
    assert not crawl.captures()  # no body was ever whole: nothing to keep


def test_gcp_key_travels_to_the_server_but_never_into_the_archive(paged_night):
    """With GOOGLE_CLOUD_API_KEY the plan reads the Billing Catalog: the archived first page
    (its query was not recorded) is replayed, its real nextPageToken asks for page 2, which the
    archive lacks: a 404 reported under the key-less URL."""
    key, night = KEY, paged_night
    crawl = night.crawls["gcp"]
    first, second = [s for s in night.seen if s.url.startswith(SKUS)]
    assert f"key={key}" in first.url and f"key={key}" in second.url
    assert (first.match, first.status, second.status) == ("path", 200, 404)
    assert "pageToken=" in second.url
    (err,) = crawl.summary["errors"]
    assert err["error"] == "HTTP 404" and "pageToken=" in err["url"]
    assert key not in json.dumps(crawl.summary)
    for _, _, path in list_archives(crawl.archive_root):
        assert key.encode() not in gzip.open(path).read()
    live, direct = night.offers("gcp")
    assert live and live == direct


def test_azure_follows_next_page_links_over_the_real_items(paged_night):
    """The archived Azure reply served 30 items a page: each family's query follows its
    NextPageLink (absolute, with :443) to the end, and the pages together parse to the offers of
    the whole archived reply, once per family."""
    night = paged_night
    pages = [s for s in night.seen if s.url.startswith(AZURE_PRICES)]
    skips = sorted(s.url.rsplit("$skip=", 1)[1] if "$skip=" in s.url else "0" for s in pages)
    assert skips == ["0"] * 4 + ["30"] * 4 + ["60"] * 4  # the reply holds 83 items
    assert all(s.status == 200 for s in pages)
    crawled = latest_per_request(night.crawls["azure"].captures())
    live, _ = day_offers("azure", crawled)
    direct, _ = day_offers("azure", [pages[0].served] * 4)
    # Each page is its own capture (its own bytes and hash); the offers are the same.
    assert live and comparable(live, ("raw_sha256",)) == comparable(direct, ("raw_sha256",))
