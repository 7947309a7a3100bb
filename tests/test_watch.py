"""`gpuprices watch`: rules evaluated after every load on the real Lambda captures (2024-11-03,
2026-01-09, 2026-08-22: the 8x H100 SXM moved 2.99 -> 3.99 USD/GPU-h), sent to a local Apprise
json:// receiver once per change and not again on the next unchanged night; bad rules files
refused with the rule and the reason."""

import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuprices.flows import loading
from gpuprices.flows.cli.main import app
from gpuprices.flows.config import Settings
from gpuprices.flows.ops import notify, watching
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.importer import import_capture
from tests.conftest import manifest_rows
from tests.test_cli import gp

ROOT = Path(__file__).resolve().parents[1]
RULES = """
[[rule]]
name = "Lambda H100 price change"
kind = "change"
providers = ["lambda"]
gpu = "H100-SXM-80GB"
pricing = "on_demand"

[[rule]]
name = "H100 on-demand under 3"
gpu = "H100-SXM-80GB"
pricing = "on_demand"
below = 3.00
"""


@pytest.fixture
def receiver(http_receiver, monkeypatch):
    """A local Apprise json:// receiver (conftest's http_receiver), named in $GPUPRICES_NOTIFY."""
    monkeypatch.setenv(notify.NOTIFY_ENV, f"json://127.0.0.1:{http_receiver.port}/watch")
    monkeypatch.delenv(notify.WEBHOOK_ENV, raising=False)
    return http_receiver


def _night(settings: Settings, day: str, run_id: str) -> None:
    results = pipeline.reparse(settings, "lambda", [dt.date.fromisoformat(day)])
    assert [r.status for r in results] == ["ok"], [r.errors for r in results]
    loading.load(settings, results, run_id)


def _by_title(posts) -> dict[str, dict]:
    """The watch messages (the run's own alert goes to the same receiver)."""
    return {p.body["title"]: p.body for p in posts
            if p.body["title"].startswith("gpuprices watch:")}


def test_a_rule_fires_once_on_the_lambda_move_and_not_on_the_next_unchanged_night(
        tmp_path, manifest_archive, receiver, monkeypatch):
    archive = manifest_archive("lambda")
    # The next night, unchanged: the 2026-08-22 page captured again a day later.
    (aug,) = [r for r in manifest_rows("lambda") if r["captured_at"].startswith("2026-08-22")]
    import_capture(archive, ROOT / aug["file"], "lambda", aug["url"],
                   dt.datetime(2026, 8, 23, 12, tzinfo=dt.UTC), origin="test: the same page")
    settings = Settings(tmp_path / "data", archive).ensure()
    rules = tmp_path / "watch.toml"
    rules.write_text(RULES)
    monkeypatch.setenv(watching.WATCH_ENV, str(rules))

    _night(settings, "2024-11-03", "r1")
    # The 8x H100 at 2.99 is under 3 (the 1x, 2x, 4x at 3.09 and more are not): sent by the
    # load that brought it.
    sent = _by_title(receiver.posts)
    assert list(sent) == ["gpuprices watch: H100 on-demand under 3 (1 new)"]
    message = sent["gpuprices watch: H100 on-demand under 3 (1 new)"]["message"]
    assert message.splitlines()[0] == ("lambda 8x NVIDIA H100 SXM 80 GB: H100-SXM-80GB x8 "
                                       "on_demand 2.9900 USD/GPU-h (snapshot 2024-11-03)")
    assert message.splitlines()[-1] == f"Report: {settings.reports_dir}/2024-W44/report.html"
    receiver.posts.clear()
    _night(settings, "2026-01-09", "r2")  # still 2.99: not sent again
    assert _by_title(receiver.posts) == {}

    receiver.posts.clear()
    _night(settings, "2026-08-22", "r3")
    # The move (the 8x H100 is no longer under 3): the change rule says it, with both dates.
    # The run's own alert does not: its previous price is 225 days older, past the 14-day age
    # limit, so the run summary counts it apart as a difference, not a move of the night (5 of
    # them: the 8x H100's and the 8x A100 40 GB, A100 80 GB, B200 and V100's), and the run has
    # nothing else to send.
    (post,) = _by_title(receiver.posts).values()
    assert post["type"] == "info"
    assert post["title"] == "gpuprices watch: Lambda H100 price change (4 new)"
    assert not [p for p in receiver.posts if p.body["title"].startswith("gpuprices run r3")]
    summary = (settings.runs_dir / "r3.md").read_text()
    assert ("lambda 5 price differences, against prices as old as 2026-01-09" in summary
            and "Alerts: nothing to alert on." in summary)
    lines = post["message"].splitlines()
    assert ("lambda 8x NVIDIA H100 SXM 80 GB: H100-SXM-80GB on_demand 2.99 -> 3.99 USD/GPU-h "
            "(+33.4 %, 2026-01-09 -> 2026-08-22)") in lines
    assert lines[-1] == f"Report: {settings.reports_dir}/2026-W34/report.html"
    state = json.loads((settings.data_dir / watching.STATE_FILE).read_text())["rules"]
    assert len(state["Lambda H100 price change"]["keys"]) == 4
    assert state["H100 on-demand under 3"]["keys"] == []  # forgotten: news again if it returns

    receiver.posts.clear()
    _night(settings, "2026-08-23", "r4")  # unchanged
    assert _by_title(receiver.posts) == {}
    # On demand, nothing new either; --check lists what matches without sending.
    r = gp("watch", rules, "--data-dir", settings.data_dir,
           env={notify.NOTIFY_ENV: notify.targets()[0].url})
    assert r.returncode == 0, r.stderr
    assert "watch: Lambda H100 price change: 0 new of 0 matching" in r.stdout
    assert _by_title(receiver.posts) == {}


