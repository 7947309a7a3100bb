"""Every `gpuprices` command starts by importing the command line (flows/cli/main.py): the
libraries only some commands need (Prefect, duckdb, pyarrow, ...) are imported inside those
commands, so `--help` and the light commands start in a fraction of the time
(bench/cli_startup.py prints the figures). Checked in a fresh interpreter, whose sys.modules
holds only what the import really loaded."""

import json
import subprocess
import sys

# What the command line must not load at start-up: Prefect (and the servers) only for the
# commands that run flows or serve, the warehouse's engines only for the commands that read it.
HEAVY = ("prefect", "duckdb", "pyarrow", "numpy", "pandas", "jinja2", "apprise", "warcio",
         "lxml", "fastapi", "uvicorn", "mcp", "scrapy")


def _loaded_after(code: str) -> list[str]:
    """The HEAVY top-level packages in sys.modules after running `code` in a new interpreter."""
    loaded = f"{{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}"
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({loaded})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_the_probe_sees_a_heavy_import():
    # The check below could pass by never seeing anything: here it must see duckdb.
    assert _loaded_after("import duckdb") == ["duckdb"]


def test_importing_the_command_line_loads_no_heavy_library():
    assert _loaded_after("import gpuprices.flows.cli.main") == []


def test_every_commands_help_loads_no_heavy_library():
    # Typer reads each command's options (their types and defaults) when it builds the command
    # line: every command's help, sub-commands included, is rendered here without a heavy import.
    # Typer vendors its own click: groups are recognised by their list_commands.
    code = """
import typer
from gpuprices.flows.cli.main import app

seen = []
def walk(cmd, ctx):
    assert cmd.get_help(ctx)
    seen.append(ctx.command_path)
    if hasattr(cmd, "list_commands"):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            walk(sub, sub.context_class(sub, info_name=name, parent=ctx))

root = typer.main.get_command(app)
walk(root, root.context_class(root, info_name="gpuprices"))
wanted = {"gpuprices sql", "gpuprices rank", "gpuprices nightly", "gpuprices load",
          "gpuprices quarantine release", "gpuprices index verify", "gpuprices api"}
assert wanted <= set(seen), seen
"""
    assert _loaded_after(code) == []
