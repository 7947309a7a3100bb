"""The live crawler: one generic Scrapy spider that runs a provider's fetch plan.

It archives every response (any status) before anything parses it, follows the pagination the
provider's source module reads off each response, and records every failure with its URL. Run
one provider per process (the Twisted reactor cannot restart):

    python -m gpuprices.spiders.crawl --provider runpod --archive-root snapshots --summary out.json

The summary JSON lists what was archived and what failed; the exit code is 0 when every request
got an HTTP 200 answer, 1 otherwise. Scrapy settings to override come from `--settings` or, for
crawls started by the nightly run, the GPUPRICES_CRAWL_SETTINGS environment variable (both JSON
objects): e.g. a download handler that sends every request to the offline replay server
(docs/operations.md, "The live path, offline").
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import sys
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import scrapy
from scrapy.crawler import CrawlerProcess

from gpuprices.spiders.archive import MAX_BODY_BYTES, ArchiveSession, Capture
from gpuprices.spiders.registry import source_for
from gpuprices.spiders.sources import RequestSpec

USER_AGENT = "gpuprices/0.1 (GPU price history for procurement; +https://github.com/gpuprices/gpuprices)"
DEFAULT_MAX_BYTES = MAX_BODY_BYTES  # one cap on every decoded body (spiders/archive.py)
CHROMIUM = "/usr/bin/chromium"
# Flags that keep Debian's Chromium from reaching out on its own; the machine's network is closed
# except for the sites we crawl (see the environment notes in README "Browser pages").
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SECRET_QUERY_KEYS = {"key", "api_key", "apikey", "token", "access_token", "signature", "sig"}
SECRET_HEADERS = {"authorization", "x-api-key", "cookie"}
SETTINGS_ENV = "GPUPRICES_CRAWL_SETTINGS"


def redact_url(url: str, extra_keys: set[str] | None = None) -> str:
    """The URL with secret query parameters removed, for archives, logs and errors."""
    keys = SECRET_QUERY_KEYS | (extra_keys or set())
    parts = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
             if k.lower() not in keys]
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def redact_text(text: str, secrets: list[str]) -> str:
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return text


def with_secret_params(spec: RequestSpec) -> str:
    secrets = spec.meta.get("secret_params") or {}
    if not secrets:
        return spec.url
    parts = urllib.parse.urlsplit(spec.url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True) + list(secrets.items())
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def crawl_settings(use_browser: bool) -> dict[str, Any]:
    settings: dict[str, Any] = {
        # Scrapy 2.19 opens a remote-control port by default: nothing should listen here.
        "REMOTE_CONTROL_ENABLED": False,
        "USER_AGENT": USER_AGENT,
        "ROBOTSTXT_OBEY": True,
        # Log each robots.txt decision and list it in the crawl summary.
        "DOWNLOADER_MIDDLEWARES": {"gpuprices.spiders.robots_log.RobotsDecisionLog": 101},
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_START_DELAY": 1.0,
        "AUTOTHROTTLE_TARGET_CONCURRENCY": 1.0,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
        "DOWNLOAD_DELAY": 0.5,
        "DOWNLOAD_TIMEOUT": 60,
        "DOWNLOAD_MAXSIZE": DEFAULT_MAX_BYTES,
        "DOWNLOAD_WARNSIZE": 0,
        "RETRY_ENABLED": True,
        "RETRY_TIMES": 3,
        "RETRY_HTTP_CODES": [429, 500, 502, 503, 504, 522, 524, 408],
        "HTTPERROR_ALLOW_ALL": True,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": os.environ.get("GPUPRICES_CRAWL_LOG_LEVEL", "WARNING"),
    }
    if use_browser:
        settings["DOWNLOAD_HANDLERS"] = {
            "http": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
            "https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
        }
        settings["PLAYWRIGHT_BROWSER_TYPE"] = "chromium"
        settings["PLAYWRIGHT_LAUNCH_OPTIONS"] = {
            "executable_path": os.environ.get("GPUPRICES_CHROMIUM", CHROMIUM),
            "headless": True,
            "args": CHROMIUM_ARGS,
        }
    return settings


class ArchivingSpider(scrapy.Spider):
    """Fetches a provider's plan; every response is archived before its follow-ups are read."""

    name = "gpuprices"

    def __init__(self, provider: str, archive_root: str, summary: dict[str, Any],
                 env: Mapping[str, str] | None = None,
                 plan: list[RequestSpec] | None = None, spool: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.provider = provider
        self.source = source_for(provider)
        self.plan = plan
        self.env = dict(env if env is not None else os.environ)
        self.archive = ArchiveSession(archive_root, provider, spool=spool)
        self.summary = summary
        self._secrets: list[str] = []

    async def start(self):
        specs = self.plan if self.plan is not None else self.source.start_requests(self.env)
        for spec in specs:
            yield self._request(spec)

    def _request(self, spec: RequestSpec) -> scrapy.Request:
        self._secrets += [str(v) for v in (spec.meta.get("secret_params") or {}).values()]
        meta: dict[str, Any] = {
            "spec": spec,
            "handle_httpstatus_all": True,
            "download_maxsize": spec.max_bytes or DEFAULT_MAX_BYTES,
        }
        if spec.browser:
            meta["playwright"] = True
        return scrapy.Request(
            with_secret_params(spec),
            method=spec.method,
            body=spec.body,
            headers=spec.headers,
            meta=meta,
            callback=self.on_response,
            errback=self.on_error,
            dont_filter=True,
        )

    def _public_url(self, spec: RequestSpec) -> str:
        return redact_url(spec.url, set(spec.meta.get("secret_params") or {}))

    def on_response(self, response):
        spec: RequestSpec = response.meta["spec"]
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, vs in response.headers.items()
            for v in vs
            if k.decode("latin-1").lower() not in SECRET_HEADERS
        ]
        cap = Capture(
            provider=self.provider,
            url=self._public_url(spec),
            body=response.body,
            captured_at=dt.datetime.now(dt.UTC),
            status=response.status,
            headers=headers,
            method=spec.method,
            request_body=spec.body,
            rendered=spec.browser,
        )
        self.archive.write(cap)  # before anything reads the body
        entry = {"url": cap.url, "status": cap.status, "bytes": len(cap.body),
                 "date": cap.snapshot_date.isoformat()}
        self.summary["archived"].append(entry)
        if response.status != 200:
            self.summary["errors"].append({"url": cap.url, "error": f"HTTP {response.status}"})
            return
        follow = getattr(self.source, "follow", None)
        if follow is None:
            return
        try:
            for nxt in follow(cap):
                yield self._request(nxt)
        except Exception as exc:  # a follow-up plan that cannot read the page is a failure
            self.summary["errors"].append(
                {"url": cap.url, "error": f"could not read follow-up requests: {exc}"})

    def on_error(self, failure):
        spec: RequestSpec = failure.request.meta["spec"]
        value = failure.value
        reason = f"{type(value).__name__}: {value}"
        if ("maxsize" in reason.lower() or "max size" in reason.lower()
                or "Cancelling download" in reason):
            reason = f"response larger than the {spec.max_bytes or DEFAULT_MAX_BYTES} byte bound"
        elif "DataLoss" in type(value).__name__:  # Scrapy's says nothing more than its name
            reason = (f"{type(value).__name__}: the connection closed before the announced "
                      "body length arrived (body cut short)")
        self.summary["errors"].append(
            {"url": self._public_url(spec), "error": redact_text(reason, self._secrets)})

    def closed(self, reason: str) -> None:
        self.archive.close()
        self.summary["close_reason"] = reason


