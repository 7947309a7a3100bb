"""Run summary and alerts through Apprise: a local HTTP server stands in for a Slack-compatible
webhook (the old variable) and for Apprise's json:// receiver ($GPUPRICES_NOTIFY); the URLs
(credentials) never show up in what we write or print."""

import datetime as dt
import json
import re
from pathlib import Path

import apprise
import pytest
from markdown_it import MarkdownIt

from gpuprices.flows.config import Settings
from gpuprices.flows.ops import alerts, notify
from gpuprices.flows.pipeline import gates
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.spiders.archive import Capture, append_captures
from gpuprices.warehouse import identity
from tests.conftest import FIXTURES
from tests.test_cli import gp

TOKEN = "T0SECRET/B0SECRET/xoxbS3cr3tT0k3n"
RUNPOD_API = FIXTURES / "raw" / "runpod" / "runpod_graphql_gpuTypes_ewyluda_fixture.json"


def _slack_url(rx) -> str:
    """The local receiver (conftest's http_receiver) under a Slack webhook's path: the token in
    it is the credential that must never show."""
    return f"http://127.0.0.1:{rx.port}/services/{TOKEN}"


@pytest.fixture
def eventful_archive(runpod_archive):
    """The real Runpod captures plus two later nights: the API answer with B200 30 % dearer
    (a move to alert on) and one GPU renamed to a name no table knows (every real wording is
    mapped), and a page that holds no prices (a failure)."""
    doc = json.loads(RUNPOD_API.read_bytes())
    b200 = next(t for t in doc["data"]["gpuTypes"] if t["id"] == "NVIDIA B200")
    b200["securePrice"] = round(b200["securePrice"] * 1.3, 2)
    rtx = next(t for t in doc["data"]["gpuTypes"] if t["id"] == "NVIDIA GeForce RTX 3070")
    rtx["id"] = "NVIDIA GeForce RTX 2070"
    append_captures(runpod_archive, [
        Capture(provider="runpod", url="https://api.runpod.io/graphql", method="POST",
                body=json.dumps(doc).encode(),
                captured_at=dt.datetime(2026, 9, 30, 2, tzinfo=dt.UTC)),
        Capture(provider="runpod", url="https://www.runpod.io/pricing",
                body=b"<html><body><p>Talk | to us.</p></body></html>",
                captured_at=dt.datetime(2026, 11, 1, 2, tzinfo=dt.UTC)),
    ])
    return runpod_archive


def _args(tmp_path, archive):
    return ["--data-dir", tmp_path / "data", "--archive", archive]


def test_every_run_writes_a_summary_and_posts_alerts_without_leaking_the_url(
        tmp_path, eventful_archive, http_receiver):
    env = {alerts.WEBHOOK_ENV: _slack_url(http_receiver)}
    r = gp("crawl", "--replay", "all", "-p", "runpod", *_args(tmp_path, eventful_archive),
           env=env)
    assert r.returncode == 1  # the night without prices failed
    (summary,) = (tmp_path / "data" / "runs").glob("*.md")
    assert f"run summary: {summary}" in r.stdout
    text = summary.read_text()
    for part in ("## Providers", "| runpod | 2026-09-30 | ok |", "## Failures",
                 "## Quarantined rows", "## Unmapped GPU names", "## Largest price moves",
                 # Three alerts: the failure; one move of 20 % or more, B200 +30 % against the
                 # day before; and the day whose unmapped GPU name was quarantined. Without
                 # the age limit five more would be sent (main's count was 8): H100 PCIe
                 # +20.9 % is the 2026-08-25 answer against 2026-08-10 (15 days), and four
                 # H100 prices are the 2025 page against the 2023 page (two years), both over
                 # the 14-day limit: differences, not moves of the night, counted apart and
                 # never sent. The quarantined rows are sent whatever the gap: held rows are
                 # news on the day they were held.
                 "Alerts: 3 alerts sent.",
                 "Not counted as moves (against a snapshot more than 14 days older, the age "
                 "limit): runpod "):
        assert part in text, part
    # The failed night: stale, still serving its last good snapshot, with its age.
    assert "| runpod | 2026-11-01 | stale (failed; serving 2026-09-30, 32 days old) |" in text
    assert "B200" in text and "+30.0 %" in text
    # The old variable still posts Slack's {"text": ...} to its URL (Apprise's json:// plugin
    # with its fields renamed): the title first, then one line per alert.
    ((path, ctype, payload),) = http_receiver.posts
    assert path == f"/services/{TOKEN}" and ctype == "application/json"
    assert set(payload) == {"text"}
    texts = payload["text"].splitlines()
    assert texts[0].startswith("gpuprices run ") and "1 failed" in texts[0]
    stale = "FAILED runpod 2026-11-01 (stale: serving 2026-09-30"
    assert any(t.startswith(stale) for t in texts)
    assert any(t.startswith("MOVE runpod NVIDIA B200") and "+30.0 %" in t for t in texts)
    assert not [t for t in texts if t.startswith("MOVE") and "B200" not in t]
    assert any(t.startswith("QUARANTINED runpod 2026-09-30: ") and "unmapped" in t
               for t in texts)
    assert len([t for t in texts[1:] if t]) == 3  # after the title, one line per alert
    assert "against prices as old as 2023-09-29" in text
    for where in (r.stdout, r.stderr, text, json.dumps(payload)):
        assert "S3cr3t" not in where and "SECRET" not in where


