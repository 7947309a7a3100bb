"""`gpuprices sql --format table|csv|json|markdown`: one query's answer as text a person or a
program can read, every column shown.

- table (default): plain text, each column as wide as its header and widest cell, never
  shrunk to nothing (a rich table squeezed 19 of the 23 columns of
  `select * from offers limit 2` to zero width in an 80-column terminal). A cell longer than
  CELL_MAX characters is cut with "…" (csv, json and markdown keep it whole). When the table is
  wider than the terminal, each row is printed as a block of "column | value" lines instead
  (psql's expanded display), so no column runs off the screen.
- csv: RFC 4180 via the csv module, header first; NULL is an empty field.
- json: a list of objects, one per row; dates and decimals as text.
- markdown: a GitHub table; `|` inside a cell escaped, newlines as spaces.
Cells are data, printed as written: no markup is interpreted.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from gpuprices.flows.channels.formats import plain

FORMATS = ("table", "csv", "json", "markdown")
CELL_MAX = 60  # characters of one cell in the table format (whole in csv/json/markdown)


def cell(v: Any) -> str:
    """One value as the table and markdown formats show it (floats to 4 places, as before)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def _cut(text: str, most: int = CELL_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 1] + "…"


def table(names: Sequence[str], rows: Sequence[Sequence[Any]], width: int | None) -> str:
    """Columns at full width; expanded blocks when wider than `width` (None: no limit)."""
    cells = [[_cut(cell(v)) for v in row] for row in rows]
    heads = [_cut(n) for n in names]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(heads)]
    total = sum(widths) + 3 * max(len(widths) - 1, 0)
    if width is not None and total > width and rows:
        return expanded(heads, [[cell(v) for v in row] for row in rows], width)
    lines = [" | ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip(),
             "-+-".join("-" * w for w in widths)]
    for r in cells:
        lines.append(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)


def expanded(heads: Sequence[str], cells: Sequence[Sequence[str]], width: int) -> str:
    """One block per row: `column | value`, the columns' names aligned, each line within
    `width` (a longer value cut with "…", at least 20 characters of it shown)."""
    pad = max(len(h) for h in heads) if heads else 0
    most = max(20, width - pad - 3)
    out = []
    for i, r in enumerate(cells, 1):
        out.append(f"-[ row {i} ]" + "-" * max(pad - 6, 4))
        out += [f"{h.ljust(pad)} | {_cut(c, most)}".rstrip()
                for h, c in zip(heads, r, strict=True)]
    return "\n".join(out)


def as_csv(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for row in rows:
        w.writerow(["" if v is None else plain(v) for v in row])
    return buf.getvalue().rstrip("\n")


def as_json(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return json.dumps([{n: plain(v) for n, v in zip(names, row, strict=True)} for row in rows],
                      indent=2, default=str)


def as_markdown(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def md(text: str) -> str:
        return " ".join(text.split()).replace("|", "\\|")

    lines = ["| " + " | ".join(md(n) for n in names) + " |",
             "|" + "|".join("---" for _ in names) + "|"]
    lines += ["| " + " | ".join(md(cell(v)) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def render(names: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str,
           width: int | None = None) -> str:
    if fmt == "csv":
        return as_csv(names, rows)
    if fmt == "json":
        return as_json(names, rows)
    if fmt == "markdown":
        return as_markdown(names, rows)
    return table(names, rows, width)
