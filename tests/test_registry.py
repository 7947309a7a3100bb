"""The provider registry: every provider the warehouse knows has one package that declares it, a
fetch plan, a parser, its tests and real captures with their origin; nothing is left at the old
per-kind locations."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import importlib
from urllib.parse import urlsplit

import pytest

from gpuprices.spiders import registry
from gpuprices.spiders.archive import archive_path, read_captures
from gpuprices.spiders.importer import parse_timestamp
from gpuprices.spiders.sources import RequestSpec
from gpuprices.warehouse.contract import PROVIDERS
from tests.conftest import FIXTURES, ROOT, manifest_rows

SPIDERS = ROOT / "spiders"
PROVIDER_DIR = SPIDERS / "providers"


def test_declarations_agree_with_the_contract():
    assert sorted(registry.ids()) == sorted(PROVIDERS)
    assert len(set(PROVIDERS)) == len(PROVIDERS)
    with pytest.raises(KeyError, match="unknown provider 'hetzner'"):
        registry.declaration("hetzner")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_declaration(provider):
    decl = registry.declaration(provider)
    assert decl.id == provider
    assert decl.name and decl.kind in registry.KINDS
    assert decl.supply in registry.SUPPLIES
    own = f"{registry.PACKAGE}.{provider}."
    modules = [decl.source, decl.parser, *decl.parser_helpers]
    modules += [decl.history] if decl.history else []
    for name in modules:
        assert name.startswith(own), f"{name} is not in {provider}'s package"
        importlib.import_module(name)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_fetch_plan_starts_with_https_requests(provider):
    specs = registry.source_for(provider).start_requests({})
    assert specs, f"{provider}: an empty fetch plan"
    for spec in specs:
        assert isinstance(spec, RequestSpec)
        assert urlsplit(spec.url).scheme == "https", spec.url
        assert urlsplit(spec.url).netloc, spec.url


@pytest.mark.parametrize("provider", PROVIDERS)
def test_parser(provider):
    module = registry.parser_module(provider)
    assert callable(module.parse)
    assert registry.parser_for(provider) is module.parse


@pytest.mark.parametrize("provider", PROVIDERS)
def test_parser_tests_and_real_fixtures(provider):
    assert (ROOT / "tests" / f"test_parser_{provider}.py").is_file()
    raw = FIXTURES / "raw" / provider
    files = sorted(p for p in raw.iterdir() if p.is_file()) if raw.is_dir() else []
    assert files, f"no real captures under {raw}"
    sources = (FIXTURES / "SOURCES.md").read_text()
    unnamed = [p.name for p in files if f"fixtures/raw/{provider}/{p.name}" not in sources]
    assert not unnamed, f"not in tests/fixtures/SOURCES.md: {unnamed}"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_archived_snapshots_in_the_manifest(provider):
    rows = manifest_rows(provider)
    assert rows, f"{provider}: no row in snapshots/manifest.csv"
    for r in rows:
        body = (ROOT / r["file"]).read_bytes()
        assert r["file"].startswith(f"tests/fixtures/raw/{provider}/"), r["file"]
        day = parse_timestamp(r["captured_at"]).astimezone(dt.UTC).date()
        warc = archive_path(ROOT / "snapshots", provider, day)
        assert warc.is_file(), f"{r['file']}: no archive {warc}"
        sha = hashlib.sha256(body).hexdigest()
        assert any(c.url == r["url"] and c.sha256 == sha for c in read_captures(warc)), (
            f"{r['file']} is not archived in {warc}")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_wayback_urls(provider):
    urls = registry.wayback_urls(provider)
    assert urls
    assert all(urlsplit(u).scheme in ("https", "http") and urlsplit(u).netloc for u in urls)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_reference_tables_are_declared_and_sourced(provider):
    decl = registry.declaration(provider)
    package = PROVIDER_DIR / provider
    assert sorted(p.name for p in package.glob("*.csv")) == sorted(decl.tables)
    for name in decl.tables:
        with (package / name).open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert rows, f"{name} is empty"
        assert all(r.get("source") for r in rows), f"{name}: a row without a source"


def test_node_shapes():
    shapes = registry.node_shapes()
    assert shapes
    for provider, sizes in shapes.items():
        assert provider in PROVIDERS
        assert sizes == tuple(sorted(set(sizes))) and sizes[0] >= 1
        assert registry.declaration(provider).node_shapes.source


def test_crawl_cadence():
    """Marketplaces and spot feeds are crawled hourly, list-price pages daily; a declaration
    that is not daily says why (docs/providers.md, "Crawl cadence")."""
    decls = registry.declarations().values()
    assert all(p.cadence in registry.CADENCES for p in decls)
    assert {p.id for p in decls if p.supply == "marketplace"} <= set(registry.hourly())
    assert set(registry.hourly()) == {"vast", "hyperbolic", "lium", "gpuai", "azure"}
    for provider in registry.hourly():
        text = (PROVIDER_DIR / provider / "__init__.py").read_text()
        assert "# Hourly:" in text, provider
    assert registry.cadence("ecb") == "daily"
    with pytest.raises(ValueError, match="cadence 'weekly'"):
        registry.Provider("x", "X", "gpu_cloud", "own", "s", "p", cadence="weekly")


def test_no_provider_module_at_the_old_locations():
    """Provider code lives in its package; spiders/parsers and spiders/sources keep only the
    shared machinery (and the ECB rates, which are not a provider)."""
    assert sorted(p.name for p in (SPIDERS / "parsers").glob("*.py")) == ["__init__.py",
                                                                         "_util.py"]
    assert sorted(p.name for p in (SPIDERS / "sources").glob("*.py")) == ["__init__.py",
                                                                         "ecb.py"]
    assert not list(SPIDERS.glob("*.csv"))
    assert not list(SPIDERS.glob("history_*.py"))
    assert not {p.stem for p in SPIDERS.glob("*.py")} & set(PROVIDERS)
