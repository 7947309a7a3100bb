"""The live path, offline: every provider's REAL fetch plan (spiders/providers/<id>/source.py,
found through the registry) runs through the real crawler (its spider and settings; all providers
in one crawler process, tests/replay/crawl_all.py) against a loopback server replaying the
project's archive (built from snapshots/manifest.csv). A provider added to the registry is
covered here without a change, as long as its plan asks for a URL its archived captures were
made under."""

from __future__ import annotations

import pytest

from gpuprices.spiders import registry
from gpuprices.spiders.archive import Capture
from gpuprices.spiders.crawl import redact_url, with_secret_params
from gpuprices.spiders.providers.runpod.source import GRAPHQL_URL, graphql_body
from tests.replay.drive import REPLAY_GROUP, crawl_env, once, replay_night, shared_archive

pytestmark = REPLAY_GROUP

PROVIDERS = registry.ids()



@pytest.fixture(scope="module")
def night(tmp_path_factory):
    archive = shared_archive(tmp_path_factory)
    return once(tmp_path_factory, "replay-night", lambda d: replay_night(archive, d, PROVIDERS))


def _asked(night) -> set[tuple[str, str, bytes | None]]:
    return {(s.method, s.url, s.body) for s in night.seen}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_real_plan_reaches_the_server_as_planned(night, provider):
    """Every first request of the plan arrives with its real host, path, query, method and
    body, and so does every follow-up the plan reads off what was fetched (AWS's region index ->
    region files, Azure's NextPageLink, GCP's nextPageToken)."""
    source = registry.source_for(provider)
    asked = _asked(night)
    for spec in source.start_requests(crawl_env()):
        assert (spec.method, with_secret_params(spec), spec.body) in asked, spec.url
    follow = getattr(source, "follow", None)
    for cap in night.crawls[provider].captures() if follow else []:
        if cap.status != 200:  # the crawler reads follow-ups off 200 answers only
            continue
        for spec in follow(cap):
            assert (spec.method, with_secret_params(spec), spec.body) in asked, spec.url


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_plan_is_answered_from_real_archived_captures(night, provider):
    served = [s for s in night.seen if s.served is not None and s.served.provider == provider]
    assert served, (f"{provider}: its plan asks for none of the URLs its captures are archived "
                    f"under, so its live path is not covered offline: archive a capture of a "
                    f"URL the plan requests (snapshots/manifest.csv)")
    for s in served:  # the bytes the crawl archived are the archived bytes
        got = _archived(night, provider, s.url)
        assert got is not None and got.sha256 == s.served.sha256, s.url


def _archived(night, provider: str, url: str) -> Capture | None:
    public = redact_url(url)
    caps = [c for c in night.crawls[provider].captures() if c.url == public]
    return caps[-1] if caps else None


@pytest.mark.parametrize("provider", PROVIDERS)
def test_offers_equal_the_direct_replay(night, provider):
    live, direct = night.offers(provider)
    assert live, f"{provider}: the replayed night parsed no offers"
    assert live == direct


@pytest.mark.parametrize("provider", PROVIDERS)
def test_what_the_archive_lacks_fails_clearly_and_is_kept(night, provider):
    """A URL of the plan the archive has no answer for gets a 404, as a vanished page would
    live: the crawl reports it with its URL, keeps the raw 404, and fetches the rest."""
    crawl = night.crawls[provider]
    missing = [s for s in night.seen if s.status == 404 and not s.url.endswith("/robots.txt")
               and _archived(night, provider, s.url) is not None]
    for s in missing:
        assert {"url": redact_url(s.url), "error": "HTTP 404"} in crawl.summary["errors"]
        assert _archived(night, provider, s.url).status == 404
    assert bool(crawl.summary["errors"]) == bool(missing), crawl.summary["errors"]


def test_what_the_archive_lacks_today(night):
    """The gaps the tests above run into, named so a change to them is seen: AWS's China index
    and spot feed and Scaleway's availability list are not bundled; the other providers' plans
    are answered whole. (Providers added later are not pinned here.)"""
    gaps = {p: sorted(e["url"] for e in c.summary["errors"]) for p, c in night.crawls.items()}
    assert gaps["aws"] == [
        "https://pricing.cn-north-1.amazonaws.com.cn/offers/v1.0/cn/AmazonEC2/current/"
        "region_index.json",
        "https://website.spot.ec2.aws.a2z.com/spot.json",
    ]
    assert gaps["scaleway"] == [
        "https://api.scaleway.com/instance/v1/zones/fr-par-2/products/servers/availability"
        "?per_page=100&page=1"]
    for p in ("azure", "coreweave", "crusoe", "digitalocean", "gcp", "hotaisle", "hyperbolic",
              "hyperstack", "lambda", "nebius", "oracle", "runpod", "together", "verda",
              "voltagepark"):
        assert gaps[p] == [], p


def test_aws_index_leads_to_the_archived_region_file(night):
    """The region index (derived: the archive holds none) lists the region whose offer file is
    archived; AWS's own follow-up turns it into that file's URL, which is replayed exactly."""
    by_url = {s.url: s for s in night.seen}
    index = by_url["https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/"
                   "region_index.json"]
    region = by_url["https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/"
                    "us-east-1/index.json"]
    assert (index.match, region.match, region.status) == ("derived", "exact", 200)


def test_runpod_posts_its_graphql_query(night):
    (post,) = [s for s in night.seen if s.url == GRAPHQL_URL]
    assert (post.method, post.body, post.status) == ("POST", graphql_body(), 200)
