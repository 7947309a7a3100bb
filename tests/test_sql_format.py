"""`gpuprices sql --format table|csv|json|markdown` (issue 24): every column of
`select * from offers` readable, in a narrow terminal too, and machine-readable output; the
"no warehouse" hint names the --data-dir it was given."""

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from gpuprices.flows import loading
from gpuprices.flows.cli import sql_output
from gpuprices.flows.cli.main import app
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.warehouse.contract import OFFER_COLUMNS as COLUMNS
from tests.conftest import ROOT

QUERY = ("select * from offers where provider = 'runpod' and sku = 'NVIDIA H100 80GB HBM3/secure'"
         " and pricing_model = 'on_demand' order by snapshot_date limit 2")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """Runpod's bundled 2026-08-25 API capture and 2026-09-29 API capture, loaded."""
    import datetime as dt
    s = Settings(tmp_path_factory.mktemp("sqlfmt") / "data", ROOT / "snapshots").ensure()
    results = pipeline.reparse(s, "runpod", [dt.date(2026, 8, 25), dt.date(2026, 9, 29)])
    loading.load(s, results, "20261001T020000-sqlfmt")
    return s.data_dir


def _sql(data_dir, *args, width=80):
    return CliRunner().invoke(app, ["sql", QUERY, "--data-dir", str(data_dir), *args],
                              terminal_width=width, env={"COLUMNS": str(width)})


def test_table_in_a_narrow_terminal_hides_no_column(data_dir):
    r = _sql(data_dir)
    assert r.exit_code == 0, r.output
    out = r.output
    # Wider than 80 columns: one block per row, every column named with its value.
    assert out.count("-[ row ") == 2
    for name in COLUMNS:
        assert f"\n{name.ljust(len('billing_increment_s'))} |" in out, name
    assert "sku                 | NVIDIA H100 80GB HBM3/secure" in out
    assert "price_per_hour      | 3.2900" in out  # 2026-08-25 secure
    assert "available           | True" in out  # lp1s "Low" in that capture
    assert max(len(line) for line in out.splitlines()) <= 80


def test_table_that_fits_is_one_line_per_row_with_full_width_columns():
    names = ["provider", "sku", "price"]
    rows = [("runpod", "NVIDIA H100 80GB HBM3/secure", 3.29), ("lambda", "gpu_1x_h100", None)]
    text = sql_output.table(names, rows, width=80).splitlines()
    assert text[0] == "provider | sku                          | price"
    assert text[2] == "runpod   | NVIDIA H100 80GB HBM3/secure | 3.2900"
    assert text[3] == "lambda   | gpu_1x_h100                  |"  # NULL is blank
    # a cell over CELL_MAX is cut with an ellipsis in the table, never a column
    long = sql_output.table(["x"], [("a" * 100,)], width=None).splitlines()[2]
    assert len(long) == sql_output.CELL_MAX and long.endswith("…")


def test_csv_json_markdown_give_every_column_whole(data_dir):
    rows = list(csv.DictReader(io.StringIO(_sql(data_dir, "--format", "csv").output)))
    assert len(rows) == 2 and list(rows[0]) == list(COLUMNS)
    assert [r["price_per_hour"] for r in rows] == ["3.29", "3.49"]
    assert json.loads(rows[0]["extra"])["stock_status_secure"] == "Low"
    doc = json.loads(_sql(data_dir, "--format", "json").output)
    assert [d["snapshot_date"] for d in doc] == ["2026-08-25", "2026-09-29"]
    assert doc[0]["available"] is True and doc[1]["available"] is None
    md = _sql(data_dir, "--format", "markdown").output.splitlines()
    assert md[0].startswith("| snapshot_date | captured_at | provider |")
    assert md[1] == "|" + "|".join(["---"] * len(COLUMNS)) + "|"
    assert len(md) == 4 and "| NVIDIA H100 80GB HBM3/secure |" in md[2]


def test_unknown_format_is_refused(data_dir):
    r = _sql(data_dir, "--format", "xml")
    assert r.exit_code == 2 and "--format must be one of table, csv, json, markdown" in r.output


def test_no_warehouse_hint_keeps_the_data_dir(tmp_path):
    where = tmp_path / "elsewhere"
    r = CliRunner().invoke(app, ["sql", "select 1", "--data-dir", str(where)])
    assert r.exit_code == 2
    assert f"gpuprices nightly --replay all --data-dir {where}" in " ".join(r.output.split())
