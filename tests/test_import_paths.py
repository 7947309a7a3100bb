"""`import-capture` keeps what it archives inside the archive, from a manifest as from one file
(issue #11, item 13): a manifest is data that may come from elsewhere."""

import csv

import pytest

from tests.conftest import ROOT, manifest_rows
from tests.test_cli import gp

REAL = manifest_rows("runpod")[0]  # a real capture and its manifest row


def _manifest(path, **change):
    row = dict(REAL) | change
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    return path


@pytest.mark.parametrize("change, why", [
    ({"provider": "../../escaped"}, "unknown provider '../../escaped'"),
    ({"file": str(ROOT / REAL["file"])}, "is not a relative path"),
    ({"file": "../" * 12 + "etc/passwd"}, "is not a relative path"),
])
def test_a_manifest_cannot_write_or_read_outside(tmp_path, change, why):
    repo = tmp_path / "repo"
    (repo / "snapshots").mkdir(parents=True)
    manifest = _manifest(repo / "snapshots" / "manifest.csv", **change)
    archive = tmp_path / "deep" / "er" / "archive"
    r = gp("import-capture", "--manifest", manifest, "--archive", archive)
    assert r.returncode == 2, r.stderr
    err = " ".join(r.stderr.split())  # rich wraps long paths
    assert "manifest refused" in err and why in err and "Traceback" not in err
    assert "manifest.csv:2" in r.stderr  # the line to fix
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != manifest]
    assert written == []  # nothing archived, inside or outside


def test_the_single_file_import_refuses_the_same_provider(tmp_path):
    r = gp("import-capture", ROOT / REAL["file"], "--provider", "../../escaped", "--url",
           REAL["url"], "--captured-at", REAL["captured_at"], "--archive", tmp_path / "a")
    assert r.returncode == 2 and "unknown provider" in r.stderr
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_the_bundled_manifest_still_imports(tmp_path):
    r = gp("import-capture", "--manifest", ROOT / "snapshots" / "manifest.csv", "--archive",
           tmp_path / "a")
    assert r.returncode == 0, r.stderr
    assert list((tmp_path / "a").rglob("*.warc.gz"))
