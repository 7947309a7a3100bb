"""docs/design.md layers: nothing imports upward, inside flows/ too; sizing is pure Python; the
code imports itself through the one package `gpuprices`, never by a bare folder name."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {
    "warehouse": set(),
    "spiders": {"warehouse"},
    "sizing": {"warehouse"},
    "reports": {"warehouse", "sizing"},
    "flows": {"warehouse", "spiders", "sizing", "reports"},
}
BARE = set(ALLOWED)
# flows/ from the ground up: a module imports flows/ modules of its own rank (inside one
# sub-package, or the top-level leaves among themselves) or lower ones, never higher.
FLOWS_RANK = {
    "config": 0, "schedules": 0, "redaction": 0, "gpu_names": 0,  # leaves every part uses
    "pipeline": 1,  # crawl -> parse -> check -> store, the load's steps
    "ops": 2,  # journal, lock, run summary and alerts, status, service, publishing
    "loading": 3,  # the end of every run
    "nightly": 4, "weekly": 4,  # the Prefect flows
    "serve": 5,  # serves the flows
    "channels": 5,  # serves the answers: the HTTP API and the MCP server
    "team": 6,  # the team mode's flows and deployments
    "cli": 7,  # the command line over all of it
}


def _imports(path: Path) -> set[str]:
    """Every absolute module name `path` imports, as written (`gpuprices.flows.pipeline.gates`);
    `from X import Y` counts as `X.Y` too, since Y may be a module."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def _layer(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if parts[0] == "gpuprices" and len(parts) > 1 and parts[1] in ALLOWED else None


def _flows_part(name: str) -> str | None:
    """The flows/ part a module name belongs to: its sub-package or top-level module."""
    parts = name.split(".")
    if parts[:2] != ["gpuprices", "flows"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in FLOWS_RANK else None


def _flows_modules() -> dict[str, Path]:
    out = {}
    for py in (ROOT / "flows").rglob("*.py"):
        parts = list(py.relative_to(ROOT).with_suffix("").parts)
        out[".".join(["gpuprices", *(parts[:-1] if parts[-1] == "__init__" else parts)])] = py
    return out


def test_no_layer_imports_upward():
    problems = []
    for layer, allowed in ALLOWED.items():
        for py in (ROOT / layer).rglob("*.py"):
            ours = {_layer(n) for n in _imports(py)} - {None}
            bad = ours - allowed - {layer}
            if bad:
                problems.append(f"{py.relative_to(ROOT)} imports {sorted(bad)}")
    assert problems == []


def test_the_layer_check_sees_the_package_names():
    assert _layer("gpuprices.sizing.rank") == "sizing"
    assert _layer("warehouse") is None  # a bare name is not ours: the next test refuses it


def test_code_imports_through_the_gpuprices_package_only():
    """`import warehouse` would load a second copy of a module (or another distribution's
    `warehouse`): the folders install only as `gpuprices.<folder>` (setup.py)."""
    problems = []
    for folder in [*ALLOWED, "gpuprices", "tests", "bench"]:
        for py in (ROOT / folder).rglob("*.py"):
            bare = {n for n in _imports(py) if n.split(".")[0] in BARE}
            if bare:
                problems.append(f"{py.relative_to(ROOT)} imports {sorted(bare)}")
    assert problems == []


def test_flows_parts_import_nothing_above_them():
    modules = _flows_modules()
    unplaced = sorted(n for n in modules if n != "gpuprices.flows" and _flows_part(n) is None)
    assert unplaced == [], "every flows/ module has a rank in FLOWS_RANK"
    problems = []
    for name, py in modules.items():
        part = _flows_part(name)
        if part is None:
            continue
        for target in _imports(py):
            other = _flows_part(target)
            if other is None or other == part:
                continue
            if FLOWS_RANK[other] >= FLOWS_RANK[part]:
                problems.append(f"{py.relative_to(ROOT)} ({part}) imports {target} ({other})")
    assert problems == []


def test_flows_top_holds_the_flows_and_a_few_shared_modules():
    top = sorted(p.stem for p in (ROOT / "flows").glob("*.py") if p.stem != "__init__")
    assert len(top) <= 12, top
    subs = sorted(p.parent.name for p in (ROOT / "flows").glob("*/__init__.py"))
    assert subs == ["channels", "cli", "ops", "pipeline", "team"]


def test_sizing_needs_no_database_or_arrow():
    """The sizing engine takes plain rows: the warehouse prices them, the callers read it."""
    problems = []
    for py in (ROOT / "sizing").rglob("*.py"):
        bad = {n.split(".")[0] for n in _imports(py)} & {"duckdb", "pyarrow"}
        if bad:
            problems.append(f"{py.relative_to(ROOT)} imports {sorted(bad)}")
    assert problems == []
