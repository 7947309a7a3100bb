"""Quality gates before load, on real captures: moves, bands, row-count drops, schema checks,
quarantine and its release."""

import dataclasses
import datetime as dt
import json
import math

import pytest

from gpuprices.flows import loading
from gpuprices.flows.cli import quarantine as ops_cli
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import gates
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import parse_body
from gpuprices.spiders.providers.aws.history import captures_from_p5_series
from gpuprices.spiders.providers.gcp.history import captures_from_gcp_history
from gpuprices.warehouse import identity, lake
from tests.conftest import FIXTURES, ROOT, manifest_rows
from tests.warehouse_rows import query as q

RUNPOD_API = FIXTURES / "raw" / "runpod" / "runpod_graphql_gpuTypes_ewyluda_fixture.json"
P5 = FIXTURES / "raw" / "aws" / (
    "amorton45_p5.48xlarge_us-east-1_ondemand_daily_2025-04_2026-08.csv")


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", archive_root=tmp_path / "snap").ensure()


def runpod_api(day: dt.date, body: bytes | None = None) -> pipeline.Parsed:
    cap = Capture(provider="runpod", url="https://api.runpod.io/graphql", method="POST",
                  body=body if body is not None else RUNPOD_API.read_bytes(),
                  captured_at=dt.datetime.combine(day, dt.time(2), dt.UTC))
    return pipeline.Parsed(offers=parse_body(cap.body, cap.meta()), errors=[], captures=1)


def edited_api(change) -> bytes:
    """The real API answer with `change(gpu_types)` applied."""
    doc = json.loads(RUNPOD_API.read_bytes())
    change(doc["data"]["gpuTypes"])
    return json.dumps(doc).encode()


def gpu_type(types, gid):
    return next(t for t in types if t["id"] == gid)


def scaled(offers, factor):
    return [dataclasses.replace(o, price_per_hour=o.price_per_hour * factor,
                                price_per_gpu_hour=o.price_per_gpu_hour * factor)
            for o in offers]


D1 = dt.date(2026, 9, 29)
D2 = D1 + dt.timedelta(days=1)


def test_a_move_beyond_3x_is_quarantined_and_a_smaller_one_loads(settings):
    pipeline.store_day(settings, "runpod", D1, runpod_api(D1))

    def change(types):
        gpu_type(types, "NVIDIA B200")["securePrice"] = 6.79 * 4  # x4: quarantined
        gpu_type(types, "NVIDIA A40")["securePrice"] = 0.49 * 2  # x2: a real-looking move

    res = pipeline.store_day(settings, "runpod", D2, runpod_api(D2, edited_api(change)))
    loading.load(settings, [res], "r2")
    assert res.status == "ok" and res.quarantine_reasons.get("move") == 1
    quarantined = lake.read_quarantine(settings.lake_root, D2, "runpod").to_pylist()
    (moved,) = [r for r in quarantined if r["reason"].startswith("move")]
    assert moved["gpu_model"] == "B200-180GB" and moved["price_per_hour"] == pytest.approx(27.16)
    assert "6.79 -> 27.16" in moved["reason"] and "beyond 3x" in moved["reason"]
    assert q(settings, "select count(*) from offers where price_per_hour > 27") == [(0,)]
    a40 = [m for m in res.moves
           if m.ident.gpu_model == "A40-48GB" and m.ident.pricing_model == "on_demand"]
    assert [(m.old, m.new) for m in a40] == [(0.49, 0.98)]
    # D1, written to the lake and never loaded, is loaded too: the lake is the source of truth.
    assert q(settings, "select snapshot_date, price_per_hour from offers "
                       "where gpu_model = 'A40-48GB' and pricing_model = 'on_demand' "
                       "order by 1") == [(D1, 0.49), (D2, 0.98)]


