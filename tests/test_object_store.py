"""The archive, the lake and the published warehouse on a real S3-compatible server (SeaweedFS on
loopback, tests/s3_server.py): the whole replay through the store builds the warehouse a
local-disk replay builds, and the faults a store brings (it stops mid-upload, a second writer
races, wrong credentials) lose nothing and are said."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.ops import run_journal
from gpuprices.flows.pipeline import load_steps, usd_rates
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import ArchiveSession, append_captures, list_archives, read_captures
from gpuprices.warehouse import db, lake, lake_sync, objstore, publish
from gpuprices.warehouse.contract import PROVIDERS
from tests import test_gates
from tests.bundled_warehouse import GROUP, bundled_settings
from tests.conftest import ROOT
from tests.objstore_cli import gp
from tests.test_bulk_load import STORED

REPO_SNAPSHOTS = ROOT / "snapshots"
# lake_loads stamps differ by nature (a file's mtime, an object's ETag); the rest must not.
# The ECB rates come from the archive too (on the store in one run, on disk in the other).
COMPARED = STORED | {"lake_loads": "SELECT snapshot_date, provider, file_size FROM lake_loads "
                                   "ORDER BY ALL",
                     "fx_rates": "SELECT count(*), sum(hash(date, currency, rate_per_eur)) "
                                 "FROM fx_rates"}


def _replay(settings: Settings, providers) -> list:
    """What `gpuprices crawl --replay all` does, in this process."""
    run_id = pipeline.new_run_id()
    run_journal.begin(settings, run_id, list(providers))
    results, listings = [], pipeline.Listings()
    for p in providers:
        results.extend(pipeline.replay(settings, p, "all", listings=listings))
    loading.load(settings, results, run_id)
    return results


_PROVIDER = 2  # the column of `provider` in an offers row (after snapshot_date, captured_at)


def _stored(db_path: Path) -> dict:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return {name: con.execute(sql).fetchall() for name, sql in COMPARED.items()}
    finally:
        con.close()


def _copy_archive(src: Path, dest: str, providers=None) -> int:
    """Archive the captures of a local archive into `dest` (the archive's own append)."""
    n = 0
    for _day, provider, path in list_archives(src):
        if providers is None or provider in providers:
            n += len(append_captures(dest, list(read_captures(path))))
    return n


# The command line in this process (tests/objstore_cli.py): its answers are what is checked.
_gp = gp


def _providers_with_archives() -> list[str]:
    """In the registry's order: the order the bundled warehouse replays and loads them in (the
    order offers are first seen in numbers them)."""
    held = {p for _d, p, _path in pipeline.archives(
        Settings(data_dir=Path("."), archive_root=REPO_SNAPSHOTS))}
    return [p for p in PROVIDERS if p in held]


@GROUP
def test_whole_replay_through_the_store_builds_the_local_warehouse(s3, tmp_path,
                                                                   tmp_path_factory):
    providers = _providers_with_archives()
    # The local-disk replay of every archived provider-day: the run's bundled warehouse
    # (tests/bundled_warehouse.py, the same replay and load), built once for all its readers.
    local = bundled_settings(tmp_path_factory)
    assert local.archive_root == REPO_SNAPSHOTS and providers == list(PROVIDERS)

    files = _copy_archive(REPO_SNAPSHOTS, f"{s3}/archive")
    assert files == len(list_archives(REPO_SNAPSHOTS))
    remote = Settings(data_dir=tmp_path / "remote", archive_root=objstore.location(
        f"{s3}/archive"), lake=objstore.location(f"{s3}/lake")).ensure()
    results = _replay(remote, providers)
    assert not [e for r in results for e in r.errors if "could not" in e]
    assert not (remote.data_dir / "lake").exists()  # nothing of the lake went to local disk
    assert len(lake.list_partitions(remote.lake_root)) == len(lake.list_partitions(
        local.lake_root)) > 100
    want = _stored(local.db_path)
    assert want["offers"] and _stored(remote.db_path) == want

    # Anyone rebuilds it from the store's lake (a few providers: the load is the same code
    # for all), and the load publishes it for `pull`.
    env = {"GPUPRICES_LAKE": f"{s3}/lake", "GPUPRICES_ARCHIVE": f"{s3}/archive",
           "GPUPRICES_PUBLISH": f"{s3}/shared"}
    some = ("runpod", "nebius", "crusoe")
    r = _gp("load", *(a for p in some for a in ("-p", p)), "--data-dir",
            str(tmp_path / "rebuilt"), env=env)
    assert r.returncode == 0, r.stderr
    assert f"published {s3}/shared/warehouse/" in r.stderr
    rebuilt = _stored(tmp_path / "rebuilt" / "warehouse.duckdb")["offers"]
    assert rebuilt and rebuilt == [row for row in want["offers"] if row[_PROVIDER] in some]
    r = _gp("pull", "--to", str(tmp_path / "pulled.duckdb"), env=env)
    assert r.returncode == 0, r.stderr
    assert "checked" in r.stdout
    assert _stored(tmp_path / "pulled.duckdb") == _stored(tmp_path / "rebuilt" /
                                                          "warehouse.duckdb")


@pytest.fixture
def runpod_lake(s3, tmp_path, runpod_archive):
    """Runpod's real captures replayed into a lake on the store (the archive stays local)."""
    settings = Settings(data_dir=tmp_path / "data", archive_root=runpod_archive,
                        lake=objstore.location(f"{s3}/lake")).ensure()
    results = _replay(settings, ["runpod"])
    assert results and all(r.status != "failed" for r in results)
    return settings


def _partitions(settings) -> dict:
    return {(d, p): lake.read_partition(settings.lake_root, d, p)
            for d, p, _ in lake.list_partitions(settings.lake_root)}


def test_a_store_that_stops_mid_upload_leaves_the_last_good_lake(runpod_lake, s3_server,
                                                                 monkeypatch):
    before = _partitions(runpod_lake)
    real_put = objstore.obstore.put
    stopped = []

    def put_then_die(store, key, *args, **kwargs):
        if "/offers/" in key and not stopped:  # the store goes away as the upload starts
            stopped.append(key)
            s3_server.stop()
        return real_put(store, key, *args, **kwargs)

    monkeypatch.setattr(objstore.obstore, "put", put_then_die)
    try:
        results = pipeline.replay(runpod_lake, "runpod", "all")
    finally:
        s3_server.start()
    failed = [r for r in results if r.status == "failed"]
    assert failed and len(failed) == len(results)
    first = failed[0].errors[-1]
    # The run names the provider and the object it could not write.
    assert first.startswith("runpod: could not write the lake partition")
    assert f"key {stopped[0]!r}" in first
    after = _partitions(runpod_lake)  # each checked against its recorded SHA-256
    assert after.keys() == before.keys()
    assert all(after[k].equals(before[k]) for k in before)


def test_two_writers_of_one_partition_one_wins_the_other_is_told(runpod_lake, monkeypatch):
    (day, provider, path), *_ = lake.list_partitions(runpod_lake.lake_root)
    table = lake.read_partition(runpod_lake.lake_root, day, provider)
    mine, theirs = table.slice(0, 1), table.slice(1, 1)
    real_head = objstore.StorePath.head
    raced = []

    def head_then_other_writer(self):
        seen = real_head(self)
        if self == path and not raced:  # the other writer writes after this one looked
            raced.append(True)
            lake.write_partition(runpod_lake.lake_root, day, provider, theirs)
        return seen

    monkeypatch.setattr(objstore.StorePath, "head", head_then_other_writer)
    with pytest.raises(objstore.ConflictError) as lost:
        lake.write_partition(runpod_lake.lake_root, day, provider, mine)
    assert str(path) in str(lost.value) and "another writer" in str(lost.value)
    assert f"snapshot_date={day}/provider={provider}" in str(lost.value)
    assert lake.read_partition(runpod_lake.lake_root, day, provider).to_pylist() == \
        theirs.to_pylist()


def test_two_writers_of_one_archive_day_keep_both_records(s3, runpod_archive, monkeypatch):
    (_day, _p, src), *_ = list_archives(runpod_archive)
    caps = list(read_captures(src))
    root = f"{s3}/archive"
    (dest,) = append_captures(root, caps[:1])
    real_put = objstore.StorePath.put
    raced = []

    def put_after_other_writer(self, data, **kwargs):
        if self == dest and not raced:
            raced.append(True)
            append_captures(root, caps[:1])  # the other writer appends first
        return real_put(self, data, **kwargs)

    monkeypatch.setattr(objstore.StorePath, "put", put_after_other_writer)
    append_captures(root, caps[:1])
    assert raced and len(list(read_captures(dest))) == 3


def test_wrong_credentials_are_said_and_nothing_is_written(s3, s3_server, tmp_path,
                                                          runpod_archive):
    env = {"AWS_SECRET_ACCESS_KEY": "not-the-secret", "GPUPRICES_LAKE": f"{s3}/lake"}
    r = _gp("crawl", "--replay", "all", "-p", "runpod", "--data-dir", str(tmp_path / "d"),
            "--archive", str(runpod_archive), env=env)
    assert r.returncode != 0
    assert "access denied" in r.stderr and "bucket 'gpuprices'" in r.stderr
    assert "Traceback" not in r.stderr
    assert objstore.location(s3).walk() == []


def test_a_partition_not_written_by_the_pipeline_is_refused(s3):
    path = lake.partition_path(f"{s3}/lake", "2025-01-02", "runpod")
    path.put(b"PAR1 not a partition", expect=None)
    with pytest.raises(lake.ChecksumError, match="differs from nothing"):
        lake.read_partition(f"{s3}/lake", "2025-01-02", "runpod")


def test_credentials_come_from_the_variables_before_the_shared_files(tmp_path):
    creds, conf = tmp_path / "credentials", tmp_path / "config"
    creds.write_text("[team]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n")
    conf.write_text("[profile team]\nregion = eu-west-3\nendpoint_url = http://127.0.0.1:9\n")
    files = {"AWS_SHARED_CREDENTIALS_FILE": str(creds), "AWS_CONFIG_FILE": str(conf),
             "AWS_PROFILE": "team"}
    assert objstore.aws_config(files) == {
        "access_key_id": "FILEKEY", "secret_access_key": "FILESECRET",
        "region": "eu-west-3", "endpoint": "http://127.0.0.1:9"}
    env = files | {"AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "ENVSECRET",
                   "AWS_DEFAULT_REGION": "us-west-2", "AWS_ENDPOINT_URL_S3": "http://h:1"}
    assert objstore.aws_config(env) == {
        "access_key_id": "ENVKEY", "secret_access_key": "ENVSECRET", "region": "us-west-2",
        "endpoint": "http://h:1"}


def test_quarantine_release_on_a_lake_in_the_store(s3, tmp_path):
    # The same review, release and reparse as on disk (tests/test_gates.py), the lake and its
    # released.jsonl on the store.
    settings = Settings(data_dir=tmp_path / "data", archive_root=tmp_path / "snap",
                        lake=objstore.location(f"{s3}/lake")).ensure()
    test_gates.test_release_loads_reviewed_rows_once_and_survives_a_reparse(settings)
    assert lake.list_quarantine(settings.lake_root)
    assert not (tmp_path / "data" / "lake").exists()


def test_pull_refuses_a_copy_that_differs_from_its_pointer_and_keeps_the_local_file(s3,
                                                                                   tmp_path):
    env = {"GPUPRICES_PUBLISH": f"{s3}/shared"}
    local = tmp_path / "warehouse.duckdb"
    r = _gp("pull", "--to", str(local), env=env)
    assert r.returncode == 1 and "no warehouse published there yet" in r.stderr
    built = tmp_path / "built.duckdb"
    con = db.connect(str(built))  # pull opens what it fetched as a warehouse: a real one
    db.init_schema(con)
    con.close()
    pointer = publish.publish(built, objstore.location(f"{s3}/shared"))
    local.write_bytes(b"the analyst's own copy")
    objstore.location(pointer["url"]).put(b"damaged", expect=False)
    r = _gp("pull", "--to", str(local), env=env)
    # Refused on its size (7 bytes, not the pointer's) before it is even fetched.
    assert r.returncode == 1 and "7 bytes where" in r.stderr and pointer["url"] in r.stderr
    assert local.read_bytes() == b"the analyst's own copy"
    # A copy is never rewritten: a later publication is a new key, the pointer moves to it.
    later = dt.datetime.fromisoformat(pointer["published_at"]) + dt.timedelta(minutes=1)
    again = publish.publish(built, objstore.location(f"{s3}/shared"), now=later)
    assert again["url"] != pointer["url"]
    assert publish.latest(objstore.location(f"{s3}/shared"))["key"] == again["key"]
    assert _gp("pull", "--to", str(local), env=env).returncode == 0
    assert local.read_bytes() == built.read_bytes()


def test_a_warehouse_with_an_unflushed_log_is_not_published(s3, tmp_path):
    built = tmp_path / "built.duckdb"
    duckdb.connect(str(built)).close()
    built.with_name("built.duckdb.wal").write_bytes(b"pending")
    with pytest.raises(publish.PublishError, match="not checkpointed"):
        publish.publish(built, objstore.location(f"{s3}/shared"))
    assert objstore.location(s3).walk() == []


def test_a_crawl_session_archives_into_the_store(s3, runpod_archive):
    (_day, _p, src), *_ = list_archives(runpod_archive)
    caps = list(read_captures(src))
    session = ArchiveSession(f"{s3}/archive", "runpod")
    for cap in caps:
        session.write(cap)
    (dest,) = session.close()
    assert [c.sha256 for c in read_captures(dest)] == [c.sha256 for c in caps]
    assert list_archives(f"{s3}/archive") == [(caps[0].snapshot_date, "runpod", dest)]


def test_a_crawl_killed_on_the_store_is_recovered_from_its_local_spool(s3, runpod_archive,
                                                                       tmp_path):
    """A session on the store spools to local disk as it goes: when it dies before closing,
    the next session for that store and provider appends what it had fetched."""
    (_day, _p, src), *_ = list_archives(runpod_archive)
    caps = list(read_captures(src))
    spool = tmp_path / "spool"
    dead = ArchiveSession(f"{s3}/archive", "runpod", spool=spool)
    for cap in caps:
        dead.write(cap)
    # The crash: the spool file stays, its process is gone, nothing reached the store.
    (part,) = list(spool.rglob("runpod.warc.gz.session-*.part"))
    part.rename(part.with_name("runpod.warc.gz.session-999999999.part"))
    assert list_archives(f"{s3}/archive") == []
    ArchiveSession(f"{s3}/archive", "runpod", spool=spool).close()
    ((_, _, dest),) = list_archives(f"{s3}/archive")
    assert [c.sha256 for c in read_captures(dest)] == [c.sha256 for c in caps]
    assert not list(spool.rglob("*.part"))


def test_an_aws_409_conflict_is_a_lost_race_and_an_append_retries_it(s3, monkeypatch):
    """AWS answers two conditional writes racing each other with 409
    ConditionalRequestConflict (SeaweedFS never does, so the answer is injected once)."""
    from obstore.exceptions import GenericError

    day = objstore.location(f"{s3}/archive/2026-01-01/runpod.warc.gz")
    real_put = objstore.obstore.put
    calls = []

    def put_conflicting_once(*args, **kwargs):
        calls.append(kwargs.get("mode"))
        if len(calls) == 1:
            raise GenericError("Client error with status 409 Conflict: "
                               "<Code>ConditionalRequestConflict</Code>")
        return real_put(*args, **kwargs)

    monkeypatch.setattr(objstore.obstore, "put", put_conflicting_once)
    with pytest.raises(objstore.ConflictError, match="409"):
        day.put(b"x", expect=None, what="archive day file")
    calls.clear()
    day.append(b"records", what="archive day file")
    assert len(calls) == 2  # the 409, then the retry that landed
    assert day.get()[0] == b"records"


def test_the_client_follows_the_variables_and_the_shared_files(tmp_path, monkeypatch):
    # Only the AWS variables are read on each request; a change of one, or a shared file
    # written again, still gives the next request a client with the new settings.
    for var in objstore._AWS_VARS:
        monkeypatch.delenv(var, raising=False)
    creds = tmp_path / "credentials"
    creds.write_text("[default]\naws_access_key_id = ONE\naws_secret_access_key = S1\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "absent"))
    assert objstore.aws_config() == {"access_key_id": "ONE", "secret_access_key": "S1",
                                     "region": "us-east-1"}
    first = objstore.client("bucket")
    assert objstore.client("bucket") is first  # unchanged settings: the same client
    stamp = creds.stat().st_mtime_ns
    creds.write_text("[default]\naws_access_key_id = TWO\naws_secret_access_key = S2\n")
    os.utime(creds, ns=(stamp + 10**9, stamp + 10**9))
    assert objstore.aws_config()["access_key_id"] == "TWO"
    second = objstore.client("bucket")
    assert second is not first
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    assert objstore.aws_config()["region"] == "eu-west-3"
    assert objstore.client("bucket") is not second


def test_a_replay_lists_the_archive_and_the_lake_once_and_checks_each_object_once(
        s3, tmp_path, monkeypatch):
    # A replay into an empty lake on the store: the archive listed once (the provider's days
    # and the ECB files the gates convert EUR prices with), the lake's offers and quarantine
    # areas listed once each, and no LIST of a folder behind a missing object (on S3 each
    # request costs 20-50 ms).
    _copy_archive(REPO_SNAPSHOTS, f"{s3}/archive", providers={"scaleway", "ecb"})
    settings = Settings(data_dir=tmp_path / "data", archive_root=objstore.location(
        f"{s3}/archive"), lake=objstore.location(f"{s3}/lake")).ensure()
    usd_rates._series(settings.archive_root)  # the ECB rates parsed once per process already
    real = {name: getattr(objstore.obstore, name) for name in ("list", "head", "get")}
    calls = []

    def counted(name):
        def call(store, *args, **kwargs):
            calls.append((name, kwargs.get("prefix") if name == "list" else args[0]))
            return real[name](store, *args, **kwargs)
        return call

    with monkeypatch.context() as m:
        for name in real:
            m.setattr(objstore.obstore, name, counted(name))
        results = pipeline.replay(settings, "scaleway", "all")
    assert [r.status for r in results] != ["failed"] and results[0].rows
    prefix = f"{s3}/".removeprefix(f"s3://{objstore.location(s3).bucket}/")
    assert sorted(p for n, p in calls if n == "list") == [
        f"{prefix}archive/", f"{prefix}lake/offers/", f"{prefix}lake/quarantine/"]
    checked = [key for n, key in calls if n in ("head", "get")]
    assert len(checked) == len(set(checked))  # no object asked for twice
    # The quarantine area's listing tells there is no releases file and no quarantine to clear.
    assert not [key for key in checked if "/quarantine/" in key]
    # A quarantine the listing shows is cleared by a replay that quarantines nothing.
    day = results[0].snapshot_date
    held = lake.read_partition(settings.lake_root, day, "scaleway")
    lake.write_quarantine(settings.lake_root, day, "scaleway",
                          held.append_column("reason", pa.array(["test"] * held.num_rows)))
    assert lake.read_quarantine(settings.lake_root, day, "scaleway").num_rows
    assert [r.quarantined for r in pipeline.replay(settings, "scaleway", "all")] == [0]
    assert lake.read_quarantine(settings.lake_root, day, "scaleway").num_rows == 0


def test_a_load_from_the_store_reads_each_day_in_one_request_with_its_state(runpod_lake,
                                                                            monkeypatch):
    # Each provider-day's rows and the state recorded for it come from the one GET that reads
    # it (no HEAD to find it, stamp it, find it again); the state is the object's as listed,
    # so nothing is pending afterwards, and a day rewritten since is.
    keys = [(d, p) for d, p, _ in lake.list_partitions(runpod_lake.lake_root)]
    assert len(keys) > 1
    con = db.connect(str(runpod_lake.data_dir / "fresh.duckdb"))
    db.init_schema(con)
    asked = []

    def counted(name, real):
        return lambda *args, **kwargs: asked.append(name) or real(*args, **kwargs)

    with monkeypatch.context() as m:
        for name in ("head", "get", "list"):
            m.setattr(objstore.obstore, name, counted(name, getattr(objstore.obstore, name)))
        loaded, failed = load_steps.load_days(runpod_lake, con, keys)
    assert not failed and set(loaded) == set(keys)
    assert asked == ["get"] * len(keys)
    assert lake_sync.pending(con, runpod_lake.lake_root) == []
    day, provider = keys[0]
    table = lake.read_partition(runpod_lake.lake_root, day, provider)
    lake.write_partition(runpod_lake.lake_root, day, provider, table.slice(0, 1))
    assert [(d, p) for d, p, *_ in lake_sync.pending(con, runpod_lake.lake_root)] == [keys[0]]
    con.close()
