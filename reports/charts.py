"""Charts as inline SVG, drawn by hand: no script, no external file, so the report is one
self-contained page."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from gpuprices.reports.build import Report
from gpuprices.reports.sections import TREND_WEEKS
from gpuprices.reports.tables import fmt

CHART_SERIES = 8  # lines per chart: more are unreadable
_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
            "#17becf")


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw), default=mag * 10)
    first = math.floor(lo / step) * step
    ticks = []
    t = first
    while t <= hi + step * 1e-9:
        if t >= lo - step * 1e-9:
            ticks.append(round(t, 10))
        t += step
    return ticks


Point = tuple[dt.date, float]


def _segments(points: list[Point | None]) -> list[list[Point]]:
    """The runs of points between break markers (None): each is drawn as one line."""
    out: list[list[Point]] = [[]]
    for p in points:
        if p is None:
            out.append([])
        else:
            out[-1].append(p)
    return [seg for seg in out if seg]


@dataclass(frozen=True)
class _Plot:
    """The plot area and its scales, shared by every part of a chart."""

    left: int
    top: int
    width: int
    height: int
    x0: dt.date
    x1: dt.date
    y0: float  # in scale units (log10 of the value on a log scale)
    y1: float
    log_y: bool

    def scale(self, v: float) -> float:
        return math.log10(v) if self.log_y else v

    def px(self, d: dt.date) -> float:
        return self.left + self.width * (d - self.x0).days / (self.x1 - self.x0).days

    def py(self, v: float) -> float:
        return self.top + self.height * (1 - (self.scale(v) - self.y0) / (self.y1 - self.y0))


def _plot(series: dict[str, list[Point | None]], x_range: tuple[dt.date, dt.date] | None,
          log_y: bool, left: int, top: int, width: int, height: int) -> _Plot:
    """The scales: dates over x_range (default: the data's), prices from 0 (or from the lowest
    on a log scale) to the highest, with 5% room."""
    xs = [pt[0] for v in series.values() for pt in v if pt]
    ys = [pt[1] for v in series.values() for pt in v if pt and (pt[1] > 0 or not log_y)]
    x0, x1 = x_range or (min(xs), max(xs))
    if x1 <= x0:
        x1 = x0 + dt.timedelta(days=1)
    f = (math.log10 if log_y else (lambda v: v))
    y0, y1 = f(min(ys)), f(max(ys))
    if not log_y:
        y0 = 0.0
    if y1 <= y0:
        y1 = y0 + 1
    pad = (y1 - y0) * 0.05
    y1 += pad
    if log_y:
        y0 -= pad
    return _Plot(left, top, width, height, x0, x1, y0, y1, log_y)


def _y_axis(p: _Plot) -> list[str]:
    """Price grid lines with their labels: 1-2-5 steps on a log scale."""
    if p.log_y:
        ticks = [10 ** e * m for e in range(math.floor(p.y0), math.ceil(p.y1) + 1)
                 for m in (1, 2, 5) if p.y0 <= math.log10(10 ** e * m) <= p.y1]
    else:
        ticks = _nice_ticks(p.y0, p.y1)
    parts = []
    for t in ticks:
        y = p.py(t)
        parts.append(f'<line x1="{p.left}" x2="{p.left + p.width}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'class="g"/><text x="{p.left - 6}" y="{y + 4:.1f}" class="yl">'
                     f'{fmt(t, "money")}</text>')
    return parts


def _x_ticks(x0: dt.date, x1: dt.date) -> tuple[list[dt.date], str]:
    """Date ticks and their strftime label: weekly or fortnightly up to 120 days, else the
    first of every month (or of every few months, at most ~10 ticks)."""
    span = (x1 - x0).days
    if span <= 120:
        step = 7 if span <= 100 else 14
        d = x0
        xt = []
        while d <= x1:
            xt.append(d)
            d += dt.timedelta(days=step)
        return xt, "%d %b"
    xt = []
    d = dt.date(x0.year, x0.month, 1)
    months = max(1, math.ceil(span / 30 / 10))
    while d <= x1:
        if d >= x0:
            xt.append(d)
        m = d.month - 1 + months
        d = dt.date(d.year + m // 12, m % 12 + 1, 1)
    return xt, "%b %Y"


def _x_axis(p: _Plot) -> list[str]:
    ticks, label = _x_ticks(p.x0, p.x1)
    parts = []
    for d in ticks:
        x = p.px(d)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{p.top}" y2="{p.top + p.height}" '
                     f'class="g"/><text x="{x:.1f}" y="{p.top + p.height + 16}" class="xl">'
                     f'{d.strftime(label)}</text>')
    return parts


def _series(p: _Plot, name: str, pts: list[Point | None], color: str) -> list[str]:
    """One series' lines (one polyline per run of points between breaks) and its points, each
    point with a tooltip."""
    parts = []
    for seg in _segments(pts):
        coords = " ".join(f"{p.px(d):.1f},{p.py(v):.1f}" for d, v in seg
                          if v > 0 or not p.log_y)
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{color}" '
                     f'stroke-width="2"/>')
    for d, v in (pt for pt in pts if pt):
        parts.append(f'<circle cx="{p.px(d):.1f}" cy="{p.py(v):.1f}" r="2.5" fill="{color}">'
                     f'<title>{escape(name)} {d}: {fmt(v, "money")}</title></circle>')
    return parts


def _legend_entry(p: _Plot, i: int, name: str, color: str) -> str:
    """The i-th line of the legend, right of the plot area."""
    ly = p.top + 14 + i * 18
    x = p.left + p.width
    return (f'<rect x="{x + 12}" y="{ly - 9}" width="12" height="4" fill="{color}"/>'
            f'<text x="{x + 30}" y="{ly - 3}" class="lg">{escape(name)}</text>')


# Around the plot area: the price labels (left), the legend (right), the title (top) and the
# dates (bottom).
_ML, _MR, _MT, _MB = 70, 190, 30, 40


def _frame(title: str, width: int, height: int) -> tuple[list[str], int, int]:
    """A chart's opening SVG (its size, the title as tooltip and caption) and the width and
    height of its plot area."""
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
             f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
             f'<title>{escape(title)}</title>',
             f'<text x="{_ML}" y="18" class="ct">{escape(title)}</text>']
    return parts, width - _ML - _MR, height - _MT - _MB


def _empty(parts: list[str], ph: int, message: str) -> Markup:
    """The chart closed with `message` where the plot would be."""
    parts.append(f'<text x="{_ML + 10}" y="{_MT + ph / 2}" class="empty">{message}</text></svg>')
    return Markup("".join(parts))


def _axes(p: _Plot, y_label: str) -> list[str]:
    """The plot area, the price and date grid lines with their labels and the price axis'
    title."""
    mid = p.top + p.height / 2
    return [f'<rect x="{p.left}" y="{p.top}" width="{p.width}" height="{p.height}" class="pa"/>',
            *_y_axis(p), *_x_axis(p),
            f'<text x="14" y="{mid}" class="yt" transform="rotate(-90 14 {mid})">'
            f'{escape(y_label)}</text>']


def line_chart(series: dict[str, list[Point | None]], title: str, y_label: str,
               x_range: tuple[dt.date, dt.date] | None = None, width: int = 900,
               height: int = 320, log_y: bool = False) -> Markup:
    """An inline SVG line chart (a legend, date and price axes; per series one polyline per run
    of points, a None in a series' points in x order breaking its line). The parts are drawn
    through one _Plot, so they share the margins and the scales."""
    series = {k: v for k, v in series.items() if any(pt is not None for pt in v)}
    parts, pw, ph = _frame(title, width, height)
    if not series:
        return _empty(parts, ph, "no data in this period")
    p = _plot(series, x_range, log_y, _ML, _MT, pw, ph)
    parts += _axes(p, y_label)
    for i, (name, pts) in enumerate(series.items()):
        color = _PALETTE[i % len(_PALETTE)]
        parts += _series(p, name, pts, color)
        parts.append(_legend_entry(p, i, name, color))
    parts.append("</svg>")
    return Markup("".join(parts))


def _next_week(d: dt.date) -> dt.date:
    return d + dt.timedelta(weeks=1)


def _next_month(d: dt.date) -> dt.date:
    return dt.date(d.year + d.month // 12, d.month % 12 + 1, 1)


def _pick_series(rows: list[dict[str, Any]], x_key: str,
                 following: Callable[[dt.date], dt.date]) -> dict[str, list[Point | None]]:
    """The CHART_SERIES GPU models seen most often (ties: alphabetical), each point in x order,
    with a break (None) before a point that does not follow the previous one (`following`: the
    next x) or whose providers (the rows' `providers`) differ: a gap or a change of the offers
    behind the figure is never drawn as a move."""
    count: dict[str, int] = {}
    for r in rows:
        count[r["gpu_model"]] = count.get(r["gpu_model"], 0) + 1
    keep = sorted(count, key=lambda g: (-count[g], g))[:CHART_SERIES]
    out: dict[str, list[Point | None]] = {g: [] for g in sorted(keep)}
    last: dict[str, tuple[dt.date, Any]] = {}
    for r in sorted(rows, key=lambda r: r[x_key]):
        g = r["gpu_model"]
        if g not in out or r["lowest"] is None:
            continue
        x, behind = r[x_key], r.get("providers")
        if g in last and (following(last[g][0]) != x or last[g][1] != behind):
            out[g].append(None)
        out[g].append((x, float(r["lowest"])))
        last[g] = (x, behind)
    return out


def charts(rep: Report) -> dict[str, Markup]:
    out = {}
    if rep.trend is not None:
        x_range = (rep.trend_ends[0] - dt.timedelta(days=6), rep.trend_ends[-1])
        out["trend"] = line_chart(
            _pick_series(rep.trend.rows, "week_end", _next_week),
            f"Lowest on-demand price per GPU-hour, {TREND_WEEKS} weeks to {rep.end}",
            f"{rep.currency} per GPU-hour", x_range=x_range, log_y=True)
    if rep.history is not None:
        out["history"] = line_chart(
            _pick_series(rep.history.rows, "month", _next_month),
            "Lowest on-demand price per GPU-hour by month, all history",
            f"{rep.currency} per GPU-hour", log_y=True)
    return out
