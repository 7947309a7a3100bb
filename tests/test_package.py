"""The distribution installs one import package, `gpuprices`, holding the five folders as its
sub-packages (setup.py), with their data files: no generic top-level name such as `warehouse` or
`reports` lands in site-packages."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("spiders", "flows", "warehouse", "sizing", "reports")
# The wheel below is built once per run: `make test` (--dist loadgroup) runs the whole module on
# one xdist worker, not a share on each.
pytestmark = pytest.mark.xdist_group("package")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # setuptools builds in the source tree (build/, *.egg-info): build a copy of what the
    # distribution is made of, so that the checkout stays as it is.
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("gpuprices", *FOLDERS):
        shutil.copytree(ROOT / folder, src / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    # pip builds in an isolated environment with the setuptools pyproject.toml asks for.
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                    str(src)], check=True, capture_output=True, timeout=300)
    (whl,) = out.glob("gpuprices-*.whl")
    return whl


@pytest.fixture(scope="module")
def wheel_names(wheel) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return z.namelist()


def test_the_wheel_has_one_top_level_package(wheel_names):
    tops = {n.split("/")[0] for n in wheel_names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"gpuprices"}


def test_every_folder_is_a_sub_package_with_its_modules(wheel_names):
    names = set(wheel_names)
    for folder in FOLDERS:
        for py in (ROOT / folder).rglob("*.py"):
            assert f"gpuprices/{py.relative_to(ROOT).as_posix()}" in names, py
    assert {"gpuprices/__init__.py", "gpuprices/__main__.py"} <= names


def test_the_data_files_travel_with_their_package(wheel_names):
    names = set(wheel_names)
    for pattern in ("warehouse/*.csv", "warehouse/sql/*/*.sql", "spiders/providers/*/*.csv",
                    "sizing/*.csv", "sizing/*.toml", "reports/templates/*"):
        files = [p for p in ROOT.glob(pattern) if p.is_file()]
        assert files, pattern
        for f in files:
            assert f"gpuprices/{f.relative_to(ROOT).as_posix()}" in names, f


def test_the_command_is_the_packages_cli(wheel, wheel_names):
    (ep,) = [n for n in wheel_names if n.endswith(".dist-info/entry_points.txt")]
    with zipfile.ZipFile(wheel) as z:
        text = z.read(ep).decode()
    assert "gpuprices = gpuprices.flows.cli.main:main" in text


def test_python_dash_m_gpuprices_runs_the_cli():
    r = subprocess.run([sys.executable, "-m", "gpuprices", "--help"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "nightly" in r.stdout
