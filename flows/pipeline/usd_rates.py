"""How many units of a currency one US dollar bought on a day, from the archived ECB reference
rates (spiders/fx.py): what the gates convert a price in another currency with, so that the
band and the move gate judge it in USD (flows/pipeline/gates.py).

The rate of a day is the latest ECB rate on or before it, as the warehouse's fx_rate_periods
view takes it (a Saturday price uses Friday's rate). A currency the ECB does not quote, or
quotes only from a later day, has none: the gates hold such a row. The ~2 s parse of the full
ECB history is done once per process and archive, and again only when its ECB files change.
"""

from __future__ import annotations

import bisect
import datetime as dt

from gpuprices.spiders import fx
from gpuprices.spiders.archive import list_archives
from gpuprices.warehouse import objstore

_LOADED: dict[tuple, dict[str, tuple[list[dt.date], list[float]]]] = {}


def _fingerprint(root, archived: list | None = None) -> tuple | None:
    """Which ECB files the archive holds: on local disk their days and contents
    (fx.archive_fingerprint: a copy of the same captures elsewhere is the same rates), on
    object storage their keys from `archived`, the archive's listing when the caller has one
    (a replay lists it once), else from a listing of its own."""
    root = objstore.location(root)
    if isinstance(root, objstore.StorePath):
        if archived is None:
            archived = list_archives(root)
        return (str(root), *(str(p) for _, prov, p in archived if prov == fx.PROVIDER))
    return fx.archive_fingerprint(root, archived)


def _series(root, archived: list | None = None) -> dict[str, tuple[list[dt.date], list[float]]]:
    key = _fingerprint(root, archived)
    if key is None or key not in _LOADED:
        rates, _errors = fx.archived_rates(root)  # a capture that does not parse costs its rates
        by_cur: dict[str, list[tuple[dt.date, float]]] = {}
        for (day, cur), (rate, _source) in rates.items():
            by_cur.setdefault(cur, []).append((day, rate))
        series = {c: ([d for d, _ in sorted(v)], [r for _, r in sorted(v)])
                  for c, v in by_cur.items()}
        if key is None:
            return series
        _LOADED.clear()  # one archive per process in practice: keep only the newest
        _LOADED[key] = series
    return _LOADED[key]


class UsdRates:
    """`rates(currency, day)`: units of `currency` per USD on `day`, or None. Loaded from the
    archive on the first call that needs the ECB (USD itself never does). `archived`: the
    archive's listing (list_archives) when the caller has one."""

    def __init__(self, archive_root, archived: list | None = None) -> None:
        self.archive_root = archive_root
        self.archived = archived
        self._series: dict[str, tuple[list[dt.date], list[float]]] | None = None

    def _per_eur(self, currency: str, day: dt.date) -> float | None:
        if currency == "EUR":
            return 1.0
        if self._series is None:
            try:
                self._series = _series(self.archive_root, self.archived)
            except Exception:  # an archive that cannot be read: no rate, the rows are held
                self._series = {}
        days, rates = self._series.get(currency, ([], []))
        i = bisect.bisect_right(days, day)
        return rates[i - 1] if i else None

    def __call__(self, currency: str, day: dt.date) -> float | None:
        if currency == "USD":
            return 1.0
        usd, cur = self._per_eur("USD", day), self._per_eur(currency, day)
        if not usd or not cur:
            return None
        return cur / usd
