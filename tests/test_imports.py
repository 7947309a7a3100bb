"""The import graph of the repository's packages has no cycle, counting every import, those
inside functions too (an import placed in a function to dodge a cycle still is one). In flows/,
imports inside functions are kept for two reasons only: Prefect reads PREFECT_HOME when first
imported, so the modules that import it are imported after gpuprices.flows.config.prefect_env is
set; and the command line (flows/cli/) starts for every command, so each command imports what only
it needs (duckdb, pyarrow, the pipeline...) in its body (tests/test_cli_startup.py)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name != "tests")
# Modules that import Prefect at their top (see their docstrings), and the API and MCP servers,
# whose FastAPI, uvicorn and mcp imports (about a second) no other command should pay for.
PREFECT_MODULES = {"gpuprices.flows.nightly", "gpuprices.flows.serve", "gpuprices.flows.weekly",
                   "gpuprices.flows.team.flows", "gpuprices.flows.team.deploy",
                   "gpuprices.flows.channels.http_api", "gpuprices.flows.channels.mcp_server"}


def _module_name(path: Path) -> str:
    """The installed name: the top-level folders are sub-packages of `gpuprices` (setup.py)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] != "gpuprices":
        parts.insert(0, "gpuprices")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(py): py for pkg in PACKAGES for py in (ROOT / pkg).rglob("*.py")
            if ".venv" not in py.parts}


def _targets(node: ast.AST, module: str, is_pkg: bool, known: set[str]) -> set[str]:
    """Our modules an import statement loads (a package's submodule when it names one)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in known}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        here = module.split(".") if is_pkg else module.split(".")[:-1]
        here = here[:len(here) - node.level + 1]
        base = ".".join(here + ([base] if base else []))
    found = {f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known}
    if len(found) < len(node.names) and base in known:
        found.add(base)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    graph = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text())
        graph[name] = {t for node in ast.walk(tree)
                       for t in _targets(node, name, path.name == "__init__.py", known)} - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_graph_sees_imports_inside_functions():
    graph = _graph()
    # imported inside `nightly` (Prefect)
    assert "gpuprices.flows.nightly" in graph["gpuprices.flows.cli.main"]
    # `from gpuprices.flows.pipeline import steps`: the submodule, not only the package
    assert {"gpuprices.flows.pipeline.steps", "gpuprices.flows.ops.lock"} <= graph[
        "gpuprices.flows.cli.quarantine"]


def test_the_import_graph_has_no_cycle():
    assert _cycle(_graph()) is None


def test_flows_imports_inside_functions_only_load_prefect_modules():
    problems = []
    for name, path in _modules().items():
        if not name.startswith("gpuprices.flows.") or name.startswith("gpuprices.flows.cli."):
            continue
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    late = _targets(node, name, False, set(_modules()))
                    if not late or late - PREFECT_MODULES:
                        problems.append(f"{path.relative_to(ROOT)}:{node.lineno} "
                                        f"imports {ast.unparse(node)!r} inside {fn.name}()")
    assert problems == []
