"""The nightly pipeline as plain functions: crawl → parse → check → store → load.

Prefect tasks (flows/nightly.py) and the command line both call these; tests call them directly
so that most of the suite never pays for Prefect's start-up.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

# owner_only_writes lives in config so that the command line sets it without importing this
# module (pyarrow); `steps.owner_only_writes` stays its name for the pipeline.
from gpuprices.flows.config import Settings, owner_only_writes
from gpuprices.flows.pipeline import gates, unknown_layout, usd_rates
from gpuprices.flows.pipeline.parsing import Parsed, parse_archive
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.flows.redaction import redact
from gpuprices.spiders import fx
from gpuprices.spiders.archive import FUTURE_SKEW, list_archives
from gpuprices.warehouse import identity, lake, objstore, price_bands
from gpuprices.warehouse.contract import PROVIDERS, Offer, offers_to_table


def check(offers: list[Offer], ref: gates.Reference | None = None
          ) -> tuple[list[Offer], list[tuple[Offer, str]]]:
    """Split offers into loadable ones and quarantined ones with their reason."""
    out = gates.run_gates(offers, ref)
    return out.good, out.bad


def quarantine_table(rows: list[tuple[Offer, str]]) -> pa.Table:
    """Quarantined offers with their reason. Built from plain rows (not OFFER_SCHEMA) because a
    row held back by the schema gate may break it (a missing GPU model, a bad price)."""
    data = []
    for o, r in rows:
        row = o.as_row() | {"reason": r}
        try:
            pa.Table.from_pylist([row], schema=lake.QUARANTINE_SCHEMA)
        except (pa.ArrowException, TypeError, ValueError):
            # A value of the wrong type cannot sit in its column: keep it in the reason instead.
            bad = {k: v for k, v in row.items() if k not in ("reason", "extra")}
            row = {k: (v if isinstance(v, str) or v is None else None) for k, v in row.items()}
            row["reason"] = f"{r} (raw values: {bad!r})"
        data.append(row)
    return lake.conform_quarantine(pa.Table.from_pylist(data, schema=lake.QUARANTINE_SCHEMA))


RELEASES_FILE = "released.jsonl"


def releases_path(settings: Settings) -> Path:
    return settings.lake_root / lake.QUARANTINE_AREA / RELEASES_FILE


def _released(settings: Settings, provider: str, day: dt.date,
              quarantine: set | None = None) -> set[tuple]:
    """(identity, price) pairs a reviewer released for this provider-day. Identities are
    recorded by name (identity.to_record); the first releases recorded them by position.
    `quarantine`: the quarantine area's objects when the caller listed them (reparse)."""
    path = releases_path(settings)
    if quarantine is not None and path not in quarantine:
        return set()  # no releases file: nothing to ask the store for
    try:  # read, not checked first: on object storage one GET (a check was one or two more)
        text = path.read_text()
    except FileNotFoundError:
        return set()
    out = set()
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash: the release is redone by rerunning it
        if rec.get("provider") == provider and rec.get("date") == day.isoformat():
            stored = rec["identity"]
            ident = (identity.from_record(stored) if isinstance(stored, dict)
                     else identity.from_positional_v1(stored, provider))
            out.add((ident, round(float(rec["price_per_hour"]), 6)))
    return out


@dataclass
class Listings:
    """The archive's and the lake's listings a replay takes once and keeps up to date with its
    own writes. Each provider's replay listed both again (and the lake's quarantine area on
    object storage): a replay of 31 providers through an object store spent a fifth of its
    time listing, the same objects each time. One Listings handed to the replays of several
    providers in one process lists each once. What other processes write meanwhile is missed,
    as it could be by a listing taken a moment earlier: concurrent providers never had an
    order. None: not listed yet (or a listing failed: store_day lists again and reports it).
    `archived` is list_archives' whole listing, ECB files included (the gates' USD rates are
    known by them), not a provider's days."""

    archived: list[tuple[dt.date, str, Path]] | None = None
    partitions: list[tuple[dt.date, str, Path]] | None = None
    quarantine: set | None = None
    lake_listed: bool = False
    # The reference rows of the lake files this replay read (reference), by path.
    rows: dict = field(default_factory=dict)

    def wrote(self, day: dt.date, provider: str, path: Path) -> None:
        """A partition this replay (re)wrote: in the listing, and read again when next
        compared with."""
        self.rows.pop(path, None)
        if self.partitions is not None:
            self.partitions.append((day, provider, path))
            self.partitions.sort(key=lambda item: (item[0], item[1]))