def test_the_move_threshold_is_configurable(tmp_path, eventful_archive, http_receiver):
    # 31: above the one move within the age limit (B200 +30 %, a day apart); the larger
    # differences against the 2023 page (H100 PCIe community -50.1 %) are no moves at all
    env = {alerts.WEBHOOK_ENV: _slack_url(http_receiver), alerts.MOVE_PCT_ENV: "31"}
    gp("crawl", "--replay", "all", "-p", "runpod", *_args(tmp_path, eventful_archive), env=env)
    ((_, _, payload),) = http_receiver.posts
    assert "FAILED runpod" in payload["text"] and "MOVE" not in payload["text"]


@pytest.mark.parametrize("where", ["http-500", "unreachable"])
def test_a_failed_webhook_is_reported_without_its_url(tmp_path, runpod_archive, http_receiver,
                                                      where):
    if where == "http-500":
        http_receiver.status, url = 500, _slack_url(http_receiver)
    else:
        url = f"http://127.0.0.1:9/services/{TOKEN}"
    env = {alerts.WEBHOOK_ENV: url}
    append_captures(runpod_archive, [Capture(
        provider="runpod", url="https://www.runpod.io/pricing", body=b"",
        captured_at=dt.datetime(2026, 11, 1, 2, tzinfo=dt.UTC))])
    r = gp("crawl", "--replay", "all", "-p", "runpod", *_args(tmp_path, runpod_archive), env=env)
    assert "alert not delivered: alert not delivered to target 1 (JSON)" in r.stderr
    assert ("error=500" in r.stderr) == (where == "http-500")
    assert ("Connection error" in r.stderr) == (where == "unreachable")
    (summary,) = (tmp_path / "data" / "runs").glob("*.md")
    text = summary.read_text()
    assert "Alerts: NOT delivered" in text
    for out in (r.stdout, r.stderr, text):
        assert "SECRET" not in out and "S3cr3t" not in out and "127.0.0.1:9" not in out


def test_summary_cells_cannot_break_the_table_or_carry_html(tmp_path):
    settings = Settings(data_dir=tmp_path / "d", archive_root=tmp_path / "s").ensure()
    bad = DayResult(provider="lambda", snapshot_date=dt.date(2026, 1, 9),
                             status="failed",
                             errors=["lambda: x: cell | break\nnew row <script>alert(1)</script>"])
    bad.unmapped = ["GPU | with\npipe"]
    path = alerts.finish_run(settings, "t1", [bad])
    text = path.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| lambda |"))
    assert row.count(" | ") == 6  # seven cells, the pipe inside the error escaped
    # the tag escaped by backslash (reports/markdown_text.py): a viewer shows it as text
    assert "cell \\| break new row \\<script>alert(1)\\</script>" in row
    assert "<script" not in MarkdownIt("commonmark").enable("table").render(text)
    assert "- lambda: GPU \\| with pipe" in text


