"""Probes for the reliability issue's items 1-5: wrong data that used to load quietly. Each runs
on the real bundled captures (tests/faults/wrong_data.py builds them) in its own folder."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from typer.testing import CliRunner

from bench.fault_probes import Probe, ProbeResult
from gpuprices.flows.cli import main as cli
from gpuprices.spiders.archive import FutureCaptureError
from gpuprices.spiders.importer import import_capture
from tests.faults import wrong_data as wd


def probe_x10(tmp: Path) -> ProbeResult:
    s = wd.fresh(tmp, "crusoe")
    results, later = wd.x10_nine_days_later(s)
    res = next(r for r in results if r.snapshot_date == later)
    ((wrong,),) = wd.query(s, "select count(*) from offers where snapshot_date = ?", later)
    ((h100,),) = wd.query(s, "select price_per_hour from latest_offers where provider = "
                             "'crusoe' and gpu_model = 'H100-SXM-80GB' and pricing_model = "
                             "'on_demand'")
    return ProbeResult(survived=wrong == 0 and h100 == 3.9, wrong_loaded=wrong,
                       detail=f"{res.quarantined} rows held ({res.quarantine_reasons}); "
                              f"H100 stays {h100}")


def probe_future(tmp: Path) -> ProbeResult:
    s = wd.fresh(tmp, "crusoe")
    row = wd.real_row("crusoe", wd.CRUSOE_PAGE)
    try:
        import_capture(s.archive_root, wd.ROOT / row["file"], "crusoe", row["url"], wd.FUTURE)
        at_import = "archived"
    except FutureCaptureError:
        at_import = "refused"
    with wd.clock_unchecked():  # the same capture copied into the archive by hand
        wd.add_capture(s, "crusoe", wd.CRUSOE_PAGE, wd.crusoe_times(1), wd.FUTURE)
    results = wd.replay(s, "crusoe")
    ((wrong,),) = wd.query(s, "select count(*) from offers where snapshot_date > current_date")
    ((as_of,),) = wd.query(s, "select as_of from latest_snapshot")
    at_replay = "refused" if any("refused" in r.message for r in results) else "loaded"
    return ProbeResult(survived=at_import == at_replay == "refused" and wrong == 0,
                       wrong_loaded=wrong,
                       detail=f"2027-06-01 capture {at_import} at import, {at_replay} at "
                              f"replay; latest snapshot {as_of}")


def probe_empty_later(tmp: Path) -> ProbeResult:
    s = wd.fresh(tmp, "runpod")
    clean, _ = wd.empty_later_capture(s)
    ((loaded,),) = wd.query(s, "select count(*) from offers where snapshot_date = ?",
                            wd.RUNPOD_DAY)
    said = "the later capture of" in wd.summary_text(s)
    return ProbeResult(survived=loaded == clean.rows and said,
                       rows_lost=max(clean.rows - loaded, 0),
                       detail=f"{loaded}/{clean.rows} rows from the earlier good capture; "
                              f"summary names the failed later one: {said}")


def probe_half_na(tmp: Path) -> ProbeResult:
    s = wd.fresh(tmp, "runpod")
    res, n_na = wd.half_na_night(s)
    counted = res.skipped.get("no price ('N/A')", 0)
    said = "## Rows the parsers passed over" in wd.summary_text(s)
    return ProbeResult(survived=counted == n_na and said,
                       detail=f"{n_na} prices 'N/A': {counted} rows counted as skipped "
                              f"({sum(res.skipped.values())} skipped in all), in the summary: "
                              f"{said}")


def probe_edited_partition(tmp: Path) -> ProbeResult:
    s = wd.fresh(tmp, "runpod")
    wd.replay(s, "runpod")
    path = wd.edit_partition_by_hand(s, wd.RUNPOD_DAY, "runpod", 100)
    s.db_path.unlink()
    with contextlib.redirect_stdout(io.StringIO()):
        out = CliRunner().invoke(cli.app, ["load", "--data-dir", str(s.data_dir),
                                           "--archive", str(s.archive_root)])
    ((wrong,),) = wd.query(s, "select count(*) from offers where snapshot_date = ?",
                           wd.RUNPOD_DAY)
    named = str(path) in " ".join(out.output.split())
    return ProbeResult(survived=out.exit_code == 1 and named and wrong == 0,
                       wrong_loaded=wrong,
                       detail=f"load exit {out.exit_code}, partition named: {named}")


PROBES = [
    Probe("1", "crusoe page x10, 9 days later", probe_x10),
    Probe("2", "capture dated 2027-06-01", probe_future),
    Probe("3", "empty capture later the same day", probe_empty_later),
    Probe("4", "half the prices 'N/A'", probe_half_na),
    Probe("5", "lake partition edited by hand x100", probe_edited_partition),
]
