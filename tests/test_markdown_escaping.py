"""Provider text cannot become Markdown in report.md or runs/*.md (issue 30, item 10): an error
message carrying image and link syntax stays text. Checked by rendering the Markdown with
markdown-it (CommonMark + tables, as a viewer would) and looking for <img> and <a>."""

import datetime as dt
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from gpuprices.flows.ops.alerts import render_summary
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.reports import build, render, sections
from gpuprices.reports.markdown_text import md_text
from gpuprices.sizing.workload import load_workloads
from gpuprices.warehouse import db

WORKLOADS = Path(__file__).resolve().parents[1] / "sizing/workloads.toml"

HOSTILE = "![p](http://127.0.0.1:9/x.png) [docs](javascript:alert(1))"
MORE = ["<img src=x onerror=alert(1)>", "**bold** _em_ ~~gone~~ `code`", "# heading",
        "- item", "1. item", "a | b\nc", "[x]: http://127.0.0.1:9/ref", "&lt;b&gt;",
        "<http://127.0.0.1:9/auto>", "\\[still text\\](http://127.0.0.1:9/)"]


def _html(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


@pytest.mark.parametrize("text", [HOSTILE, *MORE])
def test_escaped_text_renders_as_itself(text):
    html = _html(f"| cell |\n|---|\n| {md_text(text)} |\n\n- {md_text(text)}\n")
    for tag in ("<img", "<a ", "<strong", "<em", "<code", "<h1", "<s>", "<del"):
        assert tag not in html, (text, html)
    # One cell, one list item: nothing broke out of them.
    assert html.count("<td>") == 1 and html.count("<li>") == 1


def test_the_reports_data_health_table_keeps_an_error_as_text():
    con = db.connect(":memory:")
    db.init_schema(con)
    db.record_run(con, run_id="r1", provider="lambda", status="failed",
                  started_at=dt.datetime(2026, 10, 1, 2, tzinfo=dt.UTC), error=HOSTILE)
    table = sections.health(con, dt.date(2026, 9, 28), dt.date(2026, 10, 4), 14)
    markdown = render._md_table(table)
    assert "\\!" not in markdown and "\\[p\\]" in markdown  # escaped, still readable
    html = _html(markdown)
    assert "<img" not in html and "<a " not in html
    assert "![p](http://127.0.0.1:9/x.png)" in html  # shown as the text it is


def test_the_run_summary_keeps_an_error_as_text():
    day = dt.date(2026, 10, 6)
    summary = render_summary("r1", [DayResult("lambda", day, status="failed",
                                              errors=[f"lambda: {HOSTILE}"], run_date=day)])
    html = _html(summary)
    assert "<img" not in html and "<a " not in html
    assert "[docs](javascript:alert(1))" in html


ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")


def test_markdown_text_writes_no_entity_and_still_renders_as_itself():
    text = "rate x 8 node(s) -> 0.13 expected, AT&T < 5 &lt;b&gt; &#60;"
    escaped = md_text(text)
    assert not ENTITY.search(escaped.replace("\\&", "")), escaped  # only escaped ampersands
    assert "-> 0.13" in escaped and "AT&T" in escaped and "\\<" in escaped
    assert md_text("> quoted").startswith("\\>")
    html = _html(f"- {escaped}\n")
    # the viewer shows exactly the text, entity-looking parts included
    assert html == ("<ul>\n<li>rate x 8 node(s) -&gt; 0.13 expected, AT&amp;T &lt; 5 "
                    "&amp;lt;b&amp;gt; &amp;#60;</li>\n</ul>\n")


def test_the_w41_report_markdown_has_no_html_entities_and_the_html_stays_escaped(w41_settings):
    con = db.connect(w41_settings.db_path, read_only=True)
    try:
        rep = build.build_report(con, "2026-W41", "EUR", load_workloads(WORKLOADS),
                                 now=dt.datetime(2026, 10, 12, 6, tzinfo=dt.UTC))
    finally:
        con.close()
    md = render.render_markdown(rep)
    assert "-> " in md  # the spot-risk reasons: the arrow as written
    found = ENTITY.findall(md)
    assert not found, found[:5]
    for entity in ("&gt;", "&lt;", "&amp;", "&#"):
        assert entity not in md
    html = render.render_html(rep)
    assert "-&gt; " in html and "-> " not in html  # HTML escapes it, as it must
