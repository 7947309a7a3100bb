"""Wayback backfill, offline: CDX replies written by hand in the API's public JSON format (first
row = field names), and a fake fetch that serves the REAL captures in tests/fixtures for their
`id_` URLs."""

from __future__ import annotations

import datetime as dt
import json
import urllib.parse
from pathlib import Path

import pytest

from gpuprices.spiders.archive import archive_path, read_captures
from gpuprices.spiders.providers.crusoe.parser import parse as parse_crusoe
from gpuprices.spiders.providers.nebius.parser import parse as parse_nebius
from gpuprices.spiders.registry import wayback_urls
from gpuprices.spiders.wayback import (
    CDX_ENDPOINT,
    CdxRow,
    Fetched,
    backfill,
    cdx_query_url,
    clean_original,
    fetch_with_backoff,
    parse_cdx,
    raw_capture_url,
)
from gpuprices.warehouse.contract import PROVIDERS

RAW = Path(__file__).parent / "fixtures" / "raw"
NEBIUS_2024 = RAW / "nebius" / "nebius_com_prices_wayback_20241115043809_excerpt.html"
NEBIUS_2026 = RAW / "nebius" / "nebius_com_prices_wayback_20260712235400_excerpt.html"
CRUSOE_2025_05 = RAW / "crusoe" / "crusoe_ai_cloud_pricing_wayback_20250521220413_excerpt.html"
CRUSOE_2025_12 = RAW / "crusoe" / "crusoe_ai_cloud_pricing_wayback_20251215002446_excerpt.html"

FIELDS = ["timestamp", "original", "statuscode", "digest", "mimetype"]
# Timestamps and digests of the real captures (fixture headers, raw/SOURCES.md).
NEBIUS_CDX = [
    FIELDS,
    ["20241115043809", "https://nebius.com/prices", "200", "2BYCBZAU5F7CJXBXMHIYFADF2H6XUMKC",
     "text/html"],
    ["20260712235400", "https://nebius.com/prices", "200", "6SQQTAADN7CXFEAMHHZC6KSREWV32RPS",
     "text/html"],
]
CRUSOE_CDX = [
    FIELDS,
    ["20250521220413", "https://crusoe.ai/cloud/pricing", "200",
     "FFPCA5BQSG2NEHD7XUHKY7KD46PNRMLT", "text/html"],
    ["20251215002446", "https://www.crusoe.ai/cloud/pricing", "200",
     "VRC2NYRIQR7HJMUKJU4EE6RGWXR7BJ67", "text/html"],
]
PAGES = {
    raw_capture_url("20241115043809", "https://nebius.com/prices"): NEBIUS_2024,
    raw_capture_url("20260712235400", "https://nebius.com/prices"): NEBIUS_2026,
    raw_capture_url("20250521220413", "https://crusoe.ai/cloud/pricing"): CRUSOE_2025_05,
    raw_capture_url("20251215002446", "https://www.crusoe.ai/cloud/pricing"): CRUSOE_2025_12,
}


class FakeWayback:
    """Answers CDX queries from hand-written replies and id_ URLs with the real captures. CDX
    keys URLs without scheme and www., so every Crusoe URL gets the same reply."""

    def __init__(self, cdx: dict[str, list], fail_first: dict[str, list[Fetched]] | None = None,
                 redirect: dict[str, str] | None = None) -> None:
        self.cdx = cdx
        self.fail_first = fail_first or {}
        self.redirect = redirect or {}
        self.requests: list[str] = []

    def __call__(self, url: str) -> Fetched:
        self.requests.append(url)
        queued = self.fail_first.get(url)
        if queued:
            return queued.pop(0)
        if url.startswith(CDX_ENDPOINT + "?"):
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
            host = urllib.parse.urlsplit(q["url"][0]).hostname.removeprefix("www.")
            reply = self.cdx.get(host, [])
            return Fetched(200, json.dumps(reply).encode(), [("Content-Type", "text/plain")], url)
        served = self.redirect.get(url, url)
        if url in PAGES:
            return Fetched(200, PAGES[url].read_bytes(),
                           [("Content-Type", "text/html; charset=utf-8"),
                            ("Content-Encoding", "gzip"), ("Content-Length", "1")], served)
        return Fetched(404, b"not archived", [], url)

    def id_requests(self) -> list[str]:
        return [u for u in self.requests if "id_/" in u]


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


# --- pure functions -----------------------------------------------------------------------


def test_cdx_query_url():
    url = cdx_query_url("https://nebius.com/prices")
    parts = urllib.parse.urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://web.archive.org/cdx/search/cdx"
    q = urllib.parse.parse_qs(parts.query)
    assert q == {"url": ["https://nebius.com/prices"], "output": ["json"],
                 "fl": ["timestamp,original,statuscode,digest,mimetype"],
                 "filter": ["statuscode:200"], "collapse": ["digest"]}
    since = urllib.parse.parse_qs(urllib.parse.urlsplit(
        cdx_query_url("https://nebius.com/prices", since="2025-01-31")).query)
    assert since["from"] == ["20250131"]
    assert "from=20240101" in cdx_query_url("https://x.test/", since=dt.date(2024, 1, 1))
    with pytest.raises(ValueError):
        cdx_query_url("https://x.test/", since="last week")


