"""The price index charts of the report: per headline GPU model its index line inside its band
(25th to 75th percentile of the members' prices), over the last 12 weeks and since 2023, as
inline SVG drawn with the scales of reports/charts.py."""

from __future__ import annotations

import datetime as dt
from typing import Any

from markupsafe import Markup

from gpuprices.reports import charts as base
from gpuprices.reports.build import Report
from gpuprices.reports.index_section import CHART_WEEKS
from gpuprices.reports.tables import fmt

_LINE, _BAND = "#1f77b4", "#9ecae1"


def _runs(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The runs of consecutive days with a value: a day without one breaks the line and the
    band (a gap is drawn as a gap, never bridged)."""
    out: list[list[dict[str, Any]]] = [[]]
    for r in rows:
        if r["value"] is None:
            out.append([])
        else:
            out[-1].append(r)
    return [run for run in out if run]


def band_chart(rows: list[dict[str, Any]], title: str, x_range: tuple[dt.date, dt.date],
               width: int = 900, height: int = 300) -> Markup:
    """The index of `rows` (day, value, low, high) inside x_range as a line in its band."""
    rows = [r for r in rows if x_range[0] <= r["day"] <= x_range[1]]
    parts, pw, ph = base._frame(title, width, height)
    if not any(r["value"] is not None for r in rows):
        return base._empty(parts, ph, "no index value in this period")
    pts = {"value": [], "low": [], "high": []}
    for r in rows:
        if r["value"] is not None:
            for k in pts:
                pts[k].append((r["day"], r[k]))
    p = base._plot(pts, x_range, False, base._ML, base._MT, pw, ph)
    parts += base._axes(p, "USD per GPU-hour")
    for run in _runs(rows):
        upper = [f"{p.px(r['day']):.1f},{p.py(r['high']):.1f}" for r in run]
        lower = [f"{p.px(r['day']):.1f},{p.py(r['low']):.1f}" for r in reversed(run)]
        if len(run) == 1:  # one day: the band as a vertical bar
            x = p.px(run[0]["day"])
            parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{p.py(run[0]["low"]):.1f}" '
                         f'y2="{p.py(run[0]["high"]):.1f}" stroke="{_BAND}" stroke-width="6"/>')
        else:
            parts.append(f'<polygon points="{" ".join(upper + lower)}" fill="{_BAND}" '
                         f'fill-opacity="0.6" stroke="none" class="band"/>')
            line = " ".join(f"{p.px(r['day']):.1f},{p.py(r['value']):.1f}" for r in run)
            parts.append(f'<polyline points="{line}" fill="none" stroke="{_LINE}" '
                         f'stroke-width="2"/>')
        for r in run:
            parts.append(
                f'<circle cx="{p.px(r["day"]):.1f}" cy="{p.py(r["value"]):.1f}" r="2.5" '
                f'fill="{_LINE}"><title>{r["day"]}: {fmt(r["value"], "money")} (band '
                f'{fmt(r["low"], "money")} – {fmt(r["high"], "money")}, {r["panel"]} '
                f'members)</title></circle>')
    parts.append(base._legend_entry(p, 0, "index", _LINE))
    parts.append(base._legend_entry(p, 1, "band p25–p75", _BAND))
    parts.append("</svg>")
    return Markup("".join(parts))


def charts(rep: Report) -> dict[str, Markup]:
    """`index`: per headline GPU model with an index, its 12-week and since-2023 charts."""
    if not rep.index_series:
        return {}
    out = []
    for gpu, rows in rep.index_series.items():
        first = next(r["day"] for r in rows if r["value"] is not None)
        out.append(band_chart(rows, f"{gpu} on-demand index, {CHART_WEEKS} weeks to {rep.end}",
                              (rep.end - dt.timedelta(weeks=CHART_WEEKS), rep.end)))
        out.append(band_chart(rows, f"{gpu} on-demand index since 2023",
                              (min(first, rep.end - dt.timedelta(days=1)), rep.end)))
    return {"index": Markup("".join(out))}
