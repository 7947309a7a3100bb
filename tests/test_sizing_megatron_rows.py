"""The tensor x pipeline parallel calibration rows (the Megatron papers' own figures): how they
become workloads, and that the estimate stays within +-25% of them (bench/sizing_accuracy.py)."""

from __future__ import annotations

import csv
import importlib
import sys
from pathlib import Path

import pytest

from gpuprices.sizing.workload import workload_from_dict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
CSV = ROOT / "tests/fixtures/sizing/measured_calibration.csv"


def _rows():
    return [r for r in csv.DictReader(CSV.open(newline=""))
            if r["source"].startswith(("Narayanan 2021", "Korthikanti 2022"))]


def test_rows_name_their_source_and_become_megatron_layouts():
    rows = _rows()
    assert len(rows) == 2
    calibration_rows = importlib.import_module("calibration_rows")
    want = {"GPT-1T (Narayanan 2021)": (8, 64, 6, 512, 1007.9),
            "MT-NLG 530B (Korthikanti 2022)": (8, 35, 8, 240, 529.5)}
    for r in rows:
        assert "arXiv:" in r["url_or_repo_path"] and "abstract" in r["url_or_repo_path"]
        d, why = calibration_rows.row_to_workload(r)
        w = workload_from_dict(d)
        tp, pp, dp, m, params_b = want[r["model"]]
        assert (w.tensor_parallel, w.pipeline_parallel, w.gpus // (tp * pp), w.grad_accum) == \
            (tp, pp, dp, m)
        assert w.framework == "megatron" and w.grad_checkpointing
        # the tables' parameter counts follow from the architecture: 12 l h^2 + V h
        a = w.arch
        assert (a.num_layers * a.linear_params_per_layer() + a.embedding_params) / 1e9 == \
            pytest.approx(params_b, rel=0.002)


def test_estimate_within_25_percent_of_each_row():
    bench = importlib.import_module("sizing_accuracy")
    rows = bench.parallel_rows(bench.evaluate())
    assert len(rows) == 2
    for t in rows:
        assert t["err"] <= bench.PARALLEL_WITHIN, t