@pytest.mark.parametrize(("days", "factor", "held"), [
    (9, 4, True),  # x4 nine days later: beyond 3x, held (the 7-day window let it through)
    (40, 4, False),  # x4 after more than a month: within the long-gap 6x, loads
    (400, 10, True),  # x10 after more than a year: still held
])
def test_a_move_beyond_its_limit_is_held_whatever_the_gap(settings, days, factor, held):
    pipeline.store_day(settings, "runpod", D1, runpod_api(D1))
    later = D1 + dt.timedelta(days=days)
    body = edited_api(lambda t: gpu_type(t, "NVIDIA B200").__setitem__("securePrice",
                                                                       6.79 * factor))
    res = pipeline.store_day(settings, "runpod", later, runpod_api(later, body))
    b200 = [m for m in res.moves if m.ident.sku == "NVIDIA B200/secure"]
    if factor < 10:
        assert [(m.old, round(m.new, 2), m.quarantined) for m in b200] == [
            (6.79, round(6.79 * factor, 2), held)]
        assert res.quarantine_reasons.get("move", 0) == int(held)
    else:  # 67.90 /GPU-h is also more than twice the highest B200 price known: the band holds it
        assert res.quarantine_reasons.get("band") == 1 and "move" not in res.quarantine_reasons
    rows = lake.read_partition(settings.lake_root, later, "runpod").to_pylist()
    assert any(r["sku"] == "NVIDIA B200/secure" for r in rows) is not held


def test_real_aws_p5_price_cut_of_june_2025_loads(settings):
    caps = {c.snapshot_date: c for c in captures_from_p5_series(P5)}
    results = []
    for day in (dt.date(2025, 6, 4), dt.date(2025, 6, 5)):
        cap = caps[day]
        parsed = pipeline.Parsed(parse_body(cap.body, cap.meta()), [], 1)
        results.append(pipeline.store_day(settings, "aws", day, parsed))
    loading.load(settings, results, "p5")
    assert [r.status for r in results] == ["ok", "ok"] and results[1].quarantined == 0
    (move,) = results[1].moves
    assert (move.old, move.new) == (98.32, 55.04) and round(move.pct, 1) == -44.0
    assert q(settings, "select price_per_hour from latest_offers where provider = 'aws'") == [
        (55.04,)]


@pytest.fixture(scope="module")
def gcp_days():
    caps = {c.snapshot_date: c for c in captures_from_gcp_history(FIXTURES / "history" / "gcp")}
    return {d: parse_body(c.body, c.meta()) for d, c in caps.items()
            if d in (dt.date(2026, 1, 22), dt.date(2026, 7, 30))}


@pytest.mark.parametrize("factor", [100, 1 / 100, 730])
def test_the_band_catches_unit_errors_on_real_gcp_history(settings, gcp_days, factor):
    old, new = dt.date(2026, 1, 22), dt.date(2026, 7, 30)  # 189 days apart
    pipeline.store_day(settings, "gcp", old, pipeline.Parsed(gcp_days[old], [], 1))
    ref = pipeline.reference(settings, "gcp", new)
    assert ref.prev_date == old and ref.band  # the band and the (long-gap) move gate apply
    # The real next snapshot passes the band...
    genuine = gates.run_gates(gcp_days[new], ref)
    assert not [r for _, r in genuine.bad if r.startswith("band")]
    # ...and the same prices in the wrong unit do not.
    wrong = gates.run_gates(scaled(gcp_days[new], factor), ref)
    checked = [o for o in wrong.good + [o for o, _ in wrong.bad]
               if gates.band_for(ref, o) is not None]
    assert len(checked) > 1000
    banded = {id(o) for o, r in wrong.bad if r.startswith("band")}
    assert all(id(o) in banded for o in checked)
    for o in wrong.good:  # what still loads is only what the band could not judge
        assert gates.band_for(ref, o) is None


