import datetime as dt
import gzip

from gpuprices.spiders.archive import (
    ArchiveSession,
    Capture,
    append_captures,
    archive_path,
    latest_per_request,
    list_archives,
    read_captures,
)
from gpuprices.spiders.importer import import_capture, parse_timestamp

T0 = dt.datetime(2026, 9, 29, 12, 0, tzinfo=dt.UTC)


def _cap(body=b'{"data": {}}', url="https://api.runpod.io/graphql", when=T0, **kw):
    return Capture(provider="runpod", url=url, body=body, captured_at=when, **kw)


def test_round_trip_keeps_request_response_and_sha(tmp_path):
    cap = _cap(method="POST", request_body=b'{"query": "{ gpuTypes { id } }"}',
               headers=[("Content-Type", "application/json")], status=200, origin="fixture x")
    append_captures(tmp_path, [cap])
    path = archive_path(tmp_path, "runpod", T0.date())
    assert path == tmp_path / "2026-09-29" / "runpod.warc.gz"
    (back,) = list(read_captures(path))
    assert back.url == cap.url and back.body == cap.body
    assert back.method == "POST" and back.request_body == cap.request_body
    assert back.status == 200 and back.content_type == "application/json"
    assert back.captured_at == T0 and back.sha256 == cap.sha256 and back.origin == "fixture x"
    # A WARC reader that knows nothing of us sees the standard fields too.
    text = gzip.open(path).read()
    assert b"WARC-Type: response" in text and b"WARC-Type: request" in text
    assert cap.sha256.encode() in text


def test_rerun_appends_and_the_latest_capture_wins(tmp_path):
    append_captures(tmp_path, [_cap(b"first")])
    append_captures(tmp_path, [_cap(b"second", when=T0 + dt.timedelta(hours=1))])
    caps = list(read_captures(archive_path(tmp_path, "runpod", T0.date())))
    assert [c.body for c in caps] == [b"first", b"second"]
    assert [c.body for c in latest_per_request(caps)] == [b"second"]


def test_captures_are_filed_by_capture_date(tmp_path):
    append_captures(tmp_path, [_cap(), _cap(when=T0 - dt.timedelta(days=400))])
    assert [(d.isoformat(), p) for d, p, _ in list_archives(tmp_path)] == [
        ("2025-08-25", "runpod"), ("2026-09-29", "runpod")]


def test_session_that_died_is_recovered_by_the_next(tmp_path, monkeypatch):
    s1 = ArchiveSession(tmp_path, "runpod")
    s1.write(_cap(b"kept"))
    # Simulate a crash: the part file stays, its pid is gone.
    (part,) = list(tmp_path.glob("*/runpod.warc.gz.session-*.part"))
    part.rename(part.with_name("runpod.warc.gz.session-999999999.part"))
    s2 = ArchiveSession(tmp_path, "runpod")
    s2.write(_cap(b"new", when=T0 + dt.timedelta(minutes=5)))
    s2.close()
    caps = list(read_captures(archive_path(tmp_path, "runpod", T0.date())))
    assert [c.body for c in caps] == [b"kept", b"new"]
    assert not list(tmp_path.glob("*/*.part"))


def test_import_capture_is_idempotent(tmp_path):
    src = tmp_path / "page.html"
    src.write_bytes(b"<html>prices</html>")
    root = tmp_path / "snap"
    when = parse_timestamp("20250909131230")
    assert when == dt.datetime(2025, 9, 9, 13, 12, 30, tzinfo=dt.UTC)
    path, new = import_capture(root, src, "runpod", "https://www.runpod.io/pricing", when,
                               origin="wayback")
    assert new
    _, again = import_capture(root, src, "runpod", "https://www.runpod.io/pricing", when)
    assert not again
    (cap,) = list(read_captures(path))
    assert cap.content_type.startswith("text/html") and cap.origin == "wayback"


def test_archive_new_skips_what_is_already_archived(tmp_path):
    from gpuprices.spiders.importer import archive_new

    caps = [_cap(b"a"), _cap(b"b", when=T0 + dt.timedelta(days=1))]
    assert archive_new(tmp_path, caps) == (2, 0)
    assert archive_new(tmp_path, caps + [_cap(b"c", when=T0 + dt.timedelta(hours=2))]) == (1, 2)
    assert len(list(read_captures(archive_path(tmp_path, "runpod", T0.date())))) == 2