_REF_COLUMNS = [*identity.COLUMNS, "extra", "price_per_hour", "price_per_gpu_hour"]


def reference(settings: Settings, provider: str, day: dt.date,
              listings: Listings | None = None) -> gates.Reference:
    """What the gates compare a provider-day against: the price range the warehouse's history
    knows per GPU model (warehouse/price_bands.csv) and, from the lake's earlier good
    partitions, every provider's last snapshot inside the band window and this provider's last
    snapshot whatever its age (the move gate holds a x10 nine days or nine months later), and
    the archived ECB rates that turn a price in another currency into USD for the gates.
    `listings`: the lake's and the archive's listings and the partitions' reference rows when
    the caller keeps them (reparse), else listed and read here."""
    seen = listings if listings is not None else Listings()
    ref = gates.Reference(released=_released(settings, provider, day, seen.quarantine),
                          known=price_bands.known_ranges(),
                          per_usd=usd_rates.UsdRates(settings.archive_root, seen.archived))
    latest: dict[str, tuple[dt.date, Path]] = {}
    partitions = seen.partitions
    if partitions is None:
        partitions = lake.list_partitions(settings.lake_root)
    for d, p, path in partitions:
        if d < day and ((day - d).days <= gates.BAND_WINDOW_DAYS or p == provider):
            latest[p] = (d, path)  # list_partitions is sorted by date: the last one wins
    for p, (d, path) in latest.items():
        counted = p == provider and (day - d).days <= gates.ROW_COUNT_WINDOW_DAYS
        try:
            rows, taken = _reference_rows(path, counted, seen.rows)
        except Exception:  # an unreadable old partition must not stop today's run
            continue
        if (day - d).days <= gates.BAND_WINDOW_DAYS:
            for row in rows:
                if row["gpu_model"] and row["price_per_gpu_hour"]:
                    key = (row["gpu_model"], row["currency"], row["pricing_model"])
                    ref.band.setdefault(key, []).append(row["price_per_gpu_hour"])
        if p == provider:
            ref.prev_date = d
            if counted:
                ref.prev_rows = (_last_snapshot_rows(path, len(rows)) if taken is None
                                 else _snapshot_rows(taken, len(rows)))
            for row in rows:
                ident = identity.of_row(row)
                price = row["price_per_hour"]
                lo, hi = ref.prev_prices.get(ident, (price, price))
                ref.prev_prices[ident] = (min(lo, price), max(hi, price))
    return ref


def _reference_rows(path: Path, with_times: bool, kept: dict | None
                    ) -> tuple[list[dict], pa.ChunkedArray | None]:
    """A partition's _REF_COLUMNS as rows, and its snapshot times when `with_times` (see
    _reference_columns); from `kept` (Listings.rows) when this replay read or wrote the file
    already. A replay's every day compares with every provider's latest partition: the same
    few files, read again and turned into rows again for each of ~550 days."""
    key = path if isinstance(path, Path | objstore.StorePath) else None  # not a CompactedDay
    if kept is not None and key in kept:
        rows, taken = kept[key]
        if taken is not None or not with_times:
            return rows, taken
    table, taken = _reference_columns(path, with_times)
    rows = table.to_pylist()
    if kept is not None and key is not None:
        kept[key] = (rows, taken)
    return rows, taken


