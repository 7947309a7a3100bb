"""docs/design.md layers: nothing imports upward; sizing is pure Python."""

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


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_no_layer_imports_upward():
    problems = []
    for layer, allowed in ALLOWED.items():
        for py in (ROOT / layer).rglob("*.py"):
            ours = _imports(py) & set(ALLOWED)
            bad = ours - allowed - {layer}
            if bad:
                problems.append(f"{py.relative_to(ROOT)} imports {sorted(bad)}")
    assert problems == []


def test_sizing_needs_no_database_or_arrow():
    """The sizing engine takes plain rows: the warehouse prices them, the callers read it."""
    problems = []
    for py in (ROOT / "sizing").rglob("*.py"):
        bad = _imports(py) & {"duckdb", "pyarrow"}
        if bad:
            problems.append(f"{py.relative_to(ROOT)} imports {sorted(bad)}")
    assert problems == []
