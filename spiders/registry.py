"""The provider registry: one declaration per provider, read from `spiders/providers/<id>/`.

Each provider is a package `spiders/providers/<id>/` whose `__init__.py` holds `PROVIDER`, a
`Provider` below: what to fetch (`source.py`), how to read it (`parser.py` and its helpers), the
reference tables it ships, its former pricing URLs for the Wayback backfill and the node sizes it
sells. Everything that needs to know about a provider asks here (the crawler, the parse dispatch,
the Wayback backfill, sizing through `node_shapes()`), so adding one is adding one package; the
registry test (tests/test_registry.py) checks each has its source, parser, tests and real
fixtures, and that the packages agree with `gpuprices.warehouse.contract.PROVIDERS`, which the
warehouse keeps because it cannot import spiders.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

# Only for the Parser type: the contract brings pyarrow, and the command line asks this registry
# for provider ids at start-up (bench/cli_startup.py).
if TYPE_CHECKING:
    from gpuprices.warehouse.contract import CaptureMeta, Offer

Parser = Callable[[bytes, "CaptureMeta"], list["Offer"]]

# What a provider is, for readers of the report and for later provider kinds: a hyperscaler sells
# GPUs among every other cloud product (many regions, reservations); a GPU cloud sells mainly GPUs;
# an inference host sells GPU hours only to serve the buyer's own model or app on its platform
# (a container or serverless function: no root VM, no multi-node training) beside per-token or
# per-output APIs, which are never GPU-hour rows (DeepInfra, fal; declaration `note` says what).
KINDS = ("hyperscaler", "gpu_cloud", "inference_host")
# Where the GPUs come from, so a report compares like with like: "own" runs its own data centres
# (one price per SKU, one operator to hold to an SLA); "marketplace" lists many independent hosts'
# offers for the same GPU at different prices; "reseller" sells capacity it rents from data-centre
# partners under its own price list; "aggregator" lists other clouds' machines, each row one
# upstream cloud's offer (spiders/resold.py: the row names that cloud where the source does, and
# is not counted twice when we also read that cloud first-party; docs/providers.md).
SUPPLIES = ("own", "marketplace", "reseller", "aggregator")
# How often a provider is crawled (docs/providers.md, "Crawl cadence", gives each provider's
# reason). "daily": a list price changes by announcement, so one snapshot a day (the latest
# capture of each request of the UTC day) says all there is. "hourly": prices or listings move
# within the day (host-set marketplace prices, spot feeds): each crawl is its own snapshot, so a
# day holds several, each named by the time of its first capture (flows/pipeline/parsing.py).
CADENCES = ("hourly", "daily")
PACKAGE = "gpuprices.spiders.providers"


@dataclass(frozen=True)
class NodeShapes:
    """GPUs per node a provider sells when it quotes one GPU's price (sizing buys the smallest
    node that holds a workload), with the public source of the sizes."""

    sizes: tuple[int, ...]
    source: str


@dataclass(frozen=True)
class Provider:
    # as in gpuprices.warehouse.contract.PROVIDERS, the WARC file name and the lake partition
    id: str
    name: str  # as the provider writes it, for tables and the report
    kind: str  # one of KINDS
    supply: str  # one of SUPPLIES
    source: str  # module of the fetch plan: start_requests(env) and optionally follow(capture)
    parser: str  # module of parse(body, meta), and optionally wants(meta), postprocess(...)
    parser_helpers: tuple[str, ...] = ()  # further modules the parser is split into
    history: str | None = None  # module that turns a bundled dated series into captures
    tables: tuple[str, ...] = ()  # reference CSVs in the package, each row with its source
    wayback_urls: tuple[str, ...] = ()  # current and former public pricing URLs
    node_shapes: NodeShapes | None = None
    # What a buyer must know about what the rows are, when the kind alone does not say it.
    note: str | None = None
    cadence: str = "daily"  # one of CADENCES; the declaration says why when it is not daily

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.supply not in SUPPLIES:
            raise ValueError(f"{self.id}: supply {self.supply!r} is not one of "
                             f"{', '.join(SUPPLIES)}")
        if self.cadence not in CADENCES:
            raise ValueError(f"{self.id}: cadence {self.cadence!r} is not one of "
                             f"{', '.join(CADENCES)}")


@cache
def declarations() -> dict[str, Provider]:
    """Every provider package's declaration, by id (sorted)."""
    found: dict[str, Provider] = {}
    package = importlib.import_module(PACKAGE)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        decl = importlib.import_module(f"{PACKAGE}.{info.name}").PROVIDER
        if decl.id != info.name:
            raise ValueError(f"{PACKAGE}.{info.name} declares id {decl.id!r}")
        found[decl.id] = decl
    return found


def ids() -> tuple[str, ...]:
    return tuple(declarations())


def declaration(provider: str) -> Provider:
    try:
        return declarations()[provider]
    except KeyError:
        known = ", ".join(declarations())
        raise KeyError(f"unknown provider {provider!r}; known: {known}") from None


def source_for(provider: str) -> ModuleType:
    """The provider's fetch-plan module (`start_requests`, optionally `follow`)."""
    return importlib.import_module(declaration(provider).source)


def parser_module(provider: str) -> ModuleType:
    """The provider's parser module, for its optional `wants` and `postprocess` hooks."""
    return importlib.import_module(declaration(provider).parser)


def parser_for(provider: str) -> Parser:
    return parser_module(provider).parse


def body_cap(provider: str) -> Callable[[str], int]:
    """The largest decoded body accepted from a URL of this provider: archive.MAX_BODY_BYTES, or
    more where its fetch plan says a document is larger by nature (the source module's optional
    `body_cap(url) -> int | None`: AWS's regional offer files). The crawl, the import and the
    replay of the archive all apply it."""
    from gpuprices.spiders.archive import MAX_BODY_BYTES  # archive is a leaf: no cycle
    try:
        hook = getattr(source_for(provider), "body_cap", None)
    except KeyError:  # the ECB rates and other archive names without a provider package
        hook = None

    def cap(url: str) -> int:
        return max(MAX_BODY_BYTES, (hook(url) or 0) if hook else 0)

    return cap


def cadence(provider: str) -> str:
    """How often the provider is crawled (CADENCES); "daily" for an archive name without a
    provider package (the ECB rates)."""
    try:
        return declaration(provider).cadence
    except KeyError:
        return "daily"


def hourly() -> tuple[str, ...]:
    """The providers crawled every hour."""
    return tuple(p.id for p in declarations().values() if p.cadence == "hourly")


def wayback_urls(provider: str) -> list[str]:
    """The provider's current and former public pricing URLs, for the Wayback backfill."""
    return list(declaration(provider).wayback_urls)


def node_shapes() -> dict[str, tuple[int, ...]]:
    """Providers that quote one GPU's price but sell nodes of several GPUs: provider -> GPUs per
    node, smallest first (the sources are in each declaration)."""
    return {p.id: tuple(sorted(p.node_shapes.sizes))
            for p in declarations().values() if p.node_shapes is not None}