def load_plan(path: Path) -> list[RequestSpec]:
    """A fetch plan from JSON (a list of RequestSpec fields): crawl exactly these URLs instead
    of the provider's own plan, e.g. to refetch one page or to test against a local server."""
    specs = []
    for item in json.loads(Path(path).read_text()):
        body = item.get("body")
        specs.append(RequestSpec(
            url=item["url"], method=item.get("method", "GET"),
            body=body.encode() if isinstance(body, str) else None,
            headers=item.get("headers", {}), browser=bool(item.get("browser", False)),
            max_bytes=item.get("max_bytes"), meta=item.get("meta", {}),
        ))
    return specs


def run_crawl(provider: str, archive_root: Path, env: Mapping[str, str] | None = None,
              plan: list[RequestSpec] | None = None, settings: dict[str, Any] | None = None,
              spool: Path | None = None) -> dict[str, Any]:
    """Crawl one provider in this process (once per process: the reactor cannot restart)."""
    summary: dict[str, Any] = {"provider": provider, "archived": [], "errors": []}
    env = dict(env if env is not None else os.environ)
    specs = plan if plan is not None else source_for(provider).start_requests(env)
    merged = crawl_settings(any(s.browser for s in specs)) | (settings or {})
    process = CrawlerProcess(settings=merged)
    process.crawl(ArchivingSpider, provider=provider, archive_root=str(archive_root),
                  summary=summary, env=env, plan=specs,
                  spool=str(spool) if spool else None)
    process.start()
    if not summary["archived"] and not summary["errors"]:
        summary["errors"].append({"url": "", "error": "the crawl fetched nothing"})
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--provider", required=True)
    ap.add_argument("--archive-root", required=True, help="a folder or s3://bucket/prefix")
    ap.add_argument("--summary", type=Path, help="write the crawl summary JSON here")
    ap.add_argument("--spool", type=Path, help="local folder where a crawl into object storage "
                    "keeps its responses until they are appended (default $GPUPRICES_SPOOL)")
    ap.add_argument("--plan", type=Path, help="JSON list of requests instead of the provider's")
    ap.add_argument("--settings", help="JSON object of Scrapy settings to override")
    args = ap.parse_args(argv)
    logging.getLogger("scrapy").propagate = True
    overrides = args.settings or os.environ.get(SETTINGS_ENV)
    summary = run_crawl(
        args.provider, args.archive_root,
        plan=load_plan(args.plan) if args.plan else None,
        settings=json.loads(overrides) if overrides else None,
        spool=args.spool,
    )
    text = json.dumps(summary, indent=2)
    if args.summary:
        args.summary.write_text(text)
    else:
        print(text)
    return 0 if not summary["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
