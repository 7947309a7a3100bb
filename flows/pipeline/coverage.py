"""How much of each provider's parsed rows map to a canonical GPU model: rows whose GPU wording
(or Azure size) is not in the tables keep gpu_model None and the gates quarantine them. Read
from the archive itself (every snapshot file of a provider, parsed as the pipeline parses it),
so the figure does not depend on a warehouse having been built."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gpuprices.flows.pipeline.steps import parse_archive
from gpuprices.spiders.archive import list_archives
from gpuprices.warehouse.contract import PROVIDERS


@dataclass
class Coverage:
    provider: str
    rows: int = 0
    mapped: int = 0
    unmapped: Counter = field(default_factory=Counter)  # (sku, reason) -> rows

    @property
    def pct(self) -> float:
        return 100.0 * self.mapped / self.rows if self.rows else 100.0


def coverage(archive_root: Path) -> dict[str, Coverage]:
    out: dict[str, Coverage] = {}
    for path, provider in _archives(archive_root):
        cov = out.setdefault(provider, Coverage(provider))
        for o in parse_archive(path, provider).offers:
            cov.rows += 1
            if o.gpu_model:
                cov.mapped += 1
            else:
                reason = o.extra.get("unmapped_reason") or "GPU wording not in the tables"
                cov.unmapped[(o.sku, reason)] += 1
    return dict(sorted(out.items()))


def _archives(root: Path) -> list[tuple[Path, str]]:
    return [(path, provider) for _day, provider, path in list_archives(root)
            if provider in PROVIDERS]
