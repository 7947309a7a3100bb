"""Log what robots.txt decided for every request of a crawl.

Scrapy's RobotsTxtMiddleware (priority 100) drops forbidden requests with a debug-level line
only. This middleware sits right after it (101): a request that reaches `process_request` was
allowed, one that comes back through `process_exception` with "Forbidden by robots.txt" was not.
Each decision is logged and added to the crawl summary (`summary["robots"]`), with the public
URL (secret query parameters removed).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy.exceptions import IgnoreRequest

logger = logging.getLogger("gpuprices.robots")

PRIORITY = 101  # right after scrapy's RobotsTxtMiddleware (100)


class RobotsDecisionLog:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.obey = crawler.settings.getbool("ROBOTSTXT_OBEY")

    @classmethod
    def from_crawler(cls, crawler: Any) -> RobotsDecisionLog:
        return cls(crawler)

    def _record(self, request: Any, decision: str) -> None:
        spec = request.meta.get("spec")
        if spec is None:  # robots.txt itself and other internal requests
            return
        spider = self.crawler.spider
        public = getattr(spider, "_public_url", None)
        url = public(spec) if public else spec.url
        level = logging.WARNING if decision == "forbidden" else logging.INFO
        logger.log(level, "robots.txt %s: %s", decision, url)
        summary = getattr(spider, "summary", None)
        if isinstance(summary, dict):
            summary.setdefault("robots", []).append({"url": url, "decision": decision})

    def process_request(self, request: Any) -> None:
        if "robots_decision" not in request.meta:
            request.meta["robots_decision"] = "allowed" if self.obey else "not checked"
            self._record(request, request.meta["robots_decision"])
        return None

    def process_exception(self, request: Any, exception: BaseException) -> None:
        if isinstance(exception, IgnoreRequest) and "robots.txt" in str(exception):
            self._record(request, "forbidden")
        return None