def test_a_failed_send_is_retried_by_the_next_evaluation(tmp_path, manifest_archive, receiver):
    settings = Settings(tmp_path / "data", manifest_archive("lambda")).ensure()
    results = pipeline.reparse(settings, "lambda", [dt.date(2026, 1, 9)])
    loading.load(settings, results, "r1")  # no $GPUPRICES_WATCH, no data/watch.toml: no rules
    assert receiver.posts == []
    path = _write(tmp_path, RULES)
    # --check: what matches now, nothing sent, nothing recorded.
    r = CliRunner().invoke(app, ["watch", str(path), "--check", "--data-dir",
                                 str(settings.data_dir)], terminal_width=200)
    assert r.exit_code == 0, r.output
    assert "watch: H100 on-demand under 3: 1 new of 1 matching" in r.output
    assert "  lambda 8x NVIDIA H100 SXM 80 GB: H100-SXM-80GB x8 on_demand 2.9900" in r.output
    assert receiver.posts == [] and not (settings.data_dir / watching.STATE_FILE).exists()
    rules = watching.load_rules(path)
    receiver.status = 500
    (change, under3) = watching.evaluate(settings, rules)
    assert change.new == [] and len(under3.new) == 1
    assert "NOT sent" in watching.describe(under3) and "error=500" in under3.problem
    receiver.status = 200
    (_, again) = watching.evaluate(settings, rules)
    assert len(again.new) == 1 and again.problem is None
    assert [p.body["title"] for p in receiver.posts][-1] == \
        "gpuprices watch: H100 on-demand under 3 (1 new)"
    (_, third) = watching.evaluate(settings, rules)
    assert third.new == []


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "said"), [
    ("[[rule]]\nname = 'x'\ngpu = 'H100'\n", "rule 1 ('x'): gpu: unknown 'H100'"),
    ("[[rule]]\nname = 'x'\nbelow = 'cheap'\n",
     "rule 1 ('x'): below = 'cheap'; expected a number"),
    ("[[rule]]\nname = 'x'\nkind = 'change'\nbelow = 2\n",
     "rule 1 ('x'): unknown key(s) below for kind 'change'"),
    ("[[rule]]\nname = 'x'\nkind = 'index'\ngpu = 'H100-SXM-80GB'\n",
     "rule 1 ('x'): an index rule needs falls_pct or rises_pct"),
    ("[[rule]]\nname = 'x'\nregions = ['mars']\n", "rule 1 ('x'): regions: unknown 'mars'"),
    ("[[rule]]\nname = 'x'\nfabric = 'InfiniBand'\n", "fabric = 'InfiniBand'; the one value"),
    ("[[rule]]\nname = 'x'\n[[rule]]\nname = 'x'\n", "rule name(s) used twice: x"),
    ("[[rule]]\ngpu = 'B200-180GB'\n", "rule 1: no name"),
    ("[rules]\n", "unknown table(s) rules"),
    ("rule = [", "not TOML"),
])
def test_bad_rules_are_refused_with_the_rule_and_the_reason(tmp_path, text, said):
    with pytest.raises(watching.WatchError) as exc:
        watching.load_rules(_write(tmp_path, text))
    assert said in str(exc.value)


def test_the_example_rules_file_is_valid_and_a_bad_file_exits_2(tmp_path):
    rules = watching.load_rules(ROOT / "docs" / "watch.example.toml")
    assert [r.kind for r in rules] == ["offer", "offer", "change", "index"]
    assert rules[0].countries and "DE" in rules[0].countries and rules[0].fabric
    r = gp("watch", _write(tmp_path, "[[rule]]\nname = 'x'\npricing = 'cheap'\n"),
           "--data-dir", tmp_path / "data")
    assert r.returncode == 2
    assert "rule 1 ('x'): pricing = 'cheap'; expected one of on_demand" in r.stderr


def test_a_bad_rules_file_after_a_load_is_said_and_the_load_stands(tmp_path, manifest_archive,
                                                                    monkeypatch, capsys):
    settings = Settings(tmp_path / "data", manifest_archive("lambda")).ensure()
    (settings.data_dir / watching.DEFAULT_RULES).write_text("[[rule]]\nname = 'x'\nbelow = -1\n")
    monkeypatch.delenv(watching.WATCH_ENV, raising=False)
    results = pipeline.reparse(settings, "lambda", [dt.date(2026, 1, 9)])
    summary = loading.load(settings, results, "r1")
    assert summary.exists() and [r.status for r in results] == ["ok"]
    err = capsys.readouterr().err
    assert "watch: not evaluated: " in err and "rule 1 ('x'): below = -1; expected a number " \
        "above 0" in err
