"""`gpuprices api` as a real server on 127.0.0.1 over the bundled warehouse, called over HTTP:
the rows equal `gpuprices sql` on the same view; JSON, CSV and Parquet; ETag and 304; row
limits; typed errors; POST /rank; and answers go on while the warehouse file is replaced."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import threading
import time
import urllib.parse
import urllib.request

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from gpuprices.flows.cli.main import app
from gpuprices.flows.config import Settings
from gpuprices.warehouse import db
from tests.api_server import ApiServer, get
from tests.bundled_warehouse import GROUP, bundled_settings

pytestmark = GROUP  # one bundled warehouse per run (tests/bundled_warehouse.py)

H100 = "H100-SXM-80GB"


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return bundled_settings(tmp_path_factory)


@pytest.fixture(scope="module")
def server(settings):
    s = ApiServer(settings.data_dir, "--default-rows", "50", "--max-rows", "5000")
    yield s
    s.stop()


def _json(server, path, **headers):
    status, h, body = get(server.url + path, headers)
    assert status == 200, body
    return json.loads(body), h


def test_offers_now_are_the_rows_of_gpuprices_sql(server, settings):
    view_cols = None
    res = CliRunner().invoke(app, [
        "sql", "--format", "json", "--limit", "5000", "--data-dir", str(settings.data_dir),
        "SELECT * FROM latest_offers WHERE gpu_model = 'H100-SXM-80GB'"])
    assert res.exit_code == 0, res.output
    want = json.loads(res.stdout)
    got, h = _json(server, f"/offers/now?gpu_model={H100}&limit=5000")
    assert h["X-Truncated"] == "false" and int(h["X-Rows"]) == len(got) == len(want) > 20
    view_cols = list(want[0])
    key = json.dumps  # rows compared whole, on the view's columns, in any order
    assert sorted(key({c: r[c] for c in view_cols}) for r in got) == sorted(map(key, want))


def test_formats_by_query_and_accept(server):
    path = f"/offers/cheapest?gpu_model={H100}"
    rows, _ = _json(server, path)
    assert {r["pricing_model"] for r in rows} >= {"on_demand", "spot"}
    status, h, body = get(server.url + path + "&format=csv")
    assert status == 200 and h["Content-Type"].startswith("text/csv")
    assert [r["provider"] for r in csv.DictReader(io.StringIO(body.decode()))] == \
        [r["provider"] for r in rows]
    status, h, body = get(server.url + path, {"Accept": "application/vnd.apache.parquet"})
    assert status == 200 and h["Content-Type"] == "application/vnd.apache.parquet"
    t = pq.read_table(io.BytesIO(body))
    assert t["provider"].to_pylist() == [r["provider"] for r in rows]
    assert t["price_per_gpu_hour_usd"].to_pylist() == [r["price_per_gpu_hour_usd"] for r in rows]
    assert get(server.url + path, {"Accept": "image/png"})[0] == 406
    assert get(server.url + path + "&format=xml")[0] == 422


def test_etag_answers_304_until_the_next_load(server):
    path = "/offers/now?provider=lambda"
    status, h, _ = get(server.url + path)
    etag = h["ETag"]
    assert get(server.url + path, {"If-None-Match": etag})[0] == 304
    assert get(server.url + path + "&format=csv", {"If-None-Match": etag})[0] == 200
    assert get(server.url + "/offers/now?provider=aws", {"If-None-Match": etag})[0] == 200


def test_row_limits(server):
    rows, h = _json(server, "/offers/now")
    assert len(rows) == 50 and h["X-Truncated"] == "true"  # the server's default
    rows, h = _json(server, "/offers/now?limit=7")
    assert len(rows) == 7
    status, _, body = get(server.url + "/offers/now?limit=5001")  # past --max-rows
    assert status == 422 and b"limit" in body


def test_history_changes_index_stale(server):
    sku = urllib.parse.quote("lambda:8x NVIDIA H100 SXM 80 GB", safe=":")
    hist, _ = _json(server, f"/offers/{sku}/history?pricing_model=on_demand")
    assert [(r["valid_from"], r["price_per_gpu_hour"]) for r in hist] == \
        [("2024-11-03", 2.99), ("2026-08-22", 3.99)]
    by_id, _ = _json(server, f"/offers/{hist[0]['offer_id']}/history")
    assert by_id == hist
    changes, _ = _json(server, "/changes?days=45&provider=lambda&limit=500")
    assert any(r["sku"] == "8x NVIDIA H100 SXM 80 GB" and r["new_price_per_gpu_hour"] == 3.99
               for r in changes)
    idx, _ = _json(server, f"/index?gpu_model={H100}&start=2026-08-22&end=2026-08-22")
    assert [(r["value"], r["panel"]) for r in idx] == [(3.64677, 19)]
    stale, _ = _json(server, "/stale")
    assert stale and all(r["age_days"] > 14 for r in stale)
    assert get(server.url + "/offers/nothing/history")[0] == 422
    assert get(server.url + "/sql?q=select+1")[0] == 404  # no SQL endpoint


def test_rank_a_workload(server):
    workload = {"name": "qlora-8b", "model": "Llama 3.1 8B", "method": "qlora",
                "seq_len": 2048, "micro_batch": 4, "tokens": 15_000_000,
                "checkpoint_every_tokens": 1_500_000}
    req = urllib.request.Request(server.url + "/rank?top=3", data=json.dumps(workload).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        rows = json.loads(r.read())
    assert rows and all(r["workload"] == "qlora-8b" and r["as_of"] == "2026-10-05"
                        for r in rows)
    costs = [r["cost_per_checkpoint"] for r in rows]
    assert costs[0] == min(costs)
    bad = urllib.request.Request(server.url + "/rank", data=b'{"name": "x", "gpu": "H1OO"}',
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(bad, timeout=60)
    assert exc.value.code == 422


def test_healthz(server):
    h, _ = _json(server, "/healthz")
    assert h["status"] == "ok" and h["snapshot_date"] == "2026-10-05" and h["runs"] == 1


def test_keeps_serving_while_the_warehouse_is_replaced_and_locked(settings, tmp_path):
    """A second warehouse (Lambda's rows removed) is renamed over the file again and again
    while requests run, and a writer holds the file for a while: every answer is whole and
    from one of the two warehouses, and the new one is served once it stays."""
    data = tmp_path / "data"
    data.mkdir()
    live = data / "warehouse.duckdb"
    shutil.copyfile(settings.db_path, live)
    other = tmp_path / "other.duckdb"
    shutil.copyfile(settings.db_path, other)
    con = db.connect(other)
    # A load's traces: a run recorded (the ETag's base changes) and offers gone.
    con.execute("INSERT INTO run_log SELECT 'later', now(), now(), 'lambda'")
    con.execute("DELETE FROM offer_points WHERE provider = 'lambda'")
    con.close()
    server = ApiServer(data)
    try:
        path = server.url + "/offers/now?provider=lambda&limit=5000"
        before = get(path)
        n_before = len(json.loads(before[2]))
        assert n_before > 0
        stop, answers = threading.Event(), []

        def ask():
            while not stop.is_set():
                status, h, body = get(path)
                answers.append((status, len(json.loads(body)) if status == 200 else body))

        threads = [threading.Thread(target=ask) for _ in range(3)]
        for t in threads:
            t.start()
        for i in range(12):  # swap the two files back and forth under the readers
            src = other if i % 2 == 0 else settings.db_path
            tmp = data / f".swap{i}"
            shutil.copyfile(src, tmp)
            os.replace(tmp, live)
            if i == 5:  # a load writing in place holds DuckDB's lock: answers go on
                for _ in range(100):  # the server may be copying it this instant
                    try:
                        writer = db.connect(live)
                        break
                    except db.WarehouseBusy:
                        time.sleep(0.05)
                for _ in range(5):
                    status, _, body = get(path)
                    answers.append((status, len(json.loads(body)) if status == 200 else body))
                writer.close()
        shutil.copyfile(other, data / ".final")
        os.replace(data / ".final", live)
        stop.set()
        for t in threads:
            t.join()
        assert answers and all(s == 200 and n in (n_before, 0) for s, n in answers), answers[:5]
        for _ in range(50):  # a copy tried while the writer held the file is retried after 1 s
            after = get(path)
            if after[0] == 200 and json.loads(after[2]) == []:
                break
            time.sleep(0.2)
        assert after[0] == 200 and json.loads(after[2]) == []
        assert after[1]["ETag"] != before[1]["ETag"]
    finally:
        server.stop()
