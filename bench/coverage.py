"""Print, per provider, how many parsed rows of the bundled snapshots map to a GPU model, and
list what stays unmapped with its reason. Usage: .venv/bin/python bench/coverage.py [archive]"""

from __future__ import annotations

import sys
from pathlib import Path

from gpuprices.flows.pipeline.coverage import coverage

ROOT = Path(__file__).resolve().parent.parent


def main(root: Path) -> None:
    print(f"{'provider':<12}{'rows':>8}{'mapped':>8}{'mapped %':>10}")
    report = coverage(root)
    for cov in report.values():
        print(f"{cov.provider:<12}{cov.rows:>8}{cov.mapped:>8}{cov.pct:>9.1f}%")
    for cov in report.values():
        for (sku, reason), n in sorted(cov.unmapped.items()):
            print(f"  unmapped {cov.provider} {sku}: {n} rows ({reason})")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "snapshots")