def test_parse_cdx_reply():
    rows = parse_cdx(json.dumps(NEBIUS_CDX).encode())
    assert rows == [
        CdxRow("20241115043809", "https://nebius.com/prices", "200",
               "2BYCBZAU5F7CJXBXMHIYFADF2H6XUMKC", "text/html"),
        CdxRow("20260712235400", "https://nebius.com/prices", "200",
               "6SQQTAADN7CXFEAMHHZC6KSREWV32RPS", "text/html"),
    ]
    assert rows[0].captured_at == dt.datetime(2024, 11, 15, 4, 38, 9, tzinfo=dt.UTC)
    # Fields in another order are read by name.
    swapped = [["original", "timestamp"], ["https://nebius.com/prices", "20241115043809"]]
    assert parse_cdx(json.dumps(swapped)) == [CdxRow("20241115043809",
                                                     "https://nebius.com/prices")]
    assert parse_cdx(b"[]") == [] and parse_cdx(b"") == []
    # A paged reply ends with a blank row and the resume key: not captures.
    paged = [*NEBIUS_CDX, [], ["com,nebius)/prices 20260712235400"]]
    assert len(parse_cdx(json.dumps(paged))) == 2
    with pytest.raises(ValueError):
        parse_cdx(b"<html>rate limited</html>")
    with pytest.raises(ValueError):
        parse_cdx(json.dumps([["urlkey", "digest"], ["a", "b"]]))


def test_raw_capture_url_and_clean_original():
    assert raw_capture_url("20241115043809", "https://nebius.com/prices") == (
        "https://web.archive.org/web/20241115043809id_/https://nebius.com/prices")
    assert clean_original("http://www.coreweave.com:80/gpu-cloud-pricing") == (
        "http://www.coreweave.com/gpu-cloud-pricing")
    assert clean_original("https://nebius.com/prices") == "https://nebius.com/prices"


def test_wayback_urls_cover_every_provider():
    for provider in PROVIDERS:
        urls = wayback_urls(provider)
        assert urls and all(u.startswith(("https://", "http://")) for u in urls)
    assert "https://www.coreweave.com/gpu-cloud-pricing" in wayback_urls("coreweave")
    assert "https://lambdalabs.com/service/gpu-cloud" in wayback_urls("lambda")
    assert "https://crusoecloud.com/pricing" in wayback_urls("crusoe")
    with pytest.raises(KeyError):
        wayback_urls("hetzner")


# --- backfill -----------------------------------------------------------------------------


def test_backfill_archives_real_captures_then_resumes(tmp_path):
    fake, sleeps = FakeWayback({"nebius.com": NEBIUS_CDX}), Sleeps()
    summary = backfill("nebius", tmp_path, fake, sleep=sleeps)
    assert summary.cdx_rows == 2 and summary.skipped == 0 and not summary.failed
    assert summary.archived == [("https://nebius.com/prices", "20241115043809"),
                                ("https://nebius.com/prices", "20260712235400")]
    assert fake.id_requests() == list(PAGES)[:2]
    path = archive_path(tmp_path, "nebius", dt.date(2024, 11, 15))
    assert summary.files == [path, archive_path(tmp_path, "nebius", dt.date(2026, 7, 12))]
    [cap] = list(read_captures(path))
    assert cap.url == "https://nebius.com/prices"
    assert cap.captured_at == dt.datetime(2024, 11, 15, 4, 38, 9, tzinfo=dt.UTC)
    assert cap.body == NEBIUS_2024.read_bytes()
    assert "https://web.archive.org/web/20241115043809id_/https://nebius.com/prices" in cap.origin
    assert "2BYCBZAU5F7CJXBXMHIYFADF2H6XUMKC" in cap.origin
    # Encoding headers describing the wire, not the stored body, are dropped.
    assert [k for k, _ in cap.headers] == ["Content-Type"]
    # The archived capture parses like a live one: 8 x H100 SXM $23.60 per instance.
    offers = parse_nebius(cap.body, cap.meta())
    h100 = [o for o in offers if o.gpu_count == 8 and o.gpu_model == "H100-SXM-80GB"
            and o.pricing_model == "on_demand"]
    assert h100[0].price_per_hour == 23.60 and h100[0].snapshot_date == dt.date(2024, 11, 15)
    assert sleeps == [4.0, 4.0]  # the default pause before each fetch, no backoff

    again = FakeWayback({"nebius.com": NEBIUS_CDX})
    second = backfill("nebius", tmp_path, again, sleep=Sleeps())
    assert second.cdx_rows == 2 and second.skipped == 2
    assert second.archived == [] and second.files == [] and again.id_requests() == []
    assert len(list(read_captures(path))) == 1


