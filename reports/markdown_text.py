"""Provider text made inert in Markdown: the one escaping rule for report.md and the run
summaries (runs/<run_id>.md, flows/ops/alerts.py), so a provider string cannot become an image,
a link, emphasis, a heading, a list, a quote, raw HTML or a new table cell or row.

CommonMark lets a backslash escape any ASCII punctuation ("Backslash escapes",
https://spec.commonmark.org/0.31.2/#backslash-escapes): with `[` and `]` escaped no link or
image syntax survives (`![p](http://x/y.png)` shows as that text; `(`, `)` and `!` need no
escape then, so our own "(failed; ...)" stays readable in the raw file); `*`, `_`, `~`,
`` ` `` no emphasis, strikethrough or code; `|` no new table cell; `<` no raw HTML and no
autolink; `&` only where it would start an entity reference (`&lt;`, `&#60;`: "Entity and
numeric character references"), so "AT&T" stays as written. No HTML entity is ever written:
the raw file reads as the text (`-> 0.13`, not `-&gt; 0.13`), and a viewer shows the same.
`>` is inert inside a line; at the start, like `#` anywhere and a leading `-`, `+`, `=` or `1.`,
it is escaped so the text never starts a quote, heading or list. Line breaks are folded into
spaces: one cell stays one cell."""

from __future__ import annotations

import re

_BACKSLASHED = frozenset("\\`*_[]|~#<")
_LEADING_BLOCK = re.compile(r"^(?:[-+=>]|\d+[.)])")
# What CommonMark reads as an entity or numeric character reference after a `&`.
_ENTITY_AFTER = re.compile(r"(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")


def md_text(text: object) -> str:
    """`text` as Markdown that renders as exactly that text (whitespace folded)."""
    flat = " ".join(str(text).split())
    out = []
    for i, ch in enumerate(flat):
        if ch in _BACKSLASHED or (ch == "&" and _ENTITY_AFTER.match(flat, i + 1)):
            out.append("\\" + ch)
        else:
            out.append(ch)
    text = "".join(out)
    m = _LEADING_BLOCK.match(text)
    if m:
        text = text[:m.end() - 1] + "\\" + text[m.end() - 1:]
    return text