def _reference_columns(path: Path, with_times: bool) -> tuple[pa.Table, pa.ChunkedArray | None]:
    """A partition's _REF_COLUMNS; `with_times`: its snapshot times too, from the same read
    (one open, on object storage one GET, not two per provider-day), None when that read
    fails (a file written before snapshot_at: the caller reads them as it always did)."""
    if with_times:
        try:
            table = lake.read_columns(path, [*_REF_COLUMNS, "snapshot_at"])
            return table.select(_REF_COLUMNS), table.column("snapshot_at")
        except Exception:  # noqa: S110 (read without the times below)
            pass
    return lake.read_columns(path, _REF_COLUMNS), None


def _last_snapshot_rows(path: Path, rows: int) -> int:
    """How many rows the latest snapshot of a lake file holds (an hourly provider's day holds
    several; a file from before snapshot times, one)."""
    try:
        taken = lake.read_columns(path, ["snapshot_at"]).column("snapshot_at")
    except Exception:  # written before snapshot_at: the file is the day's one snapshot
        return rows
    return _snapshot_rows(taken, rows)


def _snapshot_rows(taken: pa.ChunkedArray, rows: int) -> int:
    """How many of a file's snapshot times are its latest (all of its rows when one is
    missing)."""
    if taken.null_count:
        return rows
    return pc.sum(pc.equal(taken, pc.max(taken))).as_py() or rows


def _gate_snapshots(offers: list[Offer], ref: gates.Reference) -> gates.GateResult:
    """The gates run on each snapshot of the day alone (an hourly provider's day holds several:
    one offer at two prices in two snapshots is a move within the day, not a duplicate), each
    against the same reference; the results joined in snapshot order."""
    groups: dict[object, list[Offer]] = {}
    for o in offers:
        groups.setdefault(o.snapshot_at, []).append(o)
    if len(groups) <= 1:
        return gates.run_gates(offers, ref)
    out = gates.GateResult()
    moves: dict[object, gates.Move] = {}
    for key in sorted(groups, key=lambda t: (t is not None, t)):
        one = gates.run_gates(groups[key], ref)
        out.good += one.good
        out.bad += one.bad
        # Each snapshot is judged against the day before: an offer that moved at 09:00 moves
        # again in every later snapshot. The run summary and alerts hear of it once, at its
        # latest price; a held-back move is kept over a loaded one.
        for m in one.moves:
            if m.quarantined or not getattr(moves.get(m.ident), "quarantined", False):
                moves[m.ident] = m
        out.unmapped = sorted(set(out.unmapped) | set(one.unmapped))
        out.no_band = sorted(set(out.no_band) | set(one.no_band))
        out.degraded = one.degraded  # the latest snapshot's row count speaks for the day
    out.moves = list(moves.values())
    return out


def store_day(settings: Settings, provider: str, day: dt.date, parsed: Parsed,
              listings: Listings | None = None) -> DayResult:
    """Gate parsed offers and write the lake partition (and quarantine) for one day. Candidate
    rows of an unknown layout go to quarantine unless a reviewer released them (then they pass
    the gates like any released row); they make the day degraded, never loaded on their own."""
    owner_only_writes()
    res = DayResult(provider=provider, snapshot_date=day, captures=parsed.captures,
                    skipped=dict(parsed.skipped))
    res.errors = [str(e) for e in parsed.errors]
    try:
        ref = reference(settings, provider, day, listings)
    except OSError as exc:  # a lake on object storage that cannot be reached or read
        res.status = "failed"
        res.errors.append(f"{provider}: could not read the lake for {day}: {exc}")
        return res
    released, held = unknown_layout.split_released(ref, parsed.held)
    out = _gate_snapshots(parsed.offers + released, ref)
    good, bad = out.good, out.bad + held
    res.quarantined = len(bad)
    res.unmapped = out.unmapped
    res.moves = out.moves
    res.no_band = out.no_band
    for _, reason in bad:
        kind = unknown_layout.reason_kind(reason)
        res.quarantine_reasons[kind] = res.quarantine_reasons.get(kind, 0) + 1
    try:
        # Quarantine first: if the offers write then fails, the held-back rows are still kept.
        qpath = lake.partition_path(settings.lake_root, day, provider, lake.QUARANTINE_AREA)
        quarantine = listings.quarantine if listings is not None else None
        # A rerun that quarantines nothing clears the old quarantine.
        if bad or (qpath in quarantine if quarantine is not None
                   else objstore.file_exists(qpath)):
            lake.write_quarantine(settings.lake_root, day, provider, quarantine_table(bad))
            if quarantine is not None:
                quarantine.add(qpath)
        if good:
            path = lake.write_partition(settings.lake_root, day, provider, offers_to_table(good))
            if listings is not None:
                listings.wrote(day, provider, path)
    except OSError as exc:
        # Atomic writes: the lake holds the previous partition or none, never half of one.
        res.status = "failed"
        res.errors.append(f"{provider}: could not write the lake partition for {day}: "
                          f"{exc.strerror or exc}")
        return res
    res.rows = len(good)
    notes = [out.degraded, unknown_layout.note(held, parsed.held_from)]
    res.degraded = "; ".join(n for n in notes if n) or None
    if not good and not held:
        res.status = "failed"
        if not res.errors:
            res.errors.append(f"{provider}: no loadable offers for {day}"
                              + (f" ({len(bad)} rows quarantined)" if bad else ""))
        return res
    if res.degraded:
        res.errors.append(f"{provider}: degraded: {res.degraded}")
    res.status = "degraded" if res.errors else "ok"
    return res


