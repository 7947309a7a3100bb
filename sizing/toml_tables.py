"""The array of tables a user's TOML file holds ([[workload]], [[discount]]), read with the same
clear errors for every such file: missing, not TOML, or without one such table."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def read_tables(path: Path, name: str, error: type[Exception]) -> list[Any]:
    """The `[[name]]` tables of `path`; `error` (the caller's own) names the file and what is
    wrong with it."""
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML ({exc})") from None
    tables = data.get(name)
    if not isinstance(tables, list) or not tables:
        raise error(f"{path}: no [[{name}]] tables")
    return tables
