"""`gpuprices index verify`: the price index rebuilt from the raw archive alone and compared with
the stored one, digit for digit (docs/index.md section 9).

The rebuild replays every archived provider-day into a temporary data folder through the same
steps as `gpuprices crawl --replay all` (parse -> check -> lake -> warehouse, ECB rates from the
archive), then computes the index there. It does not go through flows/loading.py: a rebuild is no
run of the pipeline, so it writes no run summary, posts no alert and publishes nothing. The one
input taken from the data folder besides the archive is the reviewers' quarantine releases
(lake/quarantine/released.jsonl): a recorded human decision on which rows stand, without which a
released row would be missing from the rebuild.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import load_steps, provider_classes, steps
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.warehouse import db, index_store
from gpuprices.warehouse.contract import PROVIDERS

_FIELDS = ("value_usd", "band_low_usd", "band_high_usd", "panel", "members", "reason",
           "method_version")


@dataclass
class Verdict:
    """What a comparison found: rows equal to the published one, rows equal only to a recorded
    revision, and the differences (key, field, stored, rebuilt) that nothing explains."""

    equal: int = 0
    revised: int = 0
    missing: list[tuple] = field(default_factory=list)  # published, not in the rebuild
    extra: list[tuple] = field(default_factory=list)  # rebuilt, never published
    differences: list[tuple[tuple, str, object, object]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.differences)


def rebuilt_index(source: Settings, workdir: Path,
                  on_day: Callable[[DayResult], None] | None = None) -> dict[tuple, tuple]:
    """The index computed from `source`'s archive alone in `workdir` (a fresh data folder)."""
    s = Settings(workdir / "data", source.archive_root).ensure()
    releases = steps.releases_path(source)
    if isinstance(releases, Path) and releases.exists():
        target = steps.releases_path(s)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(releases, target)
    results: list[DayResult] = []
    listings = steps.Listings()
    for p in PROVIDERS:
        results.extend(steps.replay(s, p, "all", on_day=on_day, listings=listings))
    con = load_steps.open_warehouse(s)
    try:
        provider_classes.store(con)
        load_steps.load_days(s, con, [(r.snapshot_date, r.provider) for r in results
                                      if r.status != "failed" and r.snapshot_date and r.rows])
        steps.load_fx(s, con)
        index_store.update(con, "verify")
        return index_store.published(con)
    finally:
        con.close()


def stored_index(settings: Settings) -> tuple[dict[tuple, tuple], dict[tuple, tuple]]:
    """The published rows of the stored warehouse, and each revised row's latest revision."""
    con = db.connect(settings.db_path, read_only=True)
    try:
        published = index_store.published(con)
        revisions = index_store.latest_revisions(con)
    finally:
        con.close()
    return published, revisions


def compare(stored: dict[tuple, tuple], revisions: dict[tuple, tuple],
            rebuilt: dict[tuple, tuple]) -> Verdict:
    """Every stored row against its rebuild, field by field (DECIMAL values: exact digits)."""
    v = Verdict()
    for key in sorted(stored.keys() | rebuilt.keys()):
        old, new = stored.get(key), rebuilt.get(key)
        if old is None:
            v.extra.append(key)
        elif new is None:
            v.missing.append(key)
        elif old == new:
            v.equal += 1
        elif revisions.get(key) == new:
            v.revised += 1
        else:
            v.differences += [(key, f, a, b) for f, a, b in zip(_FIELDS, old, new, strict=True)
                              if a != b]
    return v


def verify(settings: Settings, on_day: Callable[[DayResult], None] | None = None) -> Verdict:
    """Rebuild the index from the archive in a temporary folder (removed afterwards) and
    compare it with the stored one."""
    stored, revisions = stored_index(settings)
    with tempfile.TemporaryDirectory(prefix="gpuprices-index-verify-") as tmp:
        rebuilt = rebuilt_index(settings, Path(tmp), on_day)
    return compare(stored, revisions, rebuilt)