def archives(settings: Settings, providers: Iterable[str] | None = None,
             dates: Iterable[dt.date] | None = None,
             listed: list[tuple[dt.date, str, Path]] | None = None
             ) -> list[tuple[dt.date, str, Path]]:
    """The archive files of `providers` (default: all) on `dates` (default: all), from
    `listed` when the caller already listed the archive."""
    want_p = set(providers) if providers else set(PROVIDERS)
    want_d = set(dates) if dates else None
    if listed is None:
        listed = list_archives(settings.archive_root)
    return [
        (d, p, path) for d, p, path in listed
        if p in want_p and (want_d is None or d in want_d)
    ]


def _store_file(settings: Settings, provider: str, day: dt.date, path: Path,
                listings: Listings | None = None) -> DayResult:
    """One archive file parsed, gated and stored; whatever goes wrong with it (a file that
    cannot be read, a parser or store bug) fails this provider-day alone, named with its file,
    as `nightly` isolates a provider: the other files and providers of the run go on."""
    try:
        return store_day(settings, provider, day, parse_archive(path, provider), listings)
    except Exception as exc:
        return DayResult(provider=provider, snapshot_date=day, status="failed",
                         errors=[redact(f"{provider}: {path}: {type(exc).__name__}: {exc}")])


def _quarantine_objects(settings: Settings) -> set | None:
    """The objects of the lake's quarantine area on object storage (its partitions and the
    releases file), from one listing: what a reparse checks them against, kept up to date with
    its own writes, instead of asking the store each day. None on local disk, where a check is
    a system call."""
    if not objstore.is_remote(settings.lake_root):
        return None
    area = objstore.location(settings.lake_root) / lake.QUARANTINE_AREA
    return {path for path, _ in area.walk()}


