"""Bad values inside real captures (issue 30, items 2, 3 and 6): a currency the gates have never
seen is judged in USD or held, one bad value is held alone (the rest of the day loads), an
on-demand price below its own commitment is held."""

import datetime as dt

from gpuprices.flows.pipeline import gates
from gpuprices.flows.pipeline.parsing import parse_archive
from gpuprices.warehouse import identity
from tests.faults import bad_values as bv
from tests.faults import damaged_archive as da
from tests.faults import wrong_data as wd


def _verda_later(tmp_path, **change):
    s = bv.with_ecb(tmp_path, "verda")
    wd.add_capture(s, "verda", bv.VERDA_PAGE, bv.verda_h200(**change), bv.VERDA_LATER)
    res = bv.day_result(bv.replay(s, "verda"), bv.VERDA_LATER.date())
    return s, res, bv.held(s, bv.VERDA_LATER.date(), "verda")


def test_a_jpy_price_is_judged_in_usd_and_held_by_the_band(tmp_path):
    s, res, held = _verda_later(tmp_path, currency="JPY")
    (row,) = held
    assert (row["sku"], row["currency"], row["price_per_hour"]) == (
        "1x H200 SXM5 141GB", "JPY", 4.0)
    assert row["reason"].startswith("band: 0.0253") and "USD (from JPY)/GPU-h outside" in (
        row["reason"])
    assert res.rows == 17 and res.status != "failed"  # the page's other offers load
    assert wd.query(s, "select count(*) from offers where currency <> 'USD'") == [(0,)]
    # The H200 stays at its real 4 USD/h.
    assert wd.query(s, "select min(price_per_gpu_hour) from offers where provider = 'verda' "
                       "and gpu_model = 'H200-141GB' and pricing_model = 'on_demand'") == [
        (4.0,)]


def test_a_currency_the_ecb_lacks_is_a_held_row_with_its_reason(tmp_path):
    s, res, held = _verda_later(tmp_path, currency="XYZ")
    (row,) = held
    assert row["reason"] == ("currency: 'XYZ' has no ECB reference rate on or before "
                             "2026-10-06: the price cannot be converted to USD nor checked "
                             "against a band")
    assert res.quarantine_reasons == {"currency": 1}
    assert wd.query(s, "select count(*) from offers where currency = 'XYZ'") == [(0,)]


def test_a_currency_switch_does_not_escape_the_move_gate():
    """4 USD yesterday, 4 EUR today without any band: the move gate compares them in USD."""
    day = dt.date(2026, 10, 6)
    meta_o = wd.real_row("verda", bv.VERDA_PAGE)
    from gpuprices.spiders.archive import Capture
    cap = Capture(provider="verda", url=bv.VERDA_PAGE, body=bv.verda_h200(currency="EUR"),
                  captured_at=dt.datetime.combine(day, dt.time(12), dt.UTC))
    from gpuprices.spiders.parsers import parse_body_counted
    offers, _ = parse_body_counted(cap.body, cap.meta())
    (h200,) = [o for o in offers if o.currency == "EUR"]
    usd = identity.of_offer(h200)._replace(currency="USD")
    per_usd = {"EUR": 0.1}  # a made-up rate: 4 EUR = 40 USD, a x10 move
    ref = gates.Reference(prev_date=day - dt.timedelta(days=1), prev_prices={usd: (4.0, 4.0)},
                          per_usd=lambda c, d: per_usd.get(c))
    out = gates.run_gates([h200], ref)
    assert out.good == [] and out.bad[0][1].startswith("move: ")
    assert "USD (from EUR)" in out.bad[0][1] and "beyond 3x" in out.bad[0][1]
    assert meta_o  # the real capture this case was made from


