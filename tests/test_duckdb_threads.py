"""GPUPRICES_DUCKDB_THREADS: the DuckDB threads of each warehouse connection
(warehouse/connection.py), and a value that cannot be used is said, not a traceback."""

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from gpuprices.warehouse import db
from gpuprices.warehouse.connection import BadSetting, threads_setting

GPUPRICES = str(Path(sys.executable).with_name("gpuprices"))


def _threads(con) -> int:
    return con.execute("SELECT current_setting('threads')").fetchone()[0]


@pytest.mark.parametrize("value", ["1", "3"])
def test_the_setting_is_each_connections_thread_count(monkeypatch, tmp_path, value):
    monkeypatch.setenv("GPUPRICES_DUCKDB_THREADS", value)
    for path in (":memory:", tmp_path / "w.duckdb"):
        con = db.connect(path)
        try:
            assert _threads(con) == int(value)
        finally:
            con.close()


def test_unset_leaves_duckdbs_own_default(monkeypatch):
    monkeypatch.delenv("GPUPRICES_DUCKDB_THREADS", raising=False)
    assert threads_setting() == {}
    con, plain = db.connect(":memory:"), duckdb.connect(":memory:")
    try:
        assert _threads(con) == _threads(plain)
    finally:
        con.close()
        plain.close()


def test_a_connections_own_config_still_applies(monkeypatch):
    monkeypatch.setenv("GPUPRICES_DUCKDB_THREADS", "2")
    con = db.connect(":memory:", config={"threads": 1})  # a caller's explicit choice wins
    try:
        assert _threads(con) == 1
    finally:
        con.close()


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5"])
def test_an_unusable_value_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv("GPUPRICES_DUCKDB_THREADS", value)
    with pytest.raises(BadSetting, match=f"GPUPRICES_DUCKDB_THREADS={value!r}: expected a "
                                         f"whole number"):
        db.connect(":memory:")


def test_the_command_line_says_it_and_exits_2(tmp_path):
    con = db.connect(tmp_path / "warehouse.duckdb")
    db.init_schema(con)
    con.close()
    env = {**os.environ, "GPUPRICES_DUCKDB_THREADS": "many", "GPUPRICES_HOME": str(tmp_path)}
    r = subprocess.run([GPUPRICES, "sql", "SELECT 1"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "GPUPRICES_DUCKDB_THREADS='many': expected a whole number" in r.stderr
    assert "Traceback" not in r.stderr
