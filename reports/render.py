"""Writing a Report: one self-contained HTML page (Jinja2 template, inline CSS and SVG), the same
tables in Markdown, and one CSV per table in full."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
from jinja2 import Environment, FileSystemLoader, select_autoescape

from gpuprices.reports import index_charts
from gpuprices.reports.build import Report, build_report
from gpuprices.reports.charts import charts
from gpuprices.reports.markdown_text import md_text
from gpuprices.reports.tables import Table, fmt
from gpuprices.sizing.workload import Workload

TEMPLATES = Path(__file__).parent / "templates"
TOP_CHANGES = 25
LIST_LIMIT = 40  # appeared / disappeared / announced rows listed (all are in the CSVs)


def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                      autoescape=select_autoescape(["html", "j2"], default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = fmt
    return env


def render_html(rep: Report) -> str:
    return _env().get_template("report.html.j2").render(
        rep=rep, charts=charts(rep) | index_charts.charts(rep), list_limit=LIST_LIMIT,
        top_changes=TOP_CHANGES)


# Cells of these kinds are numbers we formatted ourselves: no provider text in them.
_NUMERIC = ("money", "pct", "int", "num", "ratio")


def _md_cell(value: Any, kind: str) -> str:
    text = fmt(value, kind)
    if kind in _NUMERIC:
        return text
    # Provider text must not break the table or become markup (a link, an image, raw HTML)
    # in a Markdown renderer: reports/markdown_text.py.
    return md_text(text)


def _md_table(t: Table, limit: int | None = None) -> str:
    lines = [f"### {t.title}", ""]
    if t.note:
        lines += [t.note, ""]
    if not t.rows:
        return "\n".join(lines + ["(none)", ""])
    lines.append("| " + " | ".join(c.label for c in t.columns) + " |")
    lines.append("|" + "|".join("---:" if c.kind in ("money", "pct", "int", "num", "ratio")
                                else "---" for c in t.columns) + "|")
    for r in t.shown(limit):
        lines.append("| " + " | ".join(_md_cell(r.get(c.key), c.kind) for c in t.columns)
                     + " |")
    if limit is not None and len(t.rows) > limit:
        lines.append(f"\n… {len(t.rows) - limit} more in `{t.name}.csv`")
    return "\n".join(lines + [""])


def render_markdown(rep: Report) -> str:
    out = [f"# GPU prices — week {rep.week} ({rep.start} – {rep.end})", "",
           f"**{_md_cell(rep.coverage, 'text')}**", "",
           f"Prices in {rep.currency} per hour at the ECB rate of each snapshot date. "
           f"\"Now\" is each provider's latest snapshot on or before {rep.end} if it is at most "
           f"{rep.max_age_days} days old; figures use firm prices only. "
           f"Generated {rep.generated_at:%Y-%m-%d %H:%M} UTC.", ""]
    out += [f"- {_md_cell(line, 'text')}" for line in rep.picks] + ([""] if rep.picks else [])
    if rep.headline:
        out += ["## Where to rent this week", "", _md_table(rep.headline)]
    out += [f"- {n}" for n in rep.notes] + ([""] if rep.notes else [])
    if rep.workloads:
        out += ["## Workloads", ""]
        for w in rep.workloads:
            out += [f"**{_md_cell(w['name'], 'text')}** — {_md_cell(w['summary'], 'text')}", ""]
            out += [_md_table(w["top"]), _md_table(w["per_provider"]), _md_table(w["apart"]),
                    _md_table(w["nofit"])]
    if rep.rent_own:
        out += ["## Rent, reserve or own", "", _md_table(rep.rent_own)]
    out += ["## GPU models", "", _md_table(rep.gpu_now), _md_table(rep.spread),
            _md_table(rep.not_firm), _md_table(rep.stale),
            _md_table(rep.trend)]
    if rep.index:
        out += ["## GPU rental price index", "", _md_table(rep.index)]
    out += ["## Changes this week", "",
            _md_table(rep.changes[0], TOP_CHANGES)]
    out += [_md_table(t, LIST_LIMIT) for t in rep.changes[1:]]
    out += ["## Data health", "", _md_table(rep.health)]
    if rep.bench_plan:
        out += ["## Appendix: Benchmark plan before committing", "", _md_table(rep.bench_plan)]
    return "\n".join(out)


# A text cell a spreadsheet would read as a formula (a provider's SKU "=HYPERLINK(…)"), per
# OWASP's CSV Injection guidance (https://owasp.org/www-community/attacks/CSV_Injection): a
# leading =, +, -, @, tab or carriage return is prefixed with a single quote, which spreadsheets
# read as "text". Numbers are written as numbers (a negative price change stays -12.5).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _inert(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def _csv_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return ""
    if isinstance(v, set):
        return _inert(";".join(sorted(v)))
    if isinstance(v, str):
        return _inert(v)
    return "" if v is None else v


def write_csv(t: Table, path: Path) -> None:
    keys = [c.key for c in t.columns]
    extra = [k for k in (t.rows[0] if t.rows else {}) if k not in keys
             and not isinstance(t.rows[0][k], dict | list)]
    tmp = path.with_suffix(".csv.part")
    with tmp.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(keys + extra)
        for r in t.rows:
            w.writerow([_csv_value(r.get(k)) for k in keys + extra])
    tmp.replace(path)


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_report(con: duckdb.DuckDBPyConnection, out_root: Path | str, week: str | None = None,
                 currency: str = "USD", workloads: Sequence[Workload] = (),
                 rank_fn: Callable[..., Any] | None = None,
                 node_shapes: Mapping[str, Sequence[int]] | None = None,
                 max_age_days: int | None = None,
                 discounts: Sequence[Any] = ()) -> Path:
    """Build the report and write `<out_root>/<week>/report.html`, `report.md` and the CSVs.
    Returns the HTML path. The HTML is written last, so its presence means a complete set."""
    rep = build_report(con, week, currency, workloads, rank_fn, node_shapes=node_shapes,
                       max_age_days=max_age_days, discounts=discounts)
    folder = Path(out_root) / rep.week
    folder.mkdir(parents=True, exist_ok=True)
    for t in rep.tables():
        write_csv(t, folder / f"{t.name}.csv")
    _atomic_text(folder / "report.md", render_markdown(rep))
    html = folder / "report.html"
    _atomic_text(html, render_html(rep))
    return html
