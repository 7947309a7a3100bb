"""The bytes of an AWS Price List JSON offer file, read in one pass (offer_file.py builds the
offers).

The file is cut at the byte positions of its `"terms"`, `"OnDemand"` and `"Reserved"` keys (found
with `bytes.find`, which is cheap): `Stream` hands out the pieces between them. Every piece (the
products, then each terms section) is walked by `scan_entries`, a structural scan that finds each
SKU entry (`"<SKU>" : {` after `{` or `,`) and decodes with `json.loads` only the entries its
`Section` wants, judged on the raw bytes: the products that may be GPU instances, the terms of
kept GPU SKUs. Building every other entry as objects was most of the time. The scan is checked:
a decoded entry must have its section's shape, and the last entry of each section is always
decoded and must be followed by the section's closing brace, so a file cut anywhere is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from gpuprices.spiders.parsers import ParseError
from gpuprices.warehouse.contract import CaptureMeta, Offer

CHUNK = 1 << 20  # bytes read at a time
TERMS_KEY = b'"terms"'
TERM_KEYS = (b'"OnDemand"', b'"Reserved"')
_KEY_TAIL = re.compile(rb"\s{0,24}:\s{0,24}\{")
_OVERLAP = 64  # bytes kept back at a piece's end, so a marker cut by a read is still found


def _chunks(fileobj: IO[bytes] | bytes) -> Iterator[bytes]:
    if isinstance(fileobj, bytes | bytearray | memoryview):
        view = memoryview(fileobj)
        for i in range(0, len(view), CHUNK):
            yield bytes(view[i:i + CHUNK])
        return
    while True:
        chunk = fileobj.read(CHUNK)
        if not chunk:
            return
        yield chunk


def _find_marker(buf: bytes, keys: tuple[bytes, ...]) -> tuple[int, bytes | None]:
    """First position of a key marker (`"key" : {`) in buf: (pos, key); (pos, None) when a
    candidate sits too near the end to decide; (-1, None) when there is none."""
    start = 0
    while True:
        hits = [(p, k) for k in keys if (p := buf.find(k, start)) >= 0]
        if not hits:
            return -1, None
        pos, key = min(hits)
        end = pos + len(key)
        if _KEY_TAIL.match(buf, end):
            return pos, key
        if len(buf) - end < _OVERLAP:
            return pos, None
        start = pos + 1


class Stream:
    """The raw bytes of an offer file, handed out in pieces that stop before a key marker."""

    def __init__(self, fileobj: IO[bytes] | bytes) -> None:
        self._chunks = _chunks(fileobj)
        self.buf = b""
        self.exhausted = False
        self.marker: bytes | None = None  # the marker the last piece stopped at

    def _pull(self) -> bool:
        chunk = next(self._chunks, None)
        if chunk is None:
            self.exhausted = True
            return False
        self.buf = self.buf + chunk if self.buf else chunk
        return True

    def head(self, size: int = 65536) -> bytes:
        while len(self.buf) < size and not self.exhausted and self._pull():
            pass
        return self.buf[:size]

    def read_until(self, keys: tuple[bytes, ...]) -> bytes:
        """Next bytes before the first marker of `keys`; b"" once at a marker (self.marker is
        set, the marker left in the buffer) or at the end of the file."""
        while True:
            if not self.buf and not self._pull():
                return b""
            pos, key = _find_marker(self.buf, keys)
            if pos == 0 and key is not None:
                self.marker = key
                return b""
            if pos > 0:
                out, self.buf = self.buf[:pos], self.buf[pos:]
                return out
            if pos == 0 or len(self.buf) <= _OVERLAP:  # undecided or too short: read more
                if not self._pull():
                    out, self.buf = self.buf, b""
                    return out
                continue
            cut = len(self.buf) - _OVERLAP
            out, self.buf = self.buf[:cut], self.buf[cut:]
            return out

    def consume_marker(self) -> bytes:
        key = self.marker
        assert key is not None
        self.buf = self.buf[len(key):]
        self.marker = None
        return key


_WS = frozenset(b" \t\r\n")
_SKU_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_DECODER = json.JSONDecoder()
# A SKU entry's key and the brace that opens its value (the same test as _entry_key, in C).
_KEY_OPEN = re.compile(rb'"([A-Z0-9]{1,64})"[ \t\r\n]*:[ \t\r\n]*\{')


def _entry_key(buf: bytes, i: int) -> int:
    """Index of the opening quote of the key when the `{` at buf[i] opens a SKU entry of a
    terms section (`"<upper-case letters and digits>" : {` after `{` or `,`), else -1. Inside a
    SKU entry no other object-valued key qualifies: term and rate codes hold a dot
    ("H7NG….JRTCKXETXF"), the rest are lower-case words ("priceDimensions", "pricePerUnit",
    "termAttributes"); "USD"/"CNY" hold strings, not objects."""
    j = i - 1
    while j >= 0 and buf[j] in _WS:
        j -= 1
    if j < 0 or buf[j] != 0x3A:  # ':'
        return -1
    j -= 1
    while j >= 0 and buf[j] in _WS:
        j -= 1
    if j < 1 or buf[j] != 0x22:  # closing quote of the key
        return -1
    q = j - 1
    while q >= 0 and j - q <= 64 and buf[q] in _SKU_CHARS:
        q -= 1
    if q < 0 or q == j - 1 or buf[q] != 0x22:
        return -1
    k = q - 1
    while k >= 0 and buf[k] in _WS:
        k -= 1
    return q if k >= 0 and buf[k] in b"{," else -1


class Section:
    """What scan_entries needs to know of one section: where it is (for errors), the markers
    that end it, which entries to decode (`wants(buf, lo, hi, key)`, on the raw bytes), how a
    decoded entry is checked, and what receives it (`handle(sku, value)`, yielding offers)."""

    def __init__(self, where: str, stops: tuple[bytes, ...], wants: Callable[..., bool],
                 check: Callable[[str, Any], bool], handle: Callable[..., Iterable[Offer]],
                 shape: str) -> None:
        self.where, self.stops, self.wants, self.check = where, stops, wants, check
        self.handle, self.shape = handle, shape


def terms_section(name: str, keep: dict[str, Any], handle) -> Section:
    """A terms section: only the entries of kept (default GPU) SKUs are decoded, and each must
    hold "<sku>.<term code>" keys."""
    return Section(f"terms.{name}", TERM_KEYS, lambda buf, lo, hi, key: key.decode() in keep,
                   _is_terms, handle, "a set of terms")


def _is_terms(sku: str, value: Any) -> bool:
    return isinstance(value, dict) and all(k.startswith(sku + ".") for k in value)


def scan_entries(stream: Stream, meta: CaptureMeta, sec: Section) -> Iterator[Offer]:
    """The SKU entries of one section (the products, or one terms section), read from the
    stream up to the next marker of `sec.stops`.

    Only the entries `sec.wants` are decoded; the others are stepped over by a
    structural scan, which is what makes a file's bytes cheap. Entries are
    found by checking every `{` (`_entry_key`); once the first entry shows the file is
    pretty-printed (AWS's files are), the next ones are found by its key line's indentation
    (`\\n<indent>"`), each candidate still checked by `_entry_key`, and each entry stepped over
    must hold exactly one closing line at that indentation (`\\n<indent>}`) as its last line, else
    that stretch is searched `{` by `{` (as the section's last stretch always is). The last entry
    of the section is always decoded and must be followed by the section's closing brace, so a
    file cut anywhere in its products or terms is refused.

    One function, longer than most, because its loops share the scan's state (the buffer, the
    resume position, the open entry and the layout anchor) and run once per byte range of a
    file of hundreds of MB: split, that state would travel through calls in the hot loop."""
    buf = b""
    pos = 0  # where the search resumes in buf
    cur_open = -1  # the "{" of the current (not yet complete) entry in buf
    cur_key = b""
    anchor = closer = b""

    def generic(lo: int, hi: int) -> Iterator[tuple[int, int]]:
        """(open brace, key quote) of the entries starting in buf[lo:hi], `{` by `{`."""
        while True:
            i = buf.find(b"{", lo, hi)
            if i < 0:
                return
            lo = i + 1
            q = _entry_key(buf, i)
            if q >= 0:
                yield i, q

    def key_at(q: int) -> bytes:
        return buf[q + 1:buf.index(b'"', q + 1)]

    while True:
        data = stream.read_until(sec.stops)
        if not data:
            break
        buf += data
        while True:
            if anchor:
                j = buf.find(anchor, pos)
                if j < 0:
                    pos = max(pos, len(buf) - len(anchor))
                    break
                q = j + len(anchor) - 1
                m = _KEY_OPEN.match(buf, q)
                if m is None:
                    if len(buf) - q < 256:  # maybe cut short by the read: wait for more
                        pos = j
                        break
                    pos = j + 1
                    continue
                k = j - 1
                while k >= 0 and buf[k] in _WS:
                    k -= 1
                if k < 0 or buf[k] not in b"{,":
                    pos = j + 1
                    continue
                i = m.end() - 1
                pos = i + 1
                c = buf.rfind(closer, cur_open, q)
                if (c < 0 or buf.find(closer, cur_open, c) >= 0
                        or buf[c + len(closer):q].strip(b" \t\r\n,")):
                    # not laid out as assumed: look for entries in this stretch the slow way
                    for i2, q2 in generic(cur_open + 1, q):
                        yield from _finish_entry(buf, cur_open, q2, cur_key, sec, meta)
                        cur_open, cur_key = i2, key_at(q2)
                yield from _finish_entry(buf, cur_open, q, cur_key, sec, meta)
                cur_open, cur_key = i, m.group(1)
                continue
            i = buf.find(b"{", pos)
            if i < 0:
                pos = len(buf)
                break
            pos = i + 1
            q = _entry_key(buf, i)
            if q < 0:
                continue
            if cur_open >= 0:
                yield from _finish_entry(buf, cur_open, q, cur_key, sec, meta)
            cur_open, cur_key = i, key_at(q)
            line = buf.rfind(b"\n", 0, q)
            indent = buf[line + 1:q]
            if line >= 0 and not indent.strip(b" \t"):
                anchor, closer = b"\n" + indent + b'"', b"\n" + indent + b"}"
        # keep only the open entry (or, before the first entry, a tail for the look-back)
        drop = cur_open if cur_open >= 0 else max(len(buf) - _OVERLAP, 0)
        buf, pos = buf[drop:], pos - drop
        if cur_open >= 0:
            cur_open = 0
    if cur_open < 0:
        return  # an empty section
    # the last stretch is searched `{` by `{` whatever the layout (it is one entry, or a few)
    for i2, q2 in generic(cur_open + 1, len(buf)):
        yield from _finish_entry(buf, cur_open, q2, cur_key, sec, meta)
        cur_open, cur_key = i2, key_at(q2)
    buf = buf[cur_open:]
    try:
        text = buf.decode("utf-8")
        value, end = _DECODER.raw_decode(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ParseError(meta.provider, meta.url,
                         f"offer file truncated or malformed in {sec.where} ({exc})") from exc
    rest = text[end:]
    closing = rest.count("}") - rest.count("{")
    final = stream.marker is None
    if not rest.lstrip().startswith("}") or (final and closing < 3):
        raise ParseError(meta.provider, meta.url,
                         f"offer file truncated in {sec.where} (section not closed)")
    if sec.wants(buf, 0, len(buf), cur_key):
        _check_entry(cur_key.decode(), value, meta, sec)
        yield from sec.handle(cur_key.decode(), value)


def _check_entry(sku: str, value: Any, meta: CaptureMeta, sec: Section) -> None:
    """A decoded SKU entry must have the section's shape: anything else means the scan lost
    its place (a layout change), which must be loud."""
    if not sec.check(sku, value):
        raise ParseError(meta.provider, meta.url,
                         f"offer file {sec.where}: entry {sku} is not {sec.shape}")


def _finish_entry(buf: bytes, lo: int, hi: int, key: bytes, sec: Section,
                  meta: CaptureMeta) -> Iterator[Offer]:
    if not sec.wants(buf, lo, hi, key):
        return
    sku = key.decode()
    entry = buf[lo:hi].rstrip()
    if entry.endswith(b","):
        entry = entry[:-1]
    try:
        value = json.loads(entry)
    except ValueError as exc:
        raise ParseError(meta.provider, meta.url,
                         f"offer file malformed in {sec.where} at SKU {sku} ({exc})") from exc
    _check_entry(sku, value, meta, sec)
    yield from sec.handle(sku, value)
