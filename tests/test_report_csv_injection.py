"""Report CSVs never carry a spreadsheet formula from provider text (issue #11, item 14)."""

import csv

from gpuprices.reports.render import write_csv
from gpuprices.reports.tables import Column, Table


def test_text_cells_that_start_a_formula_are_made_text_and_numbers_stay_numbers(tmp_path):
    skus = ['=HYPERLINK("http://evil.example","H100")', "+cmd|' /C calc'!A0", "-2+3",
            "@SUM(A1:A9)", "\tx", "\rx", "8x H100 SXM", "H100 (=80GB)"]
    t = Table("where_to_rent", "t", [Column("sku", "SKU"), Column("pct", "%", "pct")],
              [{"sku": s, "pct": -12.5, "tags": {"=a", "b"}} for s in skus])
    write_csv(t, tmp_path / "t.csv")
    with (tmp_path / "t.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    got = [r["sku"] for r in rows]
    assert got[:6] == ["'" + s for s in skus[:6]]
    assert got[6:] == skus[6:]  # ordinary text untouched, '=' inside is harmless
    assert {r["pct"] for r in rows} == {"-12.5"}  # a negative number is not a formula
    assert {r["tags"] for r in rows} == {"'=a;b"}
