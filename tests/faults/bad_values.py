"""Bad values inside real captures (reliability issue 30, items 2, 3 and 6): a price in a currency
the gates have never seen, a price of Infinity, "0x H200", a history row without its GPU. Made
from the real bundled captures; shared by tests/test_bad_values.py and
bench/fault_probes/bad_values.py."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.spiders.importer import import_capture, parse_timestamp
from gpuprices.warehouse import lake
from tests.conftest import manifest_rows
from tests.faults import wrong_data as wd

ROOT = wd.ROOT
VERDA_PAGE = "https://verda.com/pricing"
H200_ON_DEMAND = '"name":"1x H200 SXM5 141GB on-demand"'
VERDA_LATER = dt.datetime(2026, 10, 6, 12, tzinfo=dt.UTC)  # the import date
RUNPOD_H100 = re.compile(r'("displayName": "H100 SXM",\s*"memoryInGb": 80,\s*"securePrice": )'
                         r'[0-9.]+')


def with_ecb(tmp: Path, provider: str) -> Settings:
    """wd.fresh plus the archived ECB rates (snapshots/manifest.csv), as `make run` has them."""
    s = wd.fresh(tmp, provider)
    for r in manifest_rows("ecb"):
        import_capture(s.archive_root, ROOT / r["file"], "ecb", r["url"],
                       parse_timestamp(r["captured_at"]), method=r["method"], origin=r["origin"])
    return s


def verda_h200(currency: str | None = None, units: str | None = None) -> bytes:
    """The real Verda JSON-LD page with its 1x H200 on-demand offer in another currency (both
    priceCurrency fields of that node) or its unit text replaced ("0x H200")."""
    body = (ROOT / wd.real_row("verda", VERDA_PAGE)["file"]).read_text()
    start = body.index(H200_ON_DEMAND)
    end = body.index("}}", start) + 2
    node = body[start:end]
    if currency:
        node = node.replace('"priceCurrency":"USD"', f'"priceCurrency":"{currency}"')
    if units:
        node = node.replace('"1x H200', f'"{units} H200')
    return (body[:start] + node + body[end:]).encode()


def runpod_infinity() -> bytes:
    """The real Runpod gpuTypes answer with the H100 SXM's securePrice Infinity."""
    body = (ROOT / wd.real_row("runpod", wd.RUNPOD_API)["file"]).read_text()
    out, n = RUNPOD_H100.subn(r"\1Infinity", body)
    assert n == 1
    return out.encode()


def replace_capture(settings: Settings, provider: str, url: str, body: bytes) -> dt.date:
    """Rewrite the archive so that the provider's latest real capture of `url` holds `body`
    instead (the only capture of that request that day: no earlier good one to fall back on).
    Returns its day."""
    row = wd.real_row(provider, url)
    day = parse_timestamp(row["captured_at"]).date()
    path = settings.archive_root / day.isoformat() / f"{provider}.warc.gz"
    path.unlink()
    for r in manifest_rows(provider):
        if parse_timestamp(r["captured_at"]).date() != day:
            continue
        data = body if r is row or r == row else (ROOT / r["file"]).read_bytes()
        src = settings.data_dir / "mutated.bin"
        src.write_bytes(data)
        import_capture(settings.archive_root, src, provider, r["url"],
                       parse_timestamp(r["captured_at"]), method=r["method"],
                       origin="fault case made from " + r["file"])
    return day


def day_result(results: list[DayResult], day: dt.date) -> DayResult:
    return next(r for r in results if r.snapshot_date == day)


def held(settings: Settings, day: dt.date, provider: str) -> list[dict]:
    return lake.read_quarantine(settings.lake_root, day, provider).to_pylist()


def replay(settings: Settings, provider: str) -> list[DayResult]:
    return wd.replay(settings, provider)


__all__ = ["pipeline"]