def test_redact_removes_secret_environment_values_and_url_keys(monkeypatch):
    monkeypatch.setenv("GCP_API_KEY", "AIzaVerySecret123")
    monkeypatch.setenv(alerts.WEBHOOK_ENV, f"https://hooks.example/services/{TOKEN}")
    text = ("GET https://x/skus?key=AIzaVerySecret123&pageSize=5000 via "
            f"https://hooks.example/services/{TOKEN} and /services/{TOKEN} token=abc123")
    out = alerts.redact(text)
    assert "AIzaVerySecret123" not in out and TOKEN not in out and "abc123" not in out
    assert "pageSize=5000" in out


def test_no_webhook_no_payload_when_nothing_happened():
    ok = DayResult(provider="crusoe", snapshot_date=dt.date(2026, 10, 4), rows=6)
    assert alerts.alert_message("r", [ok], threshold_pct=20) is None
    ident = identity.from_record({"provider": "crusoe", "sku": "8xH100", "region": "us-east",
                                  "gpu_model": "H100-SXM-80GB", "gpu_count": 8,
                                  "pricing_model": "on_demand", "currency": "USD"})
    small = gates.Move(ident, 1.0, 1.1, dt.date(2026, 10, 3), "USD")
    ok.moves = [small]
    assert alerts.alert_message("r", [ok], threshold_pct=20) is None
    ok.moves = [gates.Move(small.ident, 1.0, 1.25, small.old_date, "USD")]
    alert = alerts.alert_message("r", [ok], threshold_pct=20)
    assert alert.kind == "warning" and alert.lines[0].startswith("MOVE crusoe")


def test_a_move_is_against_a_snapshot_within_the_age_limit_or_a_row_the_gates_held():
    day = dt.date(2026, 10, 4)
    ident = identity.from_record({"provider": "crusoe", "sku": "8xH100", "region": "us-east",
                                  "gpu_model": "H100-SXM-80GB", "gpu_count": 8,
                                  "pricing_model": "on_demand", "currency": "USD"})
    at_limit = gates.Move(ident, 1.0, 1.5, day - dt.timedelta(days=14), "USD")
    over = gates.Move(ident, 1.0, 1.6, day - dt.timedelta(days=15), "USD")
    held = gates.Move(ident, 1.0, 9.0, day - dt.timedelta(days=400), "USD", quarantined=True)
    ok = DayResult(provider="crusoe", snapshot_date=day, rows=6, moves=[at_limit, over, held])
    texts = alerts.alert_message("r", [ok], threshold_pct=20, max_age=14).lines
    assert len(texts) == 2
    assert "+50.0 %" in texts[1] and "+800.0 %" in texts[0] and "quarantined" in texts[0]
    summary = alerts.render_summary("r", [ok], max_age=14)
    assert "+60.0 %" not in summary
    assert "crusoe 1 price differences, against prices as old as 2026-09-19" in summary
    # Without an age limit (the warehouse cannot be read) every move counts.
    assert "+60.0 %" in alerts.render_summary("r", [ok])


def test_provider_text_cannot_ping_a_channel_or_hide_a_link_in_slack(monkeypatch):
    # A reply quoted into an error, a degraded reason and a SKU name, each carrying Slack's
    # control sequences: a channel ping and a link whose label hides where it goes. The alert is
    # plain text; Apprise's Slack plugin escapes it. What it would POST to hooks.slack.com is
    # taken at the requests call (no Slack here).
    evil = "<!channel> see <http://evil.example/|runpod.io> & <@U123>"
    failed = DayResult(provider="runpod", snapshot_date=dt.date(2026, 10, 4), status="failed",
                       errors=[f"runpod: unexpected reply: {evil}"])
    degraded = DayResult(provider="lambda", snapshot_date=dt.date(2026, 1, 9), status="degraded")
    degraded.degraded = evil
    moved = DayResult(provider="crusoe", snapshot_date=dt.date(2026, 10, 4), rows=6)
    ident = identity.from_record({"provider": "crusoe", "sku": evil, "region": "us-east",
                                  "gpu_model": "H100-SXM-80GB", "gpu_count": 8,
                                  "pricing_model": "on_demand", "currency": "USD"})
    moved.moves = [gates.Move(ident, 1.0, 2.0, dt.date(2026, 10, 3), "USD")]
    alert = alerts.alert_message("r", [failed, degraded, moved], threshold_pct=20)
    assert [line.split()[0] for line in alert.lines] == ["FAILED", "DEGRADED", "MOVE"]
    sent = []

    class Answer:
        status_code, content, text = 200, b"ok", "ok"

    def post(method, url, **kwargs):
        sent.append((url, json.loads(kwargs["data"])))
        return Answer()

    monkeypatch.setattr("requests.request", post)
    monkeypatch.setattr("requests.post", lambda url, **kw: post("post", url, **kw))
    slack = notify.Target(f"https://hooks.slack.com/services/{TOKEN}")
    assert notify.send(alert.title, alert.body, alert.kind, found=[slack]) is None
    ((url, payload),) = sent
    assert url == f"https://hooks.slack.com/services/{TOKEN}"
    text = payload["attachments"][0]["text"]
    assert "<" not in text and ">" not in text.replace("&gt;", "")
    assert text.count("&lt;!channel&gt;") == 3
    assert "&lt;http://evil.example/|runpod.io&gt; &amp; &lt;@U123&gt;" in text


