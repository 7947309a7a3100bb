"""Probes for issue 30's items 1, 7 and 8: damaged archive files (copies of the real bundled
ones cut short, a body changed after archiving, random bytes after the last record, a brotli
record, a gzip bomb, a body over the cap at import, a store that cannot be listed)."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import tracemalloc
from pathlib import Path

from bench.fault_probes import Probe, ProbeResult
from gpuprices.flows import loading
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import read_archive
from gpuprices.warehouse import objstore
from tests.faults import damaged_archive as da
from tests.faults import wrong_data as wd

# The cut files: the provider's bundled file of that day (rows in the whole file).
CUT = [("lambda", dt.date(2026, 8, 22)), ("crusoe", dt.date(2026, 10, 4)),
       ("hyperstack", dt.date(2026, 8, 22)), ("hotaisle", dt.date(2026, 8, 22)),
       ("together", dt.date(2026, 8, 22))]


def _replay_load(s, provider: str, day: dt.date):
    results = pipeline.replay(s, provider, day.isoformat())
    with contextlib.redirect_stdout(io.StringIO()):
        loading.load(s, results, pipeline.new_run_id())
    return results


def _rows(s, provider: str) -> int:
    if not s.db_path.exists():
        return 0
    ((n,),) = wd.query(s, "select count(*) from offers where provider = ?", provider)
    return n


def cut_probe(provider: str, day: dt.date):
    def run(tmp: Path) -> ProbeResult:
        s = da.copy_archive(tmp, day, provider)
        da.cut_to_half(da.day_file(s, day, provider))
        (res,) = _replay_load(s, provider, day)
        wrong = _rows(s, provider)
        said = " ".join(res.errors)
        return ProbeResult(survived=wrong == 0 and res.status == "failed"
                           and ("cut short" in said or "unreadable" in said),
                           wrong_loaded=wrong, detail=f"{res.status}: {said[-110:]}")
    return run


def probe_digest(tmp: Path) -> ProbeResult:
    s = da.copy_archive(tmp, da.CRUSOE_DAY, "crusoe")
    da.change_body(da.day_file(s, da.CRUSOE_DAY, "crusoe"), b"$3.90", b"$0.39")
    (res,) = _replay_load(s, "crusoe", da.CRUSOE_DAY)
    wrong = _rows(s, "crusoe")
    return ProbeResult(survived=wrong == 0 and "recorded digest" in " ".join(res.errors),
                       wrong_loaded=wrong, detail=f"{res.status}: H100 $3.90 -> $0.39 in the "
                                                  "body, digest kept: refused")


def probe_junk(tmp: Path) -> ProbeResult:
    s = da.copy_archive(tmp, da.CRUSOE_DAY, "crusoe", "coreweave")
    da.append_random(da.day_file(s, da.CRUSOE_DAY, "crusoe"))
    out = da.cli_run("crawl", "--replay", "2026-10-04", "-p", "coreweave", "-p", "crusoe",
                     *da.where(s))
    loaded = {p: _rows(s, p) for p in ("coreweave", "crusoe")}
    lost = max(34 - loaded["coreweave"], 0) + max(6 - loaded["crusoe"], 0)
    named = "unreadable after record 2" in wd.summary_text(s)
    return ProbeResult(survived=out.exit_code == 0 and lost == 0 and named, rows_lost=lost,
                       detail=f"crawl exit {out.exit_code}, loaded {loaded}, file named {named}")


def probe_brotli(tmp: Path) -> ProbeResult:
    s = da.copy_archive(tmp, da.CRUSOE_DAY, "crusoe")
    da.encoded_capture(s, "crusoe", wd.CRUSOE_PAGE, da.CRUSOE_DAY, "br", b"\x8b\x02\x80hi\x03")
    (res,) = _replay_load(s, "crusoe", da.CRUSOE_DAY)
    lost = 6 - _rows(s, "crusoe")
    said = "Content-Encoding br" in " ".join(res.errors)
    return ProbeResult(survived=lost == 0 and said, rows_lost=lost,
                       detail=f"{res.status}: later br capture failed, earlier one used")


def probe_bomb(tmp: Path) -> ProbeResult:
    s = da.copy_archive(tmp, da.CRUSOE_DAY, "crusoe")
    bomb = da.gzip_zeros(1500 * 1000 * 1000)  # the 1.5 GB of zeros
    da.encoded_capture(s, "crusoe", wd.CRUSOE_PAGE, da.CRUSOE_DAY, "gzip", bomb)
    tracemalloc.start()
    try:
        read = read_archive(da.day_file(s, da.CRUSOE_DAY, "crusoe"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    (res,) = _replay_load(s, "crusoe", da.CRUSOE_DAY)
    lost = 6 - _rows(s, "crusoe")
    refused = bool(read.captures[-1].damaged)
    return ProbeResult(survived=refused and lost == 0 and peak < 200e6, rows_lost=lost,
                       detail=f"{len(bomb) / 1e6:.1f} MB warc body -> 1.5 GB: read stopped at "
                              f"the cap, peak {peak / 1e6:.0f} MB traced")


def probe_import_60mb(tmp: Path) -> ProbeResult:
    big = tmp / "page.html"
    with big.open("wb") as fh:
        fh.truncate(60 * 1000 * 1000)
    out = da.cli_run("import-capture", str(big), "--provider", "crusoe", "--url",
                     wd.CRUSOE_PAGE, "--captured-at", "2026-10-04T12:00:00Z",
                     "--archive", str(tmp / "snapshots"))
    archived = list((tmp / "snapshots").rglob("*.warc.gz")) if (tmp / "snapshots").exists() \
        else []
    return ProbeResult(survived=out.exit_code == 2 and not archived,
                       wrong_loaded=len(archived),
                       detail=f"exit {out.exit_code}: {' '.join(out.output.split())[:90]}")


def probe_store_listing(tmp: Path) -> ProbeResult:
    s = da.copy_archive(tmp, da.CRUSOE_DAY, "crusoe")
    real = pipeline.list_archives

    def refuse(root):
        raise objstore.StoreError("s3://prices/snapshots: listing: AccessDenied")

    pipeline.list_archives = refuse
    try:
        out = da.cli_run("reparse", "-p", "crusoe", "-p", "lambda", *da.where(s))
    finally:
        pipeline.list_archives = real
    closed = bool(list(s.runs_dir.glob("*.md")))
    crashed = out.exception is not None and not isinstance(out.exception, SystemExit)
    return ProbeResult(survived=out.exit_code == 1 and closed and not crashed,
                       detail=f"exit {out.exit_code}, run closed {closed}, traceback {crashed}")


PROBES = [
    *[Probe("30.1", f"{p} {d} file cut to half", cut_probe(p, d)) for p, d in CUT],
    Probe("30.1", "crusoe body changed, digest kept", probe_digest),
    Probe("30.7", "100 random bytes after crusoe's file", probe_junk),
    Probe("30.7", "a record in Content-Encoding br", probe_brotli),
    Probe("30.7", "StoreError while listing (team mode)", probe_store_listing),
    Probe("30.8", "gzip bomb 1.5 GB in a warc.gz", probe_bomb),
    Probe("30.8", "import-capture of a 60 MB page", probe_import_60mb),
]
