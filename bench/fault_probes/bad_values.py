"""Probes for issue 30's items 2, 3 and 6: bad values inside real captures (a currency the gates
never saw, one the ECB lacks, a price of Infinity, "0x H200", the GCP history's on-demand row
below its own commitment)."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
from pathlib import Path

from bench.fault_probes import Probe, ProbeResult
from gpuprices.flows import loading
from gpuprices.flows.pipeline import steps as pipeline
from tests.faults import bad_values as bv
from tests.faults import damaged_archive as da
from tests.faults import wrong_data as wd


def currency_probe(code: str):
    def run(tmp: Path) -> ProbeResult:
        s = bv.with_ecb(tmp, "verda")
        wd.add_capture(s, "verda", bv.VERDA_PAGE, bv.verda_h200(currency=code), bv.VERDA_LATER)
        res = bv.day_result(bv.replay(s, "verda"), bv.VERDA_LATER.date())
        ((wrong,),) = wd.query(s, "select count(*) from offers where currency <> 'USD'")
        lost = max(17 - res.rows, 0)
        (held,) = bv.held(s, bv.VERDA_LATER.date(), "verda")
        return ProbeResult(survived=wrong == 0 and lost == 0, rows_lost=lost,
                           wrong_loaded=wrong, detail=held["reason"][:100])
    return run


def probe_infinity(tmp: Path) -> ProbeResult:
    s = wd.fresh(tmp, "runpod")
    clean = bv.day_result(bv.replay(s, "runpod"), wd.RUNPOD_DAY).rows
    day = bv.replace_capture(s, "runpod", wd.RUNPOD_API, bv.runpod_infinity())
    res = bv.day_result(bv.replay(s, "runpod"), day)
    ((wrong,),) = wd.query(s, "select count(*) from offers where not isfinite(price_per_hour)")
    lost = max(clean - 1 - res.rows, 0)
    return ProbeResult(survived=res.status != "failed" and lost == 0 and wrong == 0,
                       rows_lost=lost, wrong_loaded=wrong,
                       detail=f"{res.rows}/{clean} rows, {res.quarantine_reasons} held")


def probe_zero_gpus(tmp: Path) -> ProbeResult:
    s = wd.fresh(tmp, "verda")
    day = bv.replace_capture(s, "verda", bv.VERDA_PAGE, bv.verda_h200(units="0x"))
    res = bv.day_result(bv.replay(s, "verda"), day)
    ((wrong,),) = wd.query(s, "select count(*) from offers where gpu_count <= 0")
    lost = max(17 - res.rows, 0)
    return ProbeResult(survived=res.status != "failed" and lost == 0 and wrong == 0,
                       rows_lost=lost, wrong_loaded=wrong,
                       detail=f"{res.rows} rows, {res.quarantine_reasons} held")


def below_probe(day: dt.date):
    return lambda tmp: _probe_below(tmp, day)


def _probe_below(tmp: Path, day: dt.date) -> ProbeResult:
    s = da.copy_archive(tmp, day, "gcp")
    results = pipeline.replay(s, "gcp", day.isoformat())
    with contextlib.redirect_stdout(io.StringIO()):
        loading.load(s, results, pipeline.new_run_id())
    ((wrong,),) = wd.query(s, "select count(*) from offers where pricing_model = 'on_demand' "
                              "and gpu_model = 'A100-40GB' and price_per_gpu_hour < 1")
    ((cheapest,),) = wd.query(s, "select min(price_per_gpu_hour) from offers where "
                                 "pricing_model = 'on_demand' and gpu_model = 'A100-40GB'")
    return ProbeResult(survived=wrong == 0, wrong_loaded=wrong,
                       detail=f"{results[0].quarantine_reasons} held; cheapest on-demand "
                              f"A100-40GB {cheapest:g}/GPU-h")


PROBES = [
    Probe("30.2", "verda H200 priced in JPY", currency_probe("JPY")),
    Probe("30.2", "verda H200 priced in XYZ", currency_probe("XYZ")),
    Probe("30.3", "runpod H100 securePrice Infinity", probe_infinity),
    Probe("30.3", "verda '0x H200' (gpu_count 0)", probe_zero_gpus),
    Probe("30.6", "gcp 2023-01-12 on-demand < commitment", below_probe(dt.date(2023, 1, 12))),
    Probe("30.6", "gcp 2024-05-17 region without its GPU", below_probe(dt.date(2024, 5, 17))),
]
