"""gpuprices: GPU cloud price snapshots, a DuckDB price warehouse and cost-per-checkpoint sizing.

The code lives in the repository's top-level folders, installed as sub-packages of this one
(pyproject.toml maps them): `gpuprices.spiders` (crawl and parse), `gpuprices.warehouse` (the
offer contract, the lake, DuckDB), `gpuprices.sizing` (the sizing engine), `gpuprices.reports`
(the weekly report) and `gpuprices.flows` (the pipeline, its Prefect flows and the command line).
"""

__version__ = "0.1.0"
