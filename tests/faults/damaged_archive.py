"""Damaged archive files made from copies of the real bundled ones (reliability issue 30, items
1, 7 and 8): a file cut to half, a record whose body no longer matches its recorded digest,
random bytes after the last record, a body in an encoding warcio cannot decode, a gzip bomb.
Shared by tests/test_damaged_archive.py and bench/fault_probes/damaged_archive.py."""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import io
import random
import shutil
import zlib
from pathlib import Path

from typer.testing import CliRunner

from gpuprices.flows.cli import main as cli
from gpuprices.flows.config import Settings
from gpuprices.spiders.archive import Capture, append_captures

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "snapshots"
LAMBDA_DAY = dt.date(2026, 8, 22)  # snapshots/2026-08-22/lambda.warc.gz: 28 rows, one page
CRUSOE_DAY = dt.date(2026, 10, 4)  # snapshots/2026-10-04/{crusoe,coreweave}.warc.gz


def copy_archive(tmp: Path, day: dt.date, *providers: str) -> Settings:
    """A data folder and a copy of the bundled archive files of `providers` on `day`."""
    for p in providers:
        dest = tmp / "snapshots" / day.isoformat() / f"{p}.warc.gz"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SNAPSHOTS / day.isoformat() / f"{p}.warc.gz", dest)
    return Settings(data_dir=tmp / "data", archive_root=tmp / "snapshots").ensure()


def day_file(settings: Settings, day: dt.date, provider: str) -> Path:
    return settings.archive_root / day.isoformat() / f"{provider}.warc.gz"


def cut_to_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def append_random(path: Path, n: int = 100, seed: int = 30) -> None:
    with path.open("ab") as fh:
        fh.write(random.Random(seed).randbytes(n))


def change_body(path: Path, old: bytes, new: bytes) -> None:
    """Rewrite the file with `old` replaced by `new` (same length) in the first record body
    that holds it; the WARC headers (length, digests) stay as recorded."""
    assert len(old) == len(new)
    data = gzip.decompress(path.read_bytes())
    assert old in data, old
    path.write_bytes(gzip.compress(data.replace(old, new, 1)))


def encoded_capture(settings: Settings, provider: str, url: str, day: dt.date,
                    encoding: str, body: bytes) -> None:
    """Archive a capture whose stored body is `body` under `Content-Encoding: encoding`."""
    append_captures(settings.archive_root, [Capture(
        provider=provider, url=url, body=body,
        captured_at=dt.datetime.combine(day, dt.time(23), dt.UTC),
        headers=[("Content-Type", "text/html"), ("Content-Encoding", encoding)])])


def gzip_zeros(n_bytes: int) -> bytes:
    """A gzip stream of n_bytes zeros, built in 8 MiB steps (never n_bytes in memory; level 1:
    three times faster than 9 on zeros, ~4.6 KB per MiB)."""
    comp = zlib.compressobj(1, zlib.DEFLATED, 31)
    chunk, out, left = bytes(8 << 20), io.BytesIO(), n_bytes
    while left > 0:
        out.write(comp.compress(chunk[: min(left, len(chunk))]))
        left -= len(chunk)
    out.write(comp.flush())
    return out.getvalue()


def cli_run(*args: str):
    """The command line in this process (CliRunner), its stdout kept quiet."""
    with contextlib.redirect_stdout(io.StringIO()):
        return CliRunner().invoke(cli.app, list(args), terminal_width=240)


def where(settings: Settings) -> list[str]:
    return ["--data-dir", str(settings.data_dir), "--archive", str(settings.archive_root)]