def reparse(settings: Settings, provider: str, dates: Iterable[dt.date] | None = None,
            on_day: Callable[[DayResult], None] | None = None,
            listings: Listings | None = None) -> list[DayResult]:
    """Rebuild a provider's lake partitions from the raw archive with today's parsers; `on_day`
    hears of each provider-day as it is written (the command line's progress); `listings`: the
    listings shared with the other providers of the same replay (one of its own by default)."""
    results = []
    latest_day = (dt.datetime.now(dt.UTC) + FUTURE_SKEW).date()
    # The lake is listed once for all the days, then kept up to date with this replay's own
    # writes: one listing per day made a replay of 500 days on object storage list the growing
    # lake 500 times (half its time). On object storage the quarantine area is listed with it,
    # the same way: whether a day has a quarantine to clear and whether a releases file
    # exists, without asking each day.
    seen = listings if listings is not None else Listings()
    try:
        # The archive too is listed once: its days of this provider, and the ECB files the
        # gates' currency rates are read from (a reparse writes nothing to the archive).
        if seen.archived is None:
            seen.archived = list_archives(settings.archive_root)
        days = archives(settings, [provider], dates, seen.archived)
    except Exception as exc:  # a store that cannot be listed (StoreError, wrong credentials)
        res = DayResult(provider=provider, snapshot_date=None, status="failed",
                        errors=[redact(f"{provider}: could not list the archive at "
                                       f"{settings.archive_root}: {exc}")])
        if on_day is not None:
            on_day(res)
        return [res]
    for day, _, path in days:
        if not seen.lake_listed:
            seen.lake_listed = True
            try:
                seen.partitions = lake.list_partitions(settings.lake_root)
                seen.quarantine = _quarantine_objects(settings)
            except OSError:  # store_day lists again and reports the failure per day
                seen.partitions = seen.quarantine = None
        if day > latest_day:  # judged on no day: it must not become the run's "today"
            results.append(DayResult(provider=provider, snapshot_date=None, status="failed",
                                     errors=[f"{provider}: {path}: archive dated {day}, later "
                                             f"than today ({latest_day}): refused"]))
        else:
            results.append(_store_file(settings, provider, day, path, seen))
        if on_day is not None:
            on_day(results[-1])
    return results


def replay(settings: Settings, provider: str, spec: str,
           on_day: Callable[[DayResult], None] | None = None,
           listings: Listings | None = None) -> list[DayResult]:
    """A provider's archived days (`spec`: a date YYYY-MM-DD or 'all') parsed, checked and
    written to the lake; a single failed day when the archive has none."""
    dates = parse_dates(spec, settings, [provider])
    results = reparse(settings, provider, dates, on_day, listings)
    if not results:
        results = [DayResult(provider=provider, snapshot_date=None, status="failed",
                             errors=[f"{provider}: no archived snapshot for {spec}"])]
        if on_day is not None:
            on_day(results[0])
    for r in results:  # a replayed day is judged on that day, not on the machine's clock
        r.run_date = dates[0] if dates else None
    return results


def fetch_fx_live(settings: Settings) -> str | None:
    """Fetch today's ECB reference rates into the archive (a live run's currency step). Returns
    a problem to report, or None."""
    try:
        caps = fx.fetch_ecb(settings.archive_root)
    except Exception as exc:
        return redact(f"ecb: rates not fetched: {exc}")
    bad = [c for c in caps if c.status != 200]
    return f"ecb: {bad[0].url}: HTTP {bad[0].status}" if bad else None


def load_fx(settings: Settings, con) -> int:
    """Load the archived ECB rates into fx_rates, so every price converts at the rate of its
    own snapshot date. Rates that cannot be read cost the EUR columns, never the run.

    Parsing the full ECB history takes ~2 s, so it is skipped when no ECB archive file changed
    since the last load into this warehouse (a fingerprint of the files beside the DuckDB file)."""
    files = sorted(settings.archive_root.glob("*/ecb.warc.gz"))
    if not files:
        return 0
    marker = settings.data_dir / "fx_archives.json"
    fingerprint = [[str(f), f.stat().st_size, f.stat().st_mtime_ns] for f in files]
    try:
        loaded = con.execute("SELECT count(*) FROM fx_rates").fetchall()[0][0]
        if loaded and marker.exists() and json.loads(marker.read_text()) == fingerprint:
            return 0
        n = fx.load_fx_from_archive(settings.archive_root, con)
    except Exception as exc:
        print(redact(f"warning: ECB rates not loaded: {exc}"), file=sys.stderr)
        return 0
    marker.write_text(json.dumps(fingerprint))
    return n


def parse_dates(spec: str, settings: Settings, providers: Iterable[str]) -> list[dt.date] | None:
    """`all` → every archived date (None); otherwise one ISO date."""
    if spec == "all":
        return None
    try:
        return [dt.date.fromisoformat(spec)]
    except ValueError as exc:
        raise ValueError(f"--replay takes an ISO date (YYYY-MM-DD) or 'all', not {spec!r}") \
            from exc


def new_run_id() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
