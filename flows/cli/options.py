"""Options every `gpuprices` command spells the same way (flows/cli/main.py and the command modules
it registers)."""

from __future__ import annotations

from typing import Annotated

import typer

# A text, not a Path: Path("") is ".", and an empty --data-dir must be refused, not read as the
# current folder (flows/config.py: settings_from).
DataDir = Annotated[str | None, typer.Option(
    "--data-dir", help="Data folder (lake, warehouse.duckdb, Prefect home). "
                       "Default: $GPUPRICES_HOME or ./data")]
# A text, not a Path: an `s3://bucket/prefix` archive must reach settings_from as written.
ArchiveDir = Annotated[str | None, typer.Option(
    "--archive", help="Raw archive root: a folder or s3://bucket/prefix. Default: "
                      "$GPUPRICES_ARCHIVE or the repo's snapshots/")]
ProviderOpt = Annotated[list[str] | None, typer.Option(
    "--provider", "-p", help="Provider (repeatable). Default: every configured provider.")]


def providers_or_all(names: list[str] | None) -> list[str]:
    """The providers named with -p (checked against the known ids), else all of them."""
    # Here, not at the top: the contract brings pyarrow, and every command imports this module.
    from gpuprices.warehouse.contract import PROVIDERS

    names = names or list(PROVIDERS)
    unknown = [n for n in names if n not in PROVIDERS]
    if unknown:
        raise typer.BadParameter(f"unknown provider(s) {unknown}; known: {', '.join(PROVIDERS)}")
    return names
