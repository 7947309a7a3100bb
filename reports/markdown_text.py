"""Provider text made inert in Markdown: the one escaping rule for report.md and the run
summaries (runs/<run_id>.md, flows/ops/alerts.py), so a provider string cannot become an image,
a link, emphasis, a heading, a list, raw HTML or a new table cell or row.

CommonMark lets a backslash escape any ASCII punctuation ("Backslash escapes",
https://spec.commonmark.org/0.31.2/#backslash-escapes): with `[` and `]` escaped no link or
image syntax survives (`![p](http://x/y.png)` shows as that text; `(`, `)` and `!` need no
escape then, so our own "(failed; ...)" stays readable in the raw file); `*`, `_`, `~`,
`` ` `` no emphasis, strikethrough or code; `|` no new table cell. `<`, `>` and `&` become
entities (no raw HTML, no autolink in angle brackets, no entity smuggling). `#` anywhere and a
leading `-`, `+`, `=` or `1.` are escaped so the text never starts a heading or list. Line
breaks are folded into spaces: one cell stays one cell."""

from __future__ import annotations

import re

_BACKSLASHED = frozenset("\\`*_[]|~#")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_LEADING_BLOCK = re.compile(r"^(?:[-+=]|\d+[.)])")


def md_text(text: object) -> str:
    """`text` as Markdown that renders as exactly that text (whitespace folded)."""
    flat = " ".join(str(text).split())
    out = "".join(_ENTITIES.get(ch) or ("\\" + ch if ch in _BACKSLASHED else ch) for ch in flat)
    m = _LEADING_BLOCK.match(out)
    if m:
        out = out[:m.end() - 1] + "\\" + out[m.end() - 1:]
    return out
