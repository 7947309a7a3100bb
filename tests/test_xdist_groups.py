"""`make test` runs with --dist loadgroup so that the tests sharing an expensive fixture (the
bundled warehouse, the Prefect server) run on one xdist worker, which builds it once. A pytest
and xdist pairing that drops the xdist_group marks does so silently (pytest 9.2 with xdist 3.8,
pytest-dev/pytest-xdist#1386): the suite still passes, only slower. Here two modules of one
group, each with more tests than workers, run under -n 2 --dist loadgroup and must all land on
one worker."""

import os
import subprocess
import sys

GROUPED = '''import os
import pytest

pytestmark = pytest.mark.xdist_group("shared")


def test_{name}_1():
    print("RAN {name}_1 ON", os.environ["PYTEST_XDIST_WORKER"])


def test_{name}_2():
    print("RAN {name}_2 ON", os.environ["PYTEST_XDIST_WORKER"])


def test_{name}_3():
    print("RAN {name}_3 ON", os.environ["PYTEST_XDIST_WORKER"])
'''


def test_tests_of_one_xdist_group_run_on_one_worker(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # its own rootdir: not this suite's
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text(GROUPED.format(name=name))
    # xdist alone: the other installed plugins (playwright's, anyio's...) cost each of the
    # three processes a second or two and have no part in the grouping.
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist", "-n", "2", "--dist",
                        "loadgroup", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    ran = [line for line in r.stdout.splitlines() if line.startswith("RAN ")]
    assert len(ran) == 6, r.stdout
    assert len({line.split(" ON ")[1] for line in ran}) == 1, ran
