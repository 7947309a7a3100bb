"""The pipeline end to end on the real Runpod captures, without Prefect."""

import datetime as dt

import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import Capture, append_captures, archive_path, read_captures
from gpuprices.warehouse import lake
from tests.conftest import ROOT
from tests.warehouse_rows import query as _q


@pytest.fixture
def settings(tmp_path, runpod_archive):
    return Settings(data_dir=tmp_path / "data", archive_root=runpod_archive).ensure()


def _replay(settings, provider="runpod"):
    results = pipeline.reparse(settings, provider)
    loading.load(settings, results, pipeline.new_run_id())
    return results


def test_replay_builds_the_warehouse_from_every_dated_capture(settings):
    results = _replay(settings)
    assert [str(r.snapshot_date) for r in results] == [
        "2023-09-29", "2025-09-09", "2026-08-10", "2026-08-25", "2026-09-29"]
    assert all(r.status == "ok" and r.rows > 0 for r in results)
    # H100 SXM on-demand (secure cloud), per docs/providers.md: 4.49 (2023), 2.69 (2025 page),
    # 2.99 (2026 JSON-LD), 3.29 (API, ~2026-08-25), 3.49 (API, ~2026-09-29).
    got = dict(_q(settings, """
        select snapshot_date::varchar, min(price_per_gpu_hour) from offers
        where gpu_model = 'H100-SXM-80GB' and pricing_model = 'on_demand'
        group by 1"""))
    assert got == {"2023-09-29": 4.49, "2025-09-09": 2.69, "2026-08-10": 2.99,
                   "2026-08-25": 3.29, "2026-09-29": 3.49}
    days = _q(settings, "select distinct day::varchar from cheapest_daily order by 1")
    assert [d for (d,) in days] == ["2023-09-29", "2025-09-09", "2026-08-10", "2026-08-25",
                                    "2026-09-29"]


def test_loading_twice_gives_the_same_rows(settings):
    _replay(settings)
    first = _q(settings, "select * from offers order by all")
    assert len(first) == 228
    _replay(settings)
    assert _q(settings, "select * from offers order by all") == first
    assert _q(settings, "select count(*) from runs")[0][0] == 10  # every run is recorded


def test_unmapped_gpu_names_are_quarantined_not_loaded(settings):
    # Every wording of the real captures is mapped: a later night of the real API answer with
    # one GPU renamed to a name no table knows.
    api = next(c for c in read_captures(archive_path(settings.archive_root, "runpod",
                                                     dt.date(2026, 9, 29))) if "graphql" in c.url)
    body = api.body.replace(b'"NVIDIA GeForce RTX 3070"', b'"NVIDIA GeForce RTX 2070"')
    append_captures(settings.archive_root, [Capture(
        provider="runpod", url=api.url, method="POST", body=body,
        captured_at=dt.datetime(2026, 9, 30, 2, tzinfo=dt.UTC))])
    results = _replay(settings)
    api_day = results[-1]
    assert "NVIDIA GeForce RTX 2070" in api_day.unmapped and api_day.quarantined > 0
    q = lake.read_quarantine(settings.lake_root, api_day.snapshot_date, "runpod")
    assert q.num_rows == api_day.quarantined
    assert all(r.startswith("unmapped") for r in q.column("reason").to_pylist()
               if "unmapped" in r)
    assert _q(settings, "select count(*) from offers where sku like '%RTX 2070%'")[0][0] == 0


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"", "empty response body"),
        (b'{"data": {"gpuTypes": [{"id": "NVIDIA H100 80GB HBM3", "securePr', "JSON"),
        (b"<html><body><h1>Pricing</h1><p>Talk to us.</p></body></html>", ""),
    ],
    ids=["empty", "truncated-json", "no-prices"],
)
def test_bad_capture_fails_the_provider_but_keeps_raw_and_last_good(settings, body, problem):
    _replay(settings)
    bad_day = dt.date(2026, 11, 1)
    url = "https://api.runpod.io/graphql" if b"{" in body[:1] or not body else \
        "https://www.runpod.io/pricing"
    append_captures(settings.archive_root, [Capture(
        provider="runpod", url=url, body=body,
        captured_at=dt.datetime(2026, 11, 1, 2, tzinfo=dt.UTC))])
    (res,) = pipeline.reparse(settings, "runpod", [bad_day])
    loading.load(settings, [res], "bad-run")
    assert res.status == "failed"
    assert res.errors and res.errors[0].startswith(f"runpod: {url}: ")
    assert problem in res.errors[0]
    # The raw response stays archived, nothing of that day reaches the lake or offers...
    (kept,) = list(read_captures(archive_path(settings.archive_root, "runpod", bad_day)))
    assert kept.body == body
    assert not lake.partition_path(settings.lake_root, bad_day, "runpod").exists()
    assert _q(settings, "select status, error from runs where run_id = 'bad-run'") == [
        ("failed", res.message)]
    # ...and the last good day stays the provider's latest.
    assert _q(settings, "select distinct snapshot_date::varchar from latest_offers") == [
        ("2026-09-29",)]


