"""A warehouse of every bundled snapshot (snapshots/), replayed and loaded as `make run` loads
it, built once per test process and shared by the query layer's, the API's, the MCP server's
and the index's tests and by the whole replay through the object store (each only reads it; a
test that must change it copies it first).

Building it takes 30-40 s on 2 cores. Every module that uses it is marked `GROUP`: `make test`
(--dist loadgroup) runs them all on one xdist worker, so it is built once per run, not once per
worker (a module that leaves the group builds it again on the other worker)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.warehouse.contract import PROVIDERS
from tests.conftest import ROOT

_BUILT: dict[str, Settings] = {}
GROUP = pytest.mark.xdist_group("bundled-warehouse")


def bundled_settings(tmp_path_factory) -> Settings:
    """The data folder holding the replayed warehouse (data/warehouse.duckdb)."""
    if "all" not in _BUILT:
        s = Settings(tmp_path_factory.mktemp("bundled") / "data", ROOT / "snapshots").ensure()
        results = []
        # Without fsync while building: a sixth of the build's time is spent making its 1,700
        # lake and record files durable against a power cut, which no test reading this
        # warehouse depends on (the files, their names and their order are the same; the
        # writes' fsync is tests/test_lake.py's own test). os.fsync only, only while this
        # runs; DuckDB's own syncs stay.
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(os, "fsync", lambda fd: None)
            for p in PROVIDERS:
                results += pipeline.replay(s, p, "all")
            assert not [r.errors for r in results if r.status == "failed"]
            loading.load(s, results, "20261005T020000-bundled")
        _BUILT["all"] = s
    return _BUILT["all"]


def warehouse_path(tmp_path_factory) -> Path:
    return bundled_settings(tmp_path_factory).db_path
