"""`without_fsync()`: build a test warehouse without os.fsync.

The pipeline makes every archive, lake and record file it writes durable against a power cut
(os.fsync of the file and its folder before the rename). A fixture that builds a warehouse for
tests that only read it spends a large share of its time there (a sixth of the bundled
warehouse's build), and none of those tests depends on it: the files, their names and their
order are the same. os.fsync only, only inside the block; DuckDB's own syncs stay, and the
writes' fsync has its own test (tests/test_lake.py)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest


@contextlib.contextmanager
def without_fsync() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "fsync", lambda fd: None)
        yield
