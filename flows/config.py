"""Where data goes: one data folder for the lake, the DuckDB file and Prefect's home; the raw
archive and the lake may live on object storage instead (`s3://bucket/prefix`, docs/deploy.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gpuprices.warehouse import objstore

# Where every load publishes the team's warehouse and `gpuprices pull` finds it
# (flows/ops/publishing.py); here so that `pull --help` names it without importing duckdb.
PUBLISH_ENV = "GPUPRICES_PUBLISH"

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    archive_root: Path | objstore.StorePath
    lake: Path | objstore.StorePath | None = None  # None: <data_dir>/lake

    @property
    def lake_root(self) -> Path | objstore.StorePath:
        return self.data_dir / "lake" if self.lake is None else self.lake

    @property
    def db_path(self) -> Path:
        return self.data_dir / "warehouse.duckdb"

    @property
    def prefect_home(self) -> Path:
        return self.data_dir / "prefect"

    @property
    def runs_dir(self) -> Path:
        return self.data_dir / "runs"

    @property
    def reports_dir(self) -> Path:
        return self.data_dir / "reports"

    def ensure(self) -> Settings:
        # Owner-only write: the archive and the warehouse are the record of what was seen.
        for d in (self.data_dir, self.lake_root, self.runs_dir):
            d.mkdir(parents=True, exist_ok=True, mode=0o755)
        return self


def _where(value: str | Path | objstore.StorePath) -> Path | objstore.StorePath:
    """A local folder (made absolute) or an `s3://bucket/prefix` location, as written."""
    place = objstore.location(value if isinstance(value, objstore.StorePath) else str(value))
    return place.resolve() if isinstance(place, Path) else place


def owner_only_writes() -> None:
    """Files and folders we create are writable by their owner only (0o644 / 0o755), whatever
    the caller's umask: the archive and the warehouse are the record of what was seen. Child
    processes (the crawler) inherit it."""
    os.umask(os.umask(0o022) | 0o022)


class BadDataDir(ValueError):
    """A data folder that cannot be one: an empty name, or a path that is a file."""


def _data_folder(data_dir: str | Path | None) -> Path:
    if data_dir is not None and not str(data_dir).strip():
        # Path("") is ".": an empty --data-dir would silently use the current folder.
        raise BadDataDir("--data-dir is empty: name a folder, or leave the option out for "
                         "$GPUPRICES_HOME or ./data")
    data = Path(data_dir or os.environ.get("GPUPRICES_HOME") or "data").resolve()
    if data.exists() and not data.is_dir():
        raise BadDataDir(f"data folder {data} is a file, not a folder: give --data-dir (or "
                         f"$GPUPRICES_HOME) a folder")
    return data


def settings_from(data_dir: str | Path | None = None,
                  archive_root: str | Path | None = None) -> Settings:
    """Data folder from the argument, else GPUPRICES_HOME, else ./data (BadDataDir for an empty
    name or a file); the raw archive from the argument, else GPUPRICES_ARCHIVE, else the repo's
    snapshots/ (which ships real captures); the lake from GPUPRICES_LAKE, else <data
    folder>/lake. The archive and the lake may be `s3://bucket/prefix` locations."""
    data = _data_folder(data_dir)
    archive = _where(archive_root or os.environ.get("GPUPRICES_ARCHIVE")
                     or REPO_ROOT / "snapshots")
    lake = os.environ.get(LAKE_ENV, "").strip()
    return Settings(data_dir=data, archive_root=archive, lake=_where(lake) if lake else None)


LAKE_ENV = "GPUPRICES_LAKE"


CURRENCY_ENV = "GPUPRICES_CURRENCY"
# One default for every command that prices (rank, plan, compare, index) and the weekly report:
# US dollars, the currency nearly every provider publishes and the sizing engine's cost constants
# are in, so that a default run converts nothing and needs no FX rate.
DEFAULT_CURRENCY = "USD"


def default_currency(option: str | None = None) -> str:
    """The currency of a command: its --currency, else $GPUPRICES_CURRENCY, else USD; upper
    case. ValueError for a value that is no ISO 4217 code (three letters), naming where it came
    from; whether rates exist for it is the command's to check."""
    raw, where = ((option, "--currency") if option is not None
                  else (os.environ.get(CURRENCY_ENV, "").strip(), f"${CURRENCY_ENV}"))
    if not raw:
        return DEFAULT_CURRENCY
    code = raw.strip().upper()
    if len(code) != 3 or not code.isalpha() or not code.isascii():
        raise ValueError(f"{where}={raw!r} is not a currency code (three letters: USD, EUR)")
    return code


MAX_AGE_ENV = "GPUPRICES_MAX_AGE_DAYS"


def max_age_days(option: int | None = None) -> int | None:
    """The age limit of a run's "now" (offers_as_of: a provider's latest snapshot older than
    this many days is stale): the command's --max-age-days, else $GPUPRICES_MAX_AGE_DAYS, else
    None, which leaves the warehouse's own default (default_max_age_days(), 14 days)."""
    if option is not None:
        return option
    raw = os.environ.get(MAX_AGE_ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{MAX_AGE_ENV}={raw!r} is not a whole number of days") from None
    if value < 0:
        raise ValueError(f"{MAX_AGE_ENV}={raw!r}: the age limit cannot be negative")
    return value


def prefect_env(settings: Settings) -> dict[str, str]:
    """Environment for Prefect: its home inside the data folder and no telemetry."""
    return {
        "PREFECT_HOME": str(settings.prefect_home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        # The temporary API server takes 15-25 s to start on 2 busy cores; the default wait
        # (20 s) fails runs on a loaded machine.
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "PREFECT_LOGGING_LEVEL": os.environ.get("PREFECT_LOGGING_LEVEL", "WARNING"),
    }
