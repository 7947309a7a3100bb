"""Wrong data that used to load quietly (reliability issue, items 1-5), made from the real
bundled captures: shared by tests/test_wrong_data.py and bench/fault_probes/wrong_data.py.

Each helper builds a fresh data folder holding the real captures of one provider (from
snapshots/manifest.csv) plus the one bad thing an operator tried: every price x10 nine days
later, a capture dated in the future, an empty capture later the same day, half the prices
"N/A", a lake partition edited by hand.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import re
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.spiders import archive
from gpuprices.spiders.archive import Capture, append_captures
from gpuprices.spiders.importer import import_capture, parse_timestamp
from gpuprices.warehouse import lake
from tests.conftest import manifest_rows
from tests.warehouse_rows import query as query  # wd.query: the fault tests and probes

ROOT = Path(__file__).resolve().parents[2]

CRUSOE_PAGE = "https://www.crusoe.ai/cloud/pricing"
CRUSOE_DAY = dt.date(2026, 10, 4)  # the recorded page's capture day (snapshots/manifest.csv)
RUNPOD_API = "https://api.runpod.io/graphql"
RUNPOD_DAY = dt.date(2026, 9, 29)  # the recorded GraphQL answer's capture day
FUTURE = dt.datetime(2027, 6, 1, 12, tzinfo=dt.UTC)  # the future-dated capture


def real_row(provider: str, url: str) -> dict:
    """The manifest row of a provider's latest real capture of `url`."""
    return max((r for r in manifest_rows(provider) if r["url"] == url),
               key=lambda r: r["captured_at"])


def fresh(tmp: Path, provider: str) -> Settings:
    """A data folder and an archive of the provider's real captures under their own dates."""
    snap = tmp / "snapshots"
    for r in manifest_rows(provider):
        import_capture(snap, ROOT / r["file"], provider, r["url"],
                       parse_timestamp(r["captured_at"]), method=r["method"], origin=r["origin"])
    return Settings(data_dir=tmp / "data", archive_root=snap).ensure()


def add_capture(settings: Settings, provider: str, url: str, body: bytes,
                captured_at: dt.datetime) -> None:
    """Archive one more capture of a real request with another body or time."""
    row = real_row(provider, url)
    append_captures(settings.archive_root, [Capture(
        provider=provider, url=url, body=body, captured_at=captured_at,
        method=row["method"],
        origin="fault case made from " + row["file"])])


def crusoe_times(factor: float) -> bytes:
    """The real 2026-10-04 Crusoe page with every per-GPU-hour price multiplied by `factor`."""
    body = (ROOT / real_row("crusoe", CRUSOE_PAGE)["file"]).read_text()
    return re.sub(r"\$(\d+\.\d+)(?=/GPU-hr)", lambda m: f"${float(m[1]) * factor:.2f}",
                  body).encode()


def x10_nine_days_later(settings: Settings) -> tuple[list[DayResult], dt.date]:
    """Archive the real Crusoe page x10 nine days after its capture and replay every day."""
    later = CRUSOE_DAY + dt.timedelta(days=9)
    add_capture(settings, "crusoe", CRUSOE_PAGE, crusoe_times(10),
                dt.datetime.combine(later, dt.time(12), dt.UTC))
    return replay(settings, "crusoe"), later


def empty_later_capture(settings: Settings) -> tuple[DayResult, DayResult]:
    """Replay the real Runpod API night, archive an empty reply to the same request six hours
    later that day and replay the night again: (clean result, result after)."""
    (clean,) = replay(settings, "runpod", RUNPOD_DAY.isoformat())
    add_capture(settings, "runpod", RUNPOD_API, b"",
                dt.datetime.combine(RUNPOD_DAY, dt.time(18), dt.UTC))
    (after,) = replay(settings, "runpod", RUNPOD_DAY.isoformat())
    return clean, after


def half_na_night(settings: Settings) -> tuple[DayResult, int]:
    """The real Runpod API answer with half its secure prices "N/A", archived the next night
    and replayed: the result and how many prices were replaced."""
    body, n_na = runpod_half_na()
    later = RUNPOD_DAY + dt.timedelta(days=1)
    add_capture(settings, "runpod", RUNPOD_API, body,
                dt.datetime.combine(later, dt.time(2), dt.UTC))
    (res,) = replay(settings, "runpod", later.isoformat())
    return res, n_na


def runpod_half_na() -> tuple[bytes, int]:
    """The real Runpod GraphQL answer with every other secure price given as "N/A", and how
    many prices that replaced."""
    doc = json.loads((ROOT / real_row("runpod", RUNPOD_API)["file"]).read_bytes())
    priced = [t for t in doc["data"]["gpuTypes"] if t.get("securePrice")]
    for t in priced[::2]:
        t["securePrice"] = "N/A"
    return json.dumps(doc).encode(), len(priced[::2])


@contextlib.contextmanager
def clock_unchecked():
    """Archive as an older version did, with no check of capture times (a future capture copied
    into the archive by hand)."""
    real = archive.future_problem
    archive.future_problem = lambda *_a, **_k: None
    try:
        yield
    finally:
        archive.future_problem = real


def replay(settings: Settings, provider: str, spec: str = "all") -> list[DayResult]:
    """Replay and load a provider's archive quietly (the run summary's path is printed)."""
    results = pipeline.replay(settings, provider, spec)
    with contextlib.redirect_stdout(io.StringIO()):
        loading.load(settings, results, pipeline.new_run_id())
    return results


def edit_partition_by_hand(settings: Settings, day: dt.date, provider: str,
                           factor: float = 100) -> Path:
    """Rewrite a lake partition with every price multiplied, as a hand edit would: not through
    the lake's writer, so no checksum is recorded for the new bytes."""
    path = lake.partition_path(settings.lake_root, day, provider)
    table = pq.read_table(path)
    for name in ("price_per_hour", "price_per_gpu_hour"):
        i = table.schema.get_field_index(name)
        table = table.set_column(i, name, pc.multiply(table.column(name), factor))
    pq.write_table(table, path)
    return path


def summary_text(settings: Settings) -> str:
    """The newest run summary."""
    return max(settings.runs_dir.glob("*.md"), key=lambda p: p.stat().st_mtime_ns).read_text()