def test_runpod_infinity_price_is_held_and_the_other_rows_load(tmp_path):
    s = wd.fresh(tmp_path, "runpod")
    clean = bv.day_result(bv.replay(s, "runpod"), wd.RUNPOD_DAY)
    day = bv.replace_capture(s, "runpod", wd.RUNPOD_API, bv.runpod_infinity())
    res = bv.day_result(bv.replay(s, "runpod"), day)
    assert res.status != "failed", res.errors
    bad = [r for r in bv.held(s, day, "runpod") if r["reason"].startswith("schema:")]
    assert [(r["sku"], r["price_per_hour"]) for r in bad] == [
        ("NVIDIA H100 80GB HBM3/secure", float("inf"))]
    assert bad[0]["reason"] == ("schema: runpod: price inf for NVIDIA H100 80GB HBM3/secure "
                                "is not a number")
    # Every other row of the clean day loads (the H100's secure row is the one held).
    ((loaded,),) = wd.query(s, "select count(*) from offers where provider = 'runpod' and "
                               "snapshot_date = ?", day)
    assert (clean.rows, loaded) == (88, 87)


def test_verda_zero_gpus_is_held_and_the_other_rows_load(tmp_path):
    s = wd.fresh(tmp_path, "verda")
    day = bv.replace_capture(s, "verda", bv.VERDA_PAGE, bv.verda_h200(units="0x"))
    res = bv.day_result(bv.replay(s, "verda"), day)
    assert res.status != "failed" and res.rows == 17
    (row,) = [r for r in bv.held(s, day, "verda") if r["reason"].startswith("schema:")]
    assert row["gpu_count"] == 0 and "GPU count 0 for 0x H200 SXM5 141GB is not positive" in (
        row["reason"])


def test_gcp_history_on_demand_below_its_own_commitment_is_held(tmp_path):
    s = da.copy_archive(tmp_path, dt.date(2023, 1, 12), "gcp")
    parsed = parse_archive(da.day_file(s, dt.date(2023, 1, 12), "gcp"), "gcp")
    out = gates.run_gates(parsed.offers)
    held = {(o.sku, o.region): r for o, r in out.bad if r.startswith("commitment:")}
    assert held[("a2-highgpu-1g", "northamerica-northeast2")] == (
        "commitment: on-demand 0.814064 USD/h is below the 36-month committed price 1.4145 "
        "of the same offer")
    assert len(held) == 5
    loaded = {(o.sku, o.region, o.pricing_model): o.price_per_hour for o in out.good}
    assert loaded[("a2-highgpu-1g", "us-central1", "on_demand")] == 3.673385
    assert ("a2-highgpu-1g", "northamerica-northeast2", "on_demand") not in loaded
    # The A100-40GB on-demand rows that load are the real ones: none below 1 USD/GPU-h.
    assert min(o.price_per_gpu_hour for o in out.good
               if o.gpu_model == "A100-40GB" and o.pricing_model == "on_demand") > 1.0


def test_gcp_history_region_without_its_gpu_is_held_by_the_other_regions(tmp_path):
    """2024-05-17: northamerica-northeast2's A2 prices (on-demand and committed alike) lack the
    GPU, so no commitment is above them; the same offer's median across 40 regions is."""
    day = dt.date(2024, 5, 17)
    s = da.copy_archive(tmp_path, day, "gcp")
    parsed = parse_archive(da.day_file(s, day, "gcp"), "gcp")
    out = gates.run_gates(parsed.offers)
    held = [(o.sku, o.pricing_model, r) for o, r in out.bad if r.startswith("regions:")]
    assert len(held) == 15 and {o for o, _, _ in held} == {
        "a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g", "a2-megagpu-16g"}
    assert ("a2-highgpu-1g", "on_demand", "regions: 0.814064 USD/h in northamerica-northeast2 "
            "is below a third of the median 4.32503 of the same offer in 40 regions") in held
    assert all(o.region == "northamerica-northeast2" for o, r in out.bad
               if r.startswith("regions:"))
    a100 = [o.price_per_gpu_hour for o in out.good
            if o.gpu_model == "A100-40GB" and o.pricing_model == "on_demand"]
    assert len(a100) > 100 and min(a100) > 1.0  # was 0.6053: a2-megagpu-16g at 9.684/16
