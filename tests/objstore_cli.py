"""`gpuprices ...` run in this process (typer's CliRunner) for the object-store tests, answering
like the subprocess.run they used before: returncode, stdout, stderr. What the tests check is
the command's answer, not the process start (tests/test_cli_startup.py checks that), and each
fresh interpreter cost 2-4 s of imports. An exception the command does not turn into an exit
code is written to stderr as the interpreter would ("Traceback ..."), so a test that says no
traceback reached the user still sees one."""

from __future__ import annotations

import subprocess
import traceback

from typer.testing import CliRunner

from gpuprices.flows.cli.main import app


def gp(*args: str, env: dict) -> subprocess.CompletedProcess:
    res = CliRunner().invoke(app, [str(a) for a in args], env=env)
    stderr = res.stderr
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        stderr += "Traceback (most recent call last):\n" + "".join(
            traceback.format_exception(res.exception))
    return subprocess.CompletedProcess(list(args), res.exit_code, res.stdout, stderr)
