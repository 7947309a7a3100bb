"""Several providers' crawls in ONE crawler process, for the replay tests:

    python -m tests.replay.crawl_all --providers aws,runpod --work DIR --settings JSON

The same spider (`gpuprices.spiders.crawl.ArchivingSpider`), the same settings and each provider's
own plan as `python -m gpuprices.spiders.crawl`; only one Scrapy start-up for all of them, which is
most of a crawl's cost against a loopback server. Each provider gets DIR/<id>/snapshots and
DIR/<id>/summary.json. The nightly run keeps one process per provider (and
tests/test_live_replay_pipeline.py drives that path).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from scrapy.crawler import CrawlerProcess

from gpuprices.spiders.crawl import ArchivingSpider, crawl_settings
from gpuprices.spiders.registry import source_for


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--providers", required=True, help="comma-separated provider ids")
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--settings", default="{}", help="JSON object of Scrapy settings")
    args = ap.parse_args(argv)
    providers = args.providers.split(",")
    env = dict(os.environ)
    browser = any(s.browser for p in providers for s in source_for(p).start_requests(env))
    process = CrawlerProcess(settings=crawl_settings(browser) | json.loads(args.settings))
    summaries = {}
    for p in providers:
        summaries[p] = {"provider": p, "archived": [], "errors": []}
        process.crawl(ArchivingSpider, provider=p, archive_root=str(args.work / p / "snapshots"),
                      summary=summaries[p], env=env)
    process.start()
    for p, summary in summaries.items():
        (args.work / p / "summary.json").write_text(json.dumps(summary, indent=2))
    return 0 if not any(s["errors"] for s in summaries.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