def test_real_price_moves_across_layouts_show_in_price_changes(tmp_path, manifest_archive):
    """The same offer read from two page layouts keeps one identity, so a real move between
    captures shows (Nebius H100 1 GPU on-demand $2.95 in 2024-11 → $3.85 in 2026-07; Crusoe
    A100 80GB SXM $1.95 in 2025-05 → $2.30 by 2026-08-22, unchanged on 2026-10-04)."""
    settings = Settings(data_dir=tmp_path / "data",
                        archive_root=manifest_archive("nebius", "crusoe")).ensure()
    results = pipeline.reparse(settings, "nebius") + pipeline.reparse(settings, "crusoe")
    loading.load(settings, results, pipeline.new_run_id())
    moves = _q(settings, """
        select provider, old_date::varchar, new_date::varchar, old_price_per_gpu_hour,
               new_price_per_gpu_hour
        from price_changes where pricing_model = 'on_demand' and gpu_model in
            ('H100-SXM-80GB', 'A100-SXM-80GB') and gpu_count = 1 order by provider""")
    assert moves == [("crusoe", "2025-05-21", "2026-08-22", 1.95, 2.30),
                     ("nebius", "2024-11-15", "2026-07-12", 2.95, 3.85)]


def test_load_puts_archived_ecb_rates_in_fx_rates_so_eur_prices_show(tmp_path,
                                                                      manifest_archive):
    settings = Settings(data_dir=tmp_path / "data",
                        archive_root=manifest_archive("runpod", "ecb")).ensure()
    loading.load(settings, pipeline.reparse(settings, "runpod", [dt.date(2026, 9, 29)]), "r1")
    (usd, eur), = _q(settings, """
        select price_per_gpu_hour_usd, price_per_gpu_hour_eur from cheapest_daily
        where day = '2026-09-29' and gpu_model = 'H100-SXM-80GB'
          and pricing_model = 'on_demand'""")
    # ECB USD rate of 2026-09-29 (the latest on or before the snapshot), from the bundled history.
    (rate,) = _q(settings, "select rate_per_eur from fx_rates where currency = 'USD' "
                           "and date <= '2026-09-29' order by date desc limit 1")[0]
    assert usd == 3.49 and eur == pytest.approx(3.49 / rate) and 1.0 < rate < 1.4


def test_unchanged_ecb_archives_are_not_parsed_again(tmp_path, manifest_archive, monkeypatch):
    from gpuprices.spiders import fx

    settings = Settings(data_dir=tmp_path / "data",
                        archive_root=manifest_archive("runpod", "ecb")).ensure()
    calls = []
    real = fx.load_fx_from_archive
    monkeypatch.setattr(fx, "load_fx_from_archive",
                        lambda root, con: calls.append(root) or real(root, con))
    day = [dt.date(2026, 9, 29)]
    loading.load(settings, pipeline.reparse(settings, "runpod", day), "r1")
    loading.load(settings, pipeline.reparse(settings, "runpod", day), "r2")
    assert len(calls) == 1
    assert _q(settings, "select count(*) > 200000 from fx_rates") == [(True,)]
    # A new ECB capture (here: one archive file rewritten) is loaded on the next run.
    ecb = sorted(settings.archive_root.glob("*/ecb.warc.gz"))[0]
    ecb.write_bytes(ecb.read_bytes())
    loading.load(settings, pipeline.reparse(settings, "runpod", day), "r3")
    assert len(calls) == 2


def test_one_listing_for_several_providers_stores_what_separate_replays_store(tmp_path,
                                                                              monkeypatch):
    """`crawl --replay all` hands one pipeline.Listings to every provider's replay: the
    archive and the lake listed once, each lake file compared with read once until it is
    rewritten. The lake, the quarantine and each day's verdicts are those of replays that list
    and read everything themselves."""
    providers = ("gcp", "runpod", "crusoe", "lambda")  # 20 real days, interleaved in time

    refs = []
    gate = pipeline._gate_snapshots
    monkeypatch.setattr(pipeline, "_gate_snapshots", lambda offers, ref: refs.append(
        (ref.prev_date, ref.prev_rows, sorted(ref.prev_prices.items()),
         sorted((k, sorted(v)) for k, v in ref.band.items()))) or gate(offers, ref))

    def run(name, listings):
        s = Settings(tmp_path / name, ROOT / "snapshots").ensure()
        refs.clear()
        results = [r for p in providers for r in pipeline.replay(s, p, "all", listings=listings)]
        # What each day was judged against (its provider's last day, every provider's band)
        verdicts = [(r.provider, r.snapshot_date, r.status, r.rows, r.quarantined,
                     sorted(map(str, r.moves)), r.degraded) for r in results], list(refs)
        parts = {area: {(d, p): lake.read_offers_file(path).to_pylist()
                        if area == lake.OFFERS_AREA else path.read_bytes()
                        for d, p, path in lake._list_area(s.lake_root, area)}
                 for area in (lake.OFFERS_AREA, lake.QUARANTINE_AREA)}
        return verdicts, parts

    reads = []
    real = pipeline._reference_columns
    monkeypatch.setattr(pipeline, "_reference_columns",
                        lambda path, with_times: reads.append(path) or real(path, with_times))
    alone = run("alone", None)
    separate_reads, reads[:] = len(reads), []
    shared = run("shared", pipeline.Listings())
    assert shared == alone and len(alone[0][0]) == 20 and alone[1][lake.OFFERS_AREA]
    assert sum(1 for prev_date, *_ in alone[0][1] if prev_date) == 20 - len(providers)
    # Each file is read once, and again after this replay rewrote it.
    assert len(reads) == len(set(reads)) < separate_reads
