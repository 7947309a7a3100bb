"""DESIGN.md layers: nothing imports upward."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {
    "warehouse": set(),
    "spiders": {"warehouse"},
    "sizing": {"warehouse"},
    "flows": {"warehouse", "spiders", "sizing"},
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