def test_notify_sends_a_failed_run_to_an_apprise_json_receiver(tmp_path, runpod_archive,
                                                               http_receiver):
    """$GPUPRICES_NOTIFY=json://127.0.0.1:PORT/…: Apprise's own JSON (title, message, type)."""
    env = {notify.NOTIFY_ENV: f"json://127.0.0.1:{http_receiver.port}/gpuprices/{TOKEN}"}
    r = gp("crawl", "--replay", "2026-10-01", "-p", "runpod", *_args(tmp_path, runpod_archive),
           env=env)  # a date without a capture: the provider fails
    assert r.returncode == 1
    ((path, ctype, payload),) = http_receiver.posts
    assert path == f"/gpuprices/{TOKEN}" and ctype == "application/json"
    assert payload["type"] == "failure"
    assert payload["title"].startswith("gpuprices run ") and "1 failed" in payload["title"]
    assert payload["message"] == "FAILED runpod: runpod: no archived snapshot for 2026-10-01"
    assert "Alerts: 1 alerts sent." in next((tmp_path / "data" / "runs").glob("*.md")).read_text()
    for where in (r.stdout, r.stderr, json.dumps(payload)):
        assert "S3cr3t" not in where


def test_several_apprise_urls_each_receive_the_message(http_receiver, monkeypatch):
    port = http_receiver.port
    monkeypatch.setenv(notify.NOTIFY_ENV,
                       f"json://127.0.0.1:{port}/one, json://127.0.0.1:{port}/two")
    monkeypatch.delenv(notify.WEBHOOK_ENV, raising=False)
    assert [t.url for t in notify.targets()] == [f"json://127.0.0.1:{port}/one",
                                                 f"json://127.0.0.1:{port}/two"]
    assert notify.send("t", "b") is None
    assert sorted(p.path for p in http_receiver.posts) == ["/one", "/two"]


def test_every_channel_example_of_the_readme_is_an_apprise_url_apprise_takes():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("\n## Alerts\n", 1)[1].split("\n### ", 1)[0]
    urls = re.findall(r'^export GPUPRICES_NOTIFY="([^"]+)"', section, re.MULTILINE)
    assert len(urls) >= 9
    services = set()
    for value in urls:
        for url in apprise.utils.parse.parse_urls(value.replace("…", "x")):
            plugin = apprise.Apprise.instantiate(url)
            assert plugin is not None, url
            services.add(plugin.service_name)
    assert {"Slack", "E-Mail", "ntfy", "JSON"} <= services
    assert any("Teams" in s for s in services)


def test_apprise_urls_are_redacted_whole_and_in_parts(monkeypatch):
    monkeypatch.setenv(notify.NOTIFY_ENV, "slack://T0AAAA1/B0BBBB2/xoxbS3cr3tT0k3n "
                       "mailto://buyer:pa55w0rd-x@gmail.com, ntfys://bob:t0pic-pass@ntfy.example.com/"
                       "gpu-alerts-7x")
    text = ("failed: slack://T0AAAA1/B0BBBB2/xoxbS3cr3tT0k3n; "
            "POST /T0AAAA1/B0BBBB2/xoxbS3cr3tT0k3n; login buyer:pa55w0rd-x refused; "
            "topic gpu-alerts-7x; password pa55w0rd-x")
    out = alerts.redact(text)
    for secret in ("S3cr3t", "T0AAAA1", "pa55w0rd", "gpu-alerts-7x", "t0pic-pass"):
        assert secret not in out, (secret, out)
    assert "failed:" in out and "refused" in out
