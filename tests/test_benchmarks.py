"""`gpuprices record`: measured results checked line by line before they are loaded."""

from pathlib import Path

import pytest

from warehouse import benchmarks

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs/benchmark_results.example.csv"
HEADER = ("provider,sku,date,workload,gpu_model,gpus,tokens_per_s,mfu,step_time_cv,"
          "allreduce_busbw_gbs,checkpoint_write_s,checkpoint_restore_s,recovery_min,cost,"
          "currency,notes")


def _write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


def test_the_example_file_is_valid_and_says_it_is_an_example():
    rows = benchmarks.read_results(EXAMPLE)
    assert rows and "EXAMPLE" in EXAMPLE.read_text().splitlines()[0]


def test_every_bad_line_is_named_with_what_is_wrong(tmp_path):
    f = _write(tmp_path / "bad.csv",
               "lambda,gpu_8x_h100,2026-10-01,w,H100-SXM-80GB,8,1000,,,,,,,,,",
               "nobody,x,2026-10-01,w,H100-SXM-80GB,8,1000,,,,,,,,,",
               "lambda,x,01/10/2026,w,H100-SXM-80GB,0,-5,45,,,,,,,,",
               "lambda,x,2026-10-01,w,H100,8,1000,,,,,,,12.5,,",
               "lambda,gpu_8x_h100,2026-10-01,w,H100-SXM-80GB,8,2000,,,,,,,,,")
    with pytest.raises(benchmarks.ResultsError) as exc:
        benchmarks.read_results(f)
    msg = str(exc.value)
    assert f"{f}:3: provider 'nobody' is not one of" in msg
    assert f"{f}:4: date '01/10/2026' is not YYYY-MM-DD" in msg
    assert f"{f}:4: gpus 0 is less than 1" in msg
    assert f"{f}:4: tokens_per_s -5 is not > 0" in msg
    assert f"{f}:4: mfu 45 is not in (0, 1]" in msg
    assert f"{f}:5: gpu_model 'H100' is not a canonical model" in msg
    assert f"{f}:5: cost is given without its currency" in msg
    assert f"{f}:6: the same run" in msg and f"as {f}:2" in msg
    assert f"{f}:2:" not in msg


def test_unknown_or_missing_columns_are_refused(tmp_path):
    f = tmp_path / "cols.csv"
    f.write_text("provider,sku,date,workload,gpu_model,gpus,tokens_per_sec\n")
    with pytest.raises(benchmarks.ResultsError, match="unknown column.*tokens_per_sec.*"
                                                      "missing column.*tokens_per_s"):
        benchmarks.read_results(f)


def test_toml_results_read_like_csv(tmp_path):
    f = tmp_path / "r.toml"
    f.write_text('[[result]]\nprovider = "lambda"\nsku = "s"\ndate = 2026-10-01\n'
                 'workload = "w"\ngpu_model = "H100-SXM-80GB"\ngpus = 8\ntokens_per_s = 9000\n'
                 'mfu = 0.41\ncost = 35.5\ncurrency = "usd"\n'
                 '[[result]]\nprovider = "lambda"\nsku = "t"\ndate = 2026-10-01\n'
                 'workload = "w"\ngpu_model = "H100-SXM-80GB"\ngpus = 8\n')
    with pytest.raises(benchmarks.ResultsError, match=r"result #2: tokens_per_s is missing"):
        benchmarks.read_results(f)
    f.write_text(f.read_text() + "tokens_per_s = 1\n")
    rows = benchmarks.read_results(f)
    assert rows[0].values["currency"] == "USD" and rows[0].values["mfu"] == 0.41
