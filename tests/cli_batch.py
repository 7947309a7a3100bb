"""Several `gpuprices` command lines in one child process, one after the other.

`tests.test_cli.gp` starts a process per command line; most of that process's time is Python
importing the CLI, DuckDB and pyarrow. `gp_batch` starts one process that runs each command line
through the CLI's own entry point (`gpuprices.flows.cli.main.main`, what `python -m gpuprices`
runs, with its handling of a busy warehouse and a bad data folder), with stdout and stderr
captured per command line at the file descriptors (nothing written to them escapes), and
returns one CompletedProcess-like result per command line: its exit code, stdout and stderr.
An exception that escapes `main` is printed to that command's stderr as a traceback, exit code
1, as the interpreter would.

For command lines whose own process is not what a test checks (signals, process exit, a second
process beside the warehouse): the DuckDB connections are still this child's own, never the test
process's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

_CHILD = r"""
import json, os, sys, tempfile, traceback
from gpuprices.flows.cli.main import main
results = []
saved = os.dup(1), os.dup(2)
for args in json.loads(sys.argv[1]):
    # fds 1 and 2 themselves go to a file per command line: what Python, a logging handler or
    # a library writing to the descriptor prints is that command line's output.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(out.fileno(), 1), os.dup2(err.fileno(), 2)
        code = 0
        sys.argv = ["gpuprices", *args]
        try:
            main()
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:  # the interpreter prints a non-integer exit code and exits 1
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
    results.append([code, *texts])
sys.stdout.write("\n" + json.dumps(results))
"""


def gp_batch(*command_lines, env=None, timeout=300) -> list[subprocess.CompletedProcess]:
    """Run each command line (a sequence of arguments, str() taken of each) in order in one
    child process, with the environment `tests.test_cli.gp` gives (COLUMNS=200)."""
    lines = [[str(a) for a in args] for args in command_lines]
    full_env = os.environ | {"COLUMNS": "200"} | (env or {})
    r = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(lines)], capture_output=True,
                       text=True, timeout=timeout, env=full_env)
    assert r.returncode == 0, r.stderr[-3000:]
    answers = json.loads(r.stdout.splitlines()[-1])
    assert len(answers) == len(lines), answers
    return [subprocess.CompletedProcess(["gpuprices", *args], code, out, err)
            for args, (code, out, err) in zip(lines, answers, strict=True)]
