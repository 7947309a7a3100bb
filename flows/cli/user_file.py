"""A file the user names on the command line (watch rules, measured results, workloads), read
by its own loader: the loader's error is the user's to fix, so it is said as one `error:` line
and the command exits 2, with no traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import typer
from rich.console import Console
from rich.markup import escape

T = TypeVar("T")

err = Console(stderr=True, soft_wrap=True)  # messages stay whole lines (a path never splits)


def read_or_exit(load: Callable[[Path], T], path: Path, *errors: type[Exception]) -> T:
    """`load(path)`; on one of `errors`, its message and exit code 2."""
    try:
        return load(path)
    except errors as exc:
        # emoji=False: a path such as a:x:b is printed as written, not with an emoji in it.
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, emoji=False)
        raise typer.Exit(2) from None
