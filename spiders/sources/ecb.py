"""ECB euro foreign exchange reference rates: what to fetch (not one of the eight offer providers,
so the generic crawler never sees it; gpuprices.spiders.fx fetches and archives it).

The ECB publishes its reference rates around 16:00 CET on TARGET working days, EUR based (units
of currency per euro), as XML (gesmes envelope) and zipped CSV:
https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuprices.spiders.sources import RequestSpec

PROVIDER = "ecb"  # archive name: snapshots/<date>/ecb.warc.gz
BASE = "https://www.ecb.europa.eu/stats/eurofxref/"
DAILY_XML = BASE + "eurofxref-daily.xml"  # the latest working day, ~1.6 kB
HIST_90D_XML = BASE + "eurofxref-hist-90d.xml"  # the last ~64 working days, ~70 kB
HIST_XML = BASE + "eurofxref-hist.xml"  # every day since 1999-01-04, ~6 MB
HIST_ZIP = BASE + "eurofxref-hist.zip"  # the same history as one zipped CSV, ~0.6 MB


def start_requests(env: Mapping[str, str]) -> list[RequestSpec]:
    """A nightly fetch: today's rates plus the 90-day file, which heals missed nights."""
    return [RequestSpec(url=DAILY_XML), RequestSpec(url=HIST_90D_XML)]


def backfill_requests() -> list[RequestSpec]:
    """Once, for history: the zipped CSV is a tenth of the XML's size for the same rates."""
    return [RequestSpec(url=HIST_ZIP)]