def test_a_halved_row_count_marks_the_provider_degraded_but_loads(settings):
    pipeline.store_day(settings, "runpod", D1, runpod_api(D1))
    body = edited_api(lambda types: types.__delitem__(slice(0, len(types) * 2 // 3)))
    res = pipeline.store_day(settings, "runpod", D2, runpod_api(D2, body))
    assert res.status == "degraded" and res.rows > 0
    assert "row count dropped" in res.degraded and str(D1) in res.degraded
    assert lake.partition_path(settings.lake_root, D2, "runpod").exists()


def test_schema_gate_quarantines_broken_rows(settings):
    offers = runpod_api(D1).offers
    first = offers[0]
    broken = [
        dataclasses.replace(first, price_per_hour=math.nan, price_per_gpu_hour=math.nan),
        dataclasses.replace(first, sku="x1", price_per_hour=-1.0, price_per_gpu_hour=-1.0),
        dataclasses.replace(first, sku="x2", currency="dollars"),
        dataclasses.replace(first, sku="x3", price_per_gpu_hour=first.price_per_hour * 9),
        dataclasses.replace(first, sku="x4", pricing_model="cheap"),
    ]
    out = gates.run_gates(broken)
    assert out.good == [] and len(out.bad) == 5
    assert all(r.startswith("schema:") for _, r in out.bad)
    res = pipeline.store_day(settings, "runpod", D1,
                             pipeline.Parsed(offers[1:] + broken, [], 1))
    assert res.quarantine_reasons["schema"] == 5
    held = lake.read_quarantine(settings.lake_root, D1, "runpod")
    assert held.num_rows == res.quarantined
    loaded = lake.read_partition(settings.lake_root, D1, "runpod")
    assert set(loaded.column("sku").to_pylist()).isdisjoint({"x1", "x2", "x3", "x4"})


def _b200_moved_and_an_unknown_name(types):
    gpu_type(types, "NVIDIA B200")["securePrice"] = 27.16
    # every wording of the real answer is mapped now: one renamed to a name no table knows
    gpu_type(types, "NVIDIA GeForce RTX 3070")["id"] = "NVIDIA GeForce RTX 2070"


def test_release_loads_reviewed_rows_once_and_survives_a_reparse(settings):
    pipeline.store_day(settings, "runpod", D1, runpod_api(D1))

    body = edited_api(_b200_moved_and_an_unknown_name)
    res = pipeline.store_day(settings, "runpod", D2, runpod_api(D2, body))
    loading.load(settings, [res], "r")
    n_unmapped = res.quarantine_reasons["unmapped"]
    assert n_unmapped >= 1
    with pytest.raises(lake.ContractError, match="no GPU model"):
        ops_cli.release_rows(settings, D2, "runpod", None)  # unmapped rows cannot be offers
    released, left = ops_cli.release_rows(settings, D2, "runpod", "move")
    assert (released, left) == (1, n_unmapped)
    sql = "select count(*) from offers where gpu_model = 'B200-180GB' and price_per_hour = 27.16"
    assert q(settings, sql) == [(1,)]
    # A rerun of the same release finds nothing left to move: no duplicate.
    assert ops_cli.release_rows(settings, D2, "runpod", "move") == (0, n_unmapped)
    # A reparse of that day lets the reviewed row through instead of quarantining it again.
    again = pipeline.store_day(settings, "runpod", D2, runpod_api(D2, body))
    loading.load(settings, [again], "r3")
    assert "move" not in again.quarantine_reasons
    assert q(settings, sql) == [(1,)]
    # The release is recorded with the identity by name.
    (rec,) = [json.loads(line) for line in
              pipeline.releases_path(settings).read_text().splitlines()]
    # Where the price was read is not part of it (identity VERSION 3).
    assert rec["identity"]["gpu_model"] == "B200-180GB" and "source" not in rec["identity"]


def test_a_release_recorded_by_position_still_lets_its_row_through(settings):
    """released.jsonl lines written before identities were recorded by name (the gates' tuple
    of then, by position) still exempt their row from the move gate on a reparse."""
    pipeline.store_day(settings, "runpod", D1, runpod_api(D1))
    body = edited_api(lambda t: gpu_type(t, "NVIDIA B200").__setitem__("securePrice", 27.16))
    res = pipeline.store_day(settings, "runpod", D2, runpod_api(D2, body))
    assert res.quarantine_reasons.get("move") == 1
    (row,) = [r for r in lake.read_quarantine(settings.lake_root, D2, "runpod").to_pylist()
              if r["reason"].startswith("move")]
    extra = json.loads(row["extra"])
    old = [row["sku"], row["region"], row["gpu_model"], row["pricing_model"],
           row["commitment_months"], row["effective_from"], row["currency"],
           *(extra.get(k) for k in ("source", "variant", "price_kind", "provider_term", "tier"))]
    with pipeline.releases_path(settings).open("a") as fh:
        fh.write(json.dumps({"date": str(D2), "provider": "runpod", "identity": old,
                             "price_per_hour": row["price_per_hour"],
                             "released_at": "2026-10-01T08:00:00+00:00"}, default=str) + "\n")
    again = pipeline.store_day(settings, "runpod", D2, runpod_api(D2, body))
    assert "move" not in again.quarantine_reasons and again.quarantined == res.quarantined - 1


def test_quarantine_commands_list_and_release(tmp_path, runpod_archive):
    from gpuprices.spiders.archive import append_captures
    from tests.cli_batch import gp_batch

    body = edited_api(_b200_moved_and_an_unknown_name)
    append_captures(runpod_archive, [Capture(
        provider="runpod", url="https://api.runpod.io/graphql", method="POST", body=body,
        captured_at=dt.datetime(2026, 9, 30, 2, tzinfo=dt.UTC))])
    args = ["--data-dir", tmp_path / "data"]
    # The six command lines in order in one child process (tests/cli_batch.py); each result is
    # its own command line's.
    crawl, listed, unmapped, moved, count, after = gp_batch(
        ["crawl", "--replay", "all", "-p", "runpod", *args, "--archive", runpod_archive],
        ["quarantine", "list", "--date", "2026-09-30", *args],
        ["quarantine", "release", "--date", "2026-09-30", "-p", "runpod",
         "--reason-like", "unmapped", *args],
        ["quarantine", "release", "--date", "2026-09-30", "-p", "runpod",
         "--reason-like", "move:", *args],
        ["sql", "select count(*) as n from offers where price_per_hour = 27.16", *args],
        ["quarantine", "list", "--date", "2026-09-30", *args])
    assert crawl.returncode == 0
    r = listed
    assert r.returncode == 0 and "runpod 2026-09-30" in r.stdout
    assert "move: NVIDIA B200" in r.stdout and "unmapped GPU wording" in r.stdout
    r = unmapped
    assert r.returncode == 2 and "no GPU model" in r.stderr
    r = moved
    assert r.returncode == 0 and "released 1 rows of runpod 2026-09-30" in r.stdout
    r = count
    assert r.stdout.splitlines() == ["n", "-", "1"]
    r = after
    assert "move:" not in r.stdout


def test_one_day_read_from_the_api_and_the_page_keeps_the_apis_price(settings):
    """Runpod's real API answer and its real 2023 pricing page (whose SKUs are the API's GPU
    ids), as one night that read both would file them: one price per offer reaches the lake,
    the page's rows are quarantined as superseded, and the run summary counts them."""
    page_row = next(r for r in manifest_rows("runpod") if "nextdata" in r["file"])
    page = Capture(provider="runpod", url=page_row["url"], method="GET",
                   body=(ROOT / page_row["file"]).read_bytes(),
                   captured_at=dt.datetime.combine(D1, dt.time(2, 5), dt.UTC))
    api = runpod_api(D1)
    offers = api.offers + parse_body(page.body, page.meta())
    res = pipeline.store_day(settings, "runpod", D1,
                             pipeline.Parsed(offers=offers, errors=[], captures=2))
    assert res.quarantine_reasons["superseded"] == 33  # 27 before GeForce names were mapped
    held = [r["reason"] for r in lake.read_quarantine(settings.lake_root, D1, "runpod")
            .to_pylist() if r["reason"].startswith("superseded")]
    assert "superseded: same offer read from the api at 3.49; page said 4.49" in held
    rows = lake.read_partition(settings.lake_root, D1, "runpod").to_pylist()
    idents = [identity.of_row(r) for r in rows]
    assert len(idents) == len(set(idents)) == res.rows
    h100 = [r for r in rows if r["sku"] == "NVIDIA H100 80GB HBM3/secure"]
    assert [(r["price_per_hour"], json.loads(r["extra"])["source"]) for r in h100] == [
        (3.49, "api")]
    summary = loading.load(settings, [res], "r").read_text()
    assert "superseded: 33" in summary
    assert q(settings, "SELECT count(*) FROM price_changes") == [(0,)]
    # A reviewer who prefers the page's price releases it; the reparse keeps that one instead.
    assert ops_cli.release_rows(settings, D1, "runpod", "api at 3.49; page said 4.49")[0] == 1
    again = pipeline.store_day(settings, "runpod", D1,
                               pipeline.Parsed(offers=offers, errors=[], captures=2))
    loading.load(settings, [again], "r2")
    assert again.quarantine_reasons["superseded"] == 33
    assert "superseded: same offer read from the page at 4.49; api said 3.49" in [
        r["reason"] for r in lake.read_quarantine(settings.lake_root, D1, "runpod").to_pylist()]
    assert q(settings, "SELECT price_per_hour FROM offers "
                       "WHERE sku = 'NVIDIA H100 80GB HBM3/secure'") == [(4.49,)]
