"""ECB euro reference rates: archived bytes -> (date, currency, rate_per_eur) rows -> fx_rates.

Three layouts, chosen by content (never by URL or date):

- the gesmes XML of eurofxref-daily.xml / -hist-90d.xml / -hist.xml:
  `<gesmes:Envelope><Cube><Cube time="YYYY-MM-DD"><Cube currency="USD" rate="1.0163"/>…`
  (the Cube elements live in the ECB's own namespace; matched namespace-aware, and also without
  a namespace because some mirrors strip it);
- the history CSV inside eurofxref-hist.zip: `Date,USD,JPY,…` then `2026-10-30,1.1172,…`, with
  `N/A` for currencies not quoted that day (e.g. the legacy CYP, or RUB since March 2022) and a
  trailing comma on every line;
- the daily CSV inside eurofxref.zip: `Date, USD, …` then `30 October 2026, 1.1172, …`.

Rates are EUR based: `rate_per_eur` units of the currency buy one euro.

This module also archives ECB responses like any other source (`snapshots/<date>/ecb.warc.gz`;
'ecb' is deliberately not one of the eight offer providers) and loads every archived rate into
the warehouse (`load_fx_from_archive`).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import re
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
from lxml import etree

from gpuprices.spiders.archive import (
    Capture,
    append_captures,
    latest_per_request,
    list_archives,
    read_archive,
)
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.sources import ecb as ecb_source
from gpuprices.warehouse import db, objstore

PROVIDER = ecb_source.PROVIDER
# XML namespace of the Cube elements (eurofxref vocabulary, as served since 2002).
ECB_NS = "http://www.ecb.int/vocabulary/2002-08-01/eurofxref"
USER_AGENT = "gpuprices/0.1 (ECB reference rates: each file once a day)"


@dataclass(frozen=True)
class FxRate:
    date: dt.date
    currency: str
    rate_per_eur: float


def _fail(url: str, problem: str) -> ParseError:
    return ParseError(PROVIDER, url, problem)


def _rate(text: str, url: str, where: str) -> float | None:
    text = text.strip()
    if not text or text.upper() == "N/A":
        return None
    try:
        value = float(text)
    except ValueError:
        raise _fail(url, f"{where}: rate {text!r} is not a number") from None
    if value <= 0:
        raise _fail(url, f"{where}: rate {value} is not positive")
    return value


def parse_xml(body: bytes, url: str = "") -> list[FxRate]:
    """The gesmes XML (daily, 90-day or full history)."""
    try:
        # resolve_entities=False / no_network: an XML body is data, never a fetch instruction.
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as exc:
        raise _fail(url, f"not well-formed XML: {exc}") from None
    days = root.findall(f".//{{{ECB_NS}}}Cube[@time]") or root.findall(".//Cube[@time]")
    if not days:
        raise _fail(url, "no <Cube time=…> element (not an ECB eurofxref document)")
    out: list[FxRate] = []
    for day in days:
        try:
            date = dt.date.fromisoformat(day.get("time", ""))
        except ValueError:
            raise _fail(url, f"Cube time {day.get('time')!r} is not a date") from None
        for cube in day:
            if not isinstance(cube.tag, str) or cube.get("currency") is None:
                continue
            cur = cube.get("currency", "").strip().upper()
            value = _rate(cube.get("rate", ""), url, f"{date} {cur}")
            if value is not None:
                out.append(FxRate(date, cur, value))
    if not out:
        raise _fail(url, "Cube elements carry no currency rates")
    return out


def _csv_date(text: str, url: str) -> dt.date:
    text = text.strip()
    for fmt in ("%Y-%m-%d", "%d %B %Y"):
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise _fail(url, f"CSV date {text!r} is neither YYYY-MM-DD nor '30 October 2026'")


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# A rate both float() and Arrow's cast read the same way: digits with an optional fraction.
_PLAIN_RATE = r"^[0-9]+(\.[0-9]+)?$"
_SPACE = " \t\x0b\x0c\x1c\x1d\x1e\x1f"  # what str.strip() takes off an ASCII cell


def _parse_csv_columnar(text: str) -> list[FxRate] | None:
    """parse_csv's answer for a plain CSV, read column by column with Arrow: the full history
    (~7,000 days x 40 currencies) took 2-3 s cell by cell in Python, and a run parses it more
    than once (the gates' USD rates, the load's fx_rates; always again for an archive on an
    object store). None whenever the text is anything but plain (not ASCII, quotes, a bare CR,
    a ragged row, an empty or unreadable date, a rate other than digits[.digits], N/A or empty,
    a rate not above zero): parse_csv then reads it cell by cell as before, to the same answer
    or the same error."""
    if not text.isascii() or '"' in text or "\r" in text.replace("\r\n", ""):
        return None
    lines = text.split("\n", 1)
    header = [h.strip() for h in lines[0].rstrip("\r").split(",")]
    if header[0] != "Date" or len(lines) < 2:
        return None
    header = [h.upper() for h in header]
    names = [f"c{i}" for i in range(len(header))]
    try:
        table = pa_csv.read_csv(
            io.BytesIO(lines[1].encode("ascii")),
            read_options=pa_csv.ReadOptions(column_names=names),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, ValueError):
        return None  # a row with more or fewer cells than the header
    if not table.num_rows:
        return None
    dates: list[dt.date] = []
    memo: dict[str, dt.date] = {}
    for cell in pc.utf8_trim(table.column(0), _SPACE).to_pylist():
        day = memo.get(cell)
        if day is None:
            try:
                day = (dt.date.fromisoformat(cell) if _ISO_DAY.fullmatch(cell)
                       else dt.datetime.strptime(cell, "%d %B %Y").date())
            except ValueError:
                return None  # no date (a row parse_csv skips) or none it reads
            memo[cell] = day
        dates.append(day)
    columns = []
    for cur, col in zip(header[1:], table.columns[1:], strict=True):
        if not cur:  # the trailing comma makes an empty last column
            continue
        cells = pc.utf8_trim(col, _SPACE)
        absent = pc.or_(pc.equal(cells, ""), pc.equal(pc.utf8_upper(cells), "N/A"))
        if not pc.all(pc.or_(absent, pc.match_substring_regex(cells, _PLAIN_RATE))).as_py():
            return None
        values = pc.cast(pc.if_else(absent, pa.scalar(None, pa.string()), cells), pa.float64())
        if pc.any(pc.less_equal(values, 0)).as_py():
            return None
        columns.append((cur, values.to_pylist()))
    out: list[FxRate] = []  # row by row, currency by currency: parse_csv's order
    for i, date in enumerate(dates):
        for cur, values in columns:
            if values[i] is not None:
                out.append(FxRate(date, cur, values[i]))
    return out or None


def parse_csv(body: bytes, url: str = "") -> list[FxRate]:
    """The history CSV (eurofxref-hist.csv) or the daily CSV (eurofxref.csv)."""
    text = body.decode("utf-8-sig")
    fast = _parse_csv_columnar(text)
    if fast is not None:
        return fast
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or not rows[0] or rows[0][0].strip() != "Date":
        raise _fail(url, "CSV does not start with a 'Date' column")
    header = [h.strip().upper() for h in rows[0]]
    out: list[FxRate] = []
    for row in rows[1:]:
        if not row or not row[0].strip():
            continue
        date = _csv_date(row[0], url)
        for cur, cell in zip(header[1:], row[1:], strict=False):
            if not cur:  # the trailing comma makes an empty last column
                continue
            value = _rate(cell, url, f"{date} {cur}")
            if value is not None:
                out.append(FxRate(date, cur, value))
    if not out:
        raise _fail(url, "CSV holds no rates")
    return out


def parse(body: bytes, url: str = "") -> list[FxRate]:
    """Any ECB reference-rate document: zip (of a CSV), XML or CSV, told apart by content."""
    if body[:2] == b"PK":
        try:
            with zipfile.ZipFile(io.BytesIO(body)) as zf:
                names = [n for n in zf.namelist() if n.lower().endswith((".csv", ".xml"))]
                if not names:
                    raise _fail(url, "zip holds no .csv or .xml file")
                return [r for n in names for r in parse(zf.read(n), f"{url}#{n}")]
        except zipfile.BadZipFile as exc:
            raise _fail(url, f"broken zip: {exc}") from None
    head = body.lstrip()[:1]
    if head == b"<":
        return parse_xml(body, url)
    if not body.strip():
        raise _fail(url, "empty body")
    return parse_csv(body, url)


def rates_table(rates: Iterable[FxRate], source: str | Iterable[str] | None = None) -> pa.Table:
    """Rows for gpuprices.warehouse.db.load_fx_rates (date, currency, rate_per_eur, source)."""
    rates = list(rates)
    if source is None or isinstance(source, str):
        sources = [source] * len(rates)
    else:
        sources = list(source)
    return pa.table({
        "date": pa.array([r.date for r in rates], pa.date32()),
        "currency": pa.array([r.currency for r in rates], pa.string()),
        "rate_per_eur": pa.array([r.rate_per_eur for r in rates], pa.float64()),
        "source": pa.array(sources, pa.string()),
    })


# The last answer of archived_rates, under the fingerprint of the archive's ECB files. Parsing the
# full history takes 1-2 s, and one run asks more than once: the gates' USD rates
# (flows/pipeline/usd_rates.py), then the load's fx_rates (load_fx_from_archive), and the
# report's refresh (its problems, then the rates). On local disk the files are known by their
# day and a hash of their bytes (~1 ms for the 640 KB history), not by path and mtime: the same
# captures copied to another folder (a data folder moved, a test's copy of the snapshots) are
# the same rates, and a file rewritten with other bytes is parsed again whatever its mtime. On
# an object store an append keeps an object's name but not its ETag: the ECB objects are known
# by name, size and ETag from one listing (a LIST instead of fetching and parsing the history
# again), and parsed each time, as before, when the store gives no ETag.
_LAST: dict[tuple, tuple[dict, list]] = {}


def archive_fingerprint(archive_root: Path | str, archived: list | None = None) -> tuple | None:
    """What identifies the ECB rates an archive holds, None when nothing does (an object store
    without ETags): on local disk each ECB file's day and content hash, on an object store each
    object's key, size and ETag. `archived`: the archive's listing (list_archives) when the
    caller has one; on local disk it saves the glob."""
    root = objstore.location(archive_root)
    if isinstance(root, objstore.StorePath):
        found = sorted((p.key, info.size, info.e_tag) for p, info in root.walk()
                       if p.key.endswith(f"/{PROVIDER}.warc.gz"))
        if any(tag is None for _k, _s, tag in found):
            return None
        return ("store", root.bucket, root.key, *found)
    if not isinstance(root, Path):
        return None
    files = (sorted(root.glob(f"*/{PROVIDER}.warc.gz")) if archived is None
             else [Path(p) for _d, prov, p in archived if prov == PROVIDER])
    try:
        return ("local", *((f.parent.name, hashlib.sha256(f.read_bytes()).hexdigest())
                           for f in files))
    except OSError:  # a file gone since the listing: read (and reported) as the parse finds it
        return None


def archived_rates(archive_root: Path | str) -> tuple[dict[tuple[dt.date, str], tuple[float, str]],
                                                      list[ParseError]]:
    """Every rate in the ECB archives, keyed (date, currency) -> (rate, source). A later capture
    wins over an earlier one for the same day and currency (the ECB occasionally corrects a
    rate). A capture that does not parse is reported, never fatal."""
    return _archived_rates(archive_root, archive_fingerprint(archive_root))


def _archived_rates(archive_root: Path | str, key: tuple | None) -> tuple[dict, list[ParseError]]:
    """archived_rates for an archive whose ECB files have the fingerprint `key`."""
    if key is None or key not in _LAST:
        answer = _read_archived_rates(archive_root)
        if key is None or answer[1]:  # a damaged file's problems name its path: not shared
            return answer
        _LAST.clear()  # one archive per process in practice: keep only the newest
        _LAST[key] = answer
    rates, errors = _LAST[key]
    return dict(rates), list(errors)  # the caller's own copies


def _read_archived_rates(archive_root: Path | str) -> tuple[dict, list[ParseError]]:
    found: list[tuple[dt.datetime, Capture]] = []
    errors: list[ParseError] = []
    for _day, provider, path in list_archives(archive_root):
        if provider != PROVIDER:
            continue
        read = read_archive(path)  # a damaged file or record costs its own rates, no others
        errors += [_fail(str(path), problem) for problem in read.problems]
        errors += [_fail(c.url, f"damaged capture in the archive: {c.damaged}")
                   for c in read.damaged]
        for cap in latest_per_request([c for c in read.captures if not c.damaged]):
            if cap.status == 200:
                found.append((cap.captured_at, cap))
    found.sort(key=lambda item: item[0])
    rates: dict[tuple[dt.date, str], tuple[float, str]] = {}
    for ts, cap in found:
        try:
            parsed = parse(cap.body, cap.url)
        except ParseError as exc:
            errors.append(exc)
            continue
        source = f"ECB {cap.url} captured {ts.astimezone(dt.UTC):%Y-%m-%dT%H:%MZ}"
        for r in parsed:
            rates[(r.date, r.currency)] = (r.rate_per_eur, source)
    return rates, errors


def load_fx_from_archive(archive_root: Path | str, con) -> int:
    """Parse every archived ECB capture and insert-or-replace its rates in fx_rates (one
    transaction, through gpuprices.warehouse.db.load_fx_rates). Returns the number of (date,
    currency) rates loaded. Raises the first ParseError only when no capture could be read at
    all."""
    key = archive_fingerprint(archive_root)
    if key is not None and key in _LAST_TABLE:
        return db.load_fx_rates(con, _LAST_TABLE[key])
    rates, errors = _archived_rates(archive_root, key)  # the files listed once for both
    if not rates:
        if errors:
            raise errors[0]
        return 0
    keys = sorted(rates)
    # rates_table's columns built straight from the book: one FxRate per rate of the full
    # history (~300,000) took a second or two of a load, for the same table.
    values = [rates[k] for k in keys]
    table = pa.table({
        "date": pa.array([d for d, _c in keys], pa.date32()),
        "currency": pa.array([c for _d, c in keys], pa.string()),
        "rate_per_eur": pa.array([v[0] for v in values], pa.float64()),
        "source": pa.array([v[1] for v in values], pa.string()),
    })
    if key is not None:
        _LAST_TABLE.clear()
        _LAST_TABLE[key] = table  # Arrow tables are immutable: shared as they are
    return db.load_fx_rates(con, table)


# load_fx_from_archive's table of the archive _LAST holds the book of (same key): building its
# ~300,000 rows from the book cost ~0.1 s of each load and report refresh.
_LAST_TABLE: dict[tuple, pa.Table] = {}


class FxRateMissing(LookupError):
    """A currency the ECB rates do not carry on or before a day: a price in it cannot be
    converted, and is never taken 1:1."""


RateBook = dict[tuple[dt.date, str], tuple[float, str]]


def rate_in_force(rates: RateBook, currency: str, day: dt.date) -> tuple[float, dt.date]:
    """Units of `currency` per euro in force on `day` (the latest ECB rate on or before it, as
    the warehouse's fx_rate_per_eur reads it) and the date of that rate. `rates` is
    archived_rates()'s book. Raises FxRateMissing naming the currency and the day."""
    currency = currency.upper()
    if currency == "EUR":
        return 1.0, day
    dates = [d for (d, c) in rates if c == currency and d <= day]
    if not dates:
        known = sorted({c for (_d, c) in rates})
        raise FxRateMissing(
            f"the ECB reference rates hold no {currency} rate on or before {day} "
            f"({len(known)} currencies archived: {', '.join(known[:40])}): a {currency} price "
            "cannot be converted")
    on = max(dates)
    return rates[(on, currency)][0], on


def convert(amount: float, from_cur: str, to_cur: str, day: dt.date, rates: RateBook) -> float:
    """`amount` in `from_cur` as `to_cur` at the ECB rates in force on `day`: from_cur -> EUR ->
    to_cur, the rule of the warehouse's fx_factor. Raises FxRateMissing, never converts 1:1
    between two different currencies."""
    if from_cur.upper() == to_cur.upper():
        return amount
    from_rate, _ = rate_in_force(rates, from_cur, day)
    to_rate, _ = rate_in_force(rates, to_cur, day)
    return amount * to_rate / from_rate


Fetcher = Callable[[str], tuple[int, list[tuple[str, str]], bytes]]


def _urllib_fetch(url: str) -> tuple[int, list[tuple[str, str]], bytes]:
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 (fixed https URLs)
        return resp.status, list(resp.headers.items()), resp.read()


def fetch_ecb(archive_root: Path | str, urls: Iterable[str] | None = None,
              fetch: Fetcher | None = None,
              now: Callable[[], dt.datetime] | None = None) -> list[Capture]:
    """Fetch ECB files (default: the daily and 90-day XML) and archive each response before
    anything parses it. Returns the captures archived. `fetch` and `now` are for tests."""
    fetch = fetch or _urllib_fetch
    clock = now or (lambda: dt.datetime.now(dt.UTC))
    urls = list(urls) if urls is not None else [
        r.url for r in ecb_source.start_requests({})]
    caps = []
    for url in urls:
        status, headers, body = fetch(url)
        caps.append(Capture(provider=PROVIDER, url=url, body=body, captured_at=clock(),
                            status=status, headers=headers))
    append_captures(archive_root, caps)
    return caps
