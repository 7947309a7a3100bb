"""One package per provider: `spiders/providers/<id>/`.

`__init__.py` declares the provider (`PROVIDER`, a `gpuprices.spiders.registry.Provider`: name,
kind, its modules, reference tables, Wayback pricing URLs and node shapes); `source.py` is the
fetch plan; `parser.py` turns archived bytes into offers; a provider with more to read keeps its
helpers (offer-file streaming, reference tables as CSV with a source per row, history importers)
beside them. Shared machinery stays outside: `gpuprices.spiders.sources.RequestSpec`,
`gpuprices.spiders.parsers` (ParseError, the parse dispatch, `_util`), the crawler and the archive.
The registry (`gpuprices.spiders.registry`) finds every package here.
"""
