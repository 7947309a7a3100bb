"""Bad input is refused with a clear message, never a traceback (issue 30, item 12): a workload
with `tokens = nan`, a measured result beyond what the cards can compute, a binary results file,
a results CSV with a byte-order mark, an empty or file `--data-dir`; and `rank` streams one
workload at a time, saying how far it is."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from gpuprices.flows.cli.main import main
from gpuprices.flows.cli.sizing import PROGRESS_FROM, app
from gpuprices.sizing.workload import WorkloadError, load_workloads
from gpuprices.warehouse import benchmarks
from gpuprices.warehouse.gpus import gpu_models
from tests.conftest import ROOT
from tests.test_cli import gp
from tests.test_sizing_cli import _warehouse

EXAMPLE = ROOT / "docs" / "benchmark_results.example.csv"
WORKLOADS = ROOT / "sizing" / "workloads.toml"
ONE = '[[workload]]\nname = "x"\nmodel = "Llama 3.1 8B"\n'


@pytest.mark.parametrize("line", ["tokens = nan", "tokens = inf", "margin = nan",
                                  "dataset_gb = -inf"])
def test_a_workload_number_that_is_not_finite_is_refused(tmp_path, line):
    path = tmp_path / "w.toml"
    path.write_text(ONE + line + "\n")
    with pytest.raises(WorkloadError, match=r"x: \w+ = -?(nan|inf) is not a finite number"):
        load_workloads(path)


def test_rank_with_tokens_nan_says_so(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(ONE + "tokens = nan\n")
    r = gp("rank", path, "--data-dir", tmp_path / "data")
    assert r.returncode == 2 and "tokens = nan is not a finite number" in r.stderr
    assert "Traceback" not in r.stderr


def _with_tokens(tmp_path, value: str):
    lines = EXAMPLE.read_text().splitlines()
    header = lines[1].split(",")
    col = header.index("tokens_per_s")
    row = lines[2].split(",")
    row[col] = value
    path = tmp_path / "r.csv"
    path.write_text("\n".join([lines[1], ",".join(row)]) + "\n")
    return path, row[header.index("gpu_model")], int(row[header.index("gpus")])


def test_a_measurement_beyond_the_cards_peak_flops_is_refused(tmp_path):
    path, model, gpus = _with_tokens(tmp_path, "1e308")
    limit = benchmarks.peak_tokens_per_s(model, gpus, gpu_models())
    # 8 x H100 SXM: 8 x 1,979 dense FP8 TFLOPs / (2 x 0.49e9 FLOPs per token).
    assert (model, gpus, round(limit)) == ("H100-SXM-80GB", 8, 16_155_102)
    with pytest.raises(benchmarks.ResultsError, match="more than 8 x H100-SXM-80GB can compute"):
        benchmarks.read_results(path)
    path, *_ = _with_tokens(tmp_path, str(int(limit) + 1))
    with pytest.raises(benchmarks.ResultsError, match="can compute"):
        benchmarks.read_results(path)
    path, *_ = _with_tokens(tmp_path, "61000")  # the example's figure: possible, recorded
    assert benchmarks.read_results(path)[0].values["tokens_per_s"] == 61000


def test_a_results_csv_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + EXAMPLE.read_bytes())
    rows = benchmarks.read_results(path)
    assert [r.values["provider"] for r in rows] == [
        r.values["provider"] for r in benchmarks.read_results(EXAMPLE)]
    path.write_bytes(b"\xff\xfe" + EXAMPLE.read_text().encode("utf-16-le"))
    with pytest.raises(benchmarks.ResultsError, match="UTF-16 text; save it as UTF-8"):
        benchmarks.read_results(path)


def test_record_of_a_binary_file_says_what_it_is(tmp_path):
    path = tmp_path / "results.csv"
    shutil.copyfile(ROOT / "snapshots/2026-10-05/gcp.warc.gz", path)
    r = gp("record", path, "--data-dir", tmp_path / "data")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert re.search(r"a binary file \(NUL byte at offset [\d,]+\)|not UTF-8 text", r.stderr)


@pytest.mark.parametrize("command", [["sql", "SELECT 1"], ["record", str(EXAMPLE)],
                                     ["rank", str(WORKLOADS)], ["report"]])
def test_an_empty_or_file_data_dir_is_refused(tmp_path, command, monkeypatch):
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    monkeypatch.chdir(tmp_path)
    for value, says in (("", "--data-dir is empty"), (str(a_file), "is a file, not a folder")):
        r = gp(*command, "--data-dir", value)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, (
            command, value, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder"]  # nothing made here


def test_main_turns_a_bad_data_dir_into_one_line(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["gpuprices", "sql", "SELECT 1", "--data-dir", ""])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2 and "--data-dir is empty" in capsys.readouterr().err


def test_rank_streams_many_workloads_with_progress(tmp_path):
    """PROGRESS_FROM workloads (the shipped five, renamed): the JSON is one valid array with
    every workload's rows, and stderr says how far the ranking is."""
    text = WORKLOADS.read_text()
    blocks = ["[[workload]]" + b for b in text.split("[[workload]]")[1:]]
    many = "\n".join(re.sub(r'^name = "([^"]+)"', lambda m, i=i: f'name = "{m.group(1)}-{i}"',
                            blocks[i % len(blocks)], count=1, flags=re.M)
                     for i in range(PROGRESS_FROM))
    path = tmp_path / "many.toml"
    path.write_text(many)
    res = CliRunner().invoke(app, ["rank", str(path), "--data-dir",
                                   str(_warehouse(tmp_path, fx=False)),
                                   "--json", "--top", "2", "--set-apart"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    # --set-apart: a workload whose every offer is set apart (the 64-GPU job has no cluster in
    # this warehouse) still has its rows in the array
    assert len({r["workload"] for r in rows}) == PROGRESS_FROM
    assert f"ranked {PROGRESS_FROM:,}/{PROGRESS_FROM:,} workloads" in res.stderr
    assert res.stderr.count("ranked ") == 20