def test_backfill_since_and_url_variants(tmp_path):
    fake = FakeWayback({"crusoe.ai": CRUSOE_CDX})
    summary = backfill("crusoe", tmp_path, fake, since="2025-06-01", sleep=Sleeps())
    cdx_queries = [u for u in fake.requests if u.startswith(CDX_ENDPOINT)]
    assert len(cdx_queries) == len(wayback_urls("crusoe"))
    assert all("from=20250601" in u for u in cdx_queries)
    # www. and bare URLs return the same captures: each is fetched once. (The fake ignores
    # `from`; the real API applies it.)
    assert summary.cdx_rows == 2 and len(fake.id_requests()) == 2
    late = list(read_captures(archive_path(tmp_path, "crusoe", dt.date(2025, 12, 15))))
    assert late[0].url == "https://www.crusoe.ai/cloud/pricing"
    offers = parse_crusoe(late[0].body, late[0].meta())
    assert {o.price_per_hour for o in offers if o.pricing_model == "spot"} == {1.60}
    early = list(read_captures(archive_path(tmp_path, "crusoe", dt.date(2025, 5, 21))))
    assert early[0].url == "https://crusoe.ai/cloud/pricing"


def test_backfill_retries_429_then_succeeds(tmp_path):
    wb = raw_capture_url("20241115043809", "https://nebius.com/prices")
    fake = FakeWayback({"nebius.com": NEBIUS_CDX[:2]},
                       fail_first={wb: [Fetched(429, b"slow down", [("Retry-After", "7")], wb),
                                        Fetched(503, b"busy", [], wb)]})
    sleeps = Sleeps()
    summary = backfill("nebius", tmp_path, fake, sleep=sleeps, pause=1.0, base_delay=3.0)
    assert fake.id_requests() == [wb, wb, wb]
    assert summary.archived == [("https://nebius.com/prices", "20241115043809")]
    assert not summary.failed
    # pause after the CDX query, Retry-After for the 429, base x 2 for the 503 (2nd attempt).
    assert sleeps == [1.0, 7.0, 6.0]


def test_backfill_gives_up_and_reports(tmp_path):
    wb = raw_capture_url("20241115043809", "https://nebius.com/prices")
    missing = ["20250101000000", "https://nebius.com/prices", "200", "X", "text/html"]
    fake = FakeWayback({"nebius.com": [*NEBIUS_CDX[:2], missing]},
                       fail_first={wb: [Fetched(502, b"", [], wb)] * 3})
    summary = backfill("nebius", tmp_path, fake, sleep=Sleeps(), tries=3)
    assert summary.archived == []
    assert summary.failed == [("https://nebius.com/prices", "20241115043809", "HTTP 502"),
                              ("https://nebius.com/prices", "20250101000000", "HTTP 404")]
    assert not archive_path(tmp_path, "nebius", dt.date(2024, 11, 15)).exists()


def test_backfill_records_served_timestamp_after_redirect(tmp_path):
    asked = raw_capture_url("20260712235400", "https://nebius.com/prices")
    served = raw_capture_url("20260713000105", "https://nebius.com/prices")
    fake = FakeWayback({"nebius.com": [FIELDS, NEBIUS_CDX[2]]}, redirect={asked: served})
    summary = backfill("nebius", tmp_path, fake, sleep=Sleeps())
    assert summary.archived == [("https://nebius.com/prices", "20260713000105")]
    [cap] = list(read_captures(archive_path(tmp_path, "nebius", dt.date(2026, 7, 13))))
    assert cap.captured_at == dt.datetime(2026, 7, 13, 0, 1, 5, tzinfo=dt.UTC)
    assert served in cap.origin and "asked 20260712235400" in cap.origin
    # The rerun recognises the asked capture in the next day's file and fetches nothing.
    again = FakeWayback({"nebius.com": [FIELDS, NEBIUS_CDX[2]]}, redirect={asked: served})
    assert backfill("nebius", tmp_path, again, sleep=Sleeps()).skipped == 1
    assert again.id_requests() == []


def test_cdx_failure_is_reported(tmp_path):
    query = cdx_query_url("https://nebius.com/prices")
    fake = FakeWayback({}, fail_first={query: [Fetched(403, b"blocked", [], query)]})
    summary = backfill("nebius", tmp_path, fake, sleep=Sleeps())
    assert summary.failed == [(query, "", "CDX HTTP 403")] and summary.cdx_rows == 0


def test_fetch_with_backoff_network_errors():
    calls = []

    def flaky(url: str) -> Fetched:
        calls.append(url)
        if len(calls) < 3:
            raise TimeoutError("timed out")
        return Fetched(200, b"ok", [], url)

    sleeps = Sleeps()
    assert fetch_with_backoff(flaky, "https://x.test/", sleep=sleeps, base_delay=2).body == b"ok"
    assert sleeps == [2, 4]

    def dead(url: str) -> Fetched:
        raise ConnectionResetError("reset")

    with pytest.raises(ConnectionResetError):
        fetch_with_backoff(dead, "https://x.test/", sleep=Sleeps(), tries=2)
