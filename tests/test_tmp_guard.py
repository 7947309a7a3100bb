"""The suite's temporary files go into the run's own folder (tests/conftest.py), so that /tmp is
left as the suite found it."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import REAL_TMP, RUN_TMP_PREFIX


def _in_run_folder(path: str) -> bool:
    p = Path(path).resolve()
    return p.is_relative_to(REAL_TMP.resolve()) and any(
        part.startswith(RUN_TMP_PREFIX) for part in p.parts)


def test_this_process_writes_temporary_files_into_the_runs_folder(tmp_path):
    assert _in_run_folder(tempfile.gettempdir())
    assert _in_run_folder(str(tmp_path))  # pytest's own tmp_path too


def test_a_child_process_inherits_the_runs_folder():
    out = subprocess.run([sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"],
                         capture_output=True, text=True, check=True, env=os.environ.copy())
    assert _in_run_folder(out.stdout.strip())
