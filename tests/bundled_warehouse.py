"""A warehouse of every bundled snapshot (snapshots/), replayed and loaded as `make run` loads
it, built once per test process and shared by the query layer's, the API's, the MCP server's
and the index's tests and by the whole replay through the object store (each only reads it; a
test that must change it copies it first).

Building it takes 30-40 s on 2 cores. Every module that uses it is marked `GROUP`: `make test`
(--dist loadgroup) runs them all on one xdist worker, so it is built once per run, not once per
worker (a module that leaves the group builds it again on the other worker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.warehouse.contract import PROVIDERS
from tests.conftest import ROOT
from tests.no_fsync import without_fsync

_BUILT: dict[str, Settings] = {}
GROUP = pytest.mark.xdist_group("bundled-warehouse")


def bundled_settings(tmp_path_factory) -> Settings:
    """The data folder holding the replayed warehouse (data/warehouse.duckdb)."""
    if "all" not in _BUILT:
        s = Settings(tmp_path_factory.mktemp("bundled") / "data", ROOT / "snapshots").ensure()
        results, listings = [], pipeline.Listings()  # as `gpuprices crawl --replay all`
        with without_fsync():  # a sixth of the build's time (tests/no_fsync.py)
            for p in PROVIDERS:
                results += pipeline.replay(s, p, "all", listings=listings)
            assert not [r.errors for r in results if r.status == "failed"]
            loading.load(s, results, "20261005T020000-bundled")
        _BUILT["all"] = s
    return _BUILT["all"]


def warehouse_path(tmp_path_factory) -> Path:
    return bundled_settings(tmp_path_factory).db_path
