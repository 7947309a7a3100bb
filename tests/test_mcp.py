"""`gpuprices mcp` driven by the mcp package's own stdio client over the bundled warehouse:
the tools are listed with typed arguments, and cheapest_now for the H100 answers the row the
warehouse's cheapest_now view holds."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest

from gpuprices.warehouse import db
from tests.bundled_warehouse import GROUP, bundled_settings

pytestmark = GROUP  # one bundled warehouse per run (tests/bundled_warehouse.py)

H100 = "H100-SXM-80GB"
TOOLS = {"cheapest_now", "offers_now", "offer_history", "price_changes", "price_index",
         "stale_providers", "rank"}


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return bundled_settings(tmp_path_factory)


def _ask(settings, calls):
    # Imported here, not at the top: the mcp package takes ~1.6 s to import, which every
    # xdist worker would pay at collection for the one that runs these tests.
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def go():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "gpuprices", "mcp", "--data-dir",
                                          str(settings.data_dir)], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                results = [await session.call_tool(name, args) for name, args in calls]
                return tools, results
    return anyio.run(go)


def _rows(result):
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content["result"]
    return json.loads(result.content[0].text)


def test_lists_tools_and_answers_the_cheapest_h100(settings):
    tools, (on_demand, everything, bad) = _ask(settings, [
        ("cheapest_now", {"gpu_model": H100, "pricing_model": "on_demand"}),
        ("cheapest_now", {"gpu_model": H100}),
        ("cheapest_now", {"gpu_model": H100, "pricing_model": "hourly"}),
    ])
    assert {t.name for t in tools} == TOOLS
    schema = next(t for t in tools if t.name == "cheapest_now").input_schema
    assert {"gpu_model", "pricing_model", "provider", "limit"} <= set(schema["properties"])
    con = db.connect(settings.db_path, read_only=True)
    try:
        cur = con.execute("SELECT provider, sku, region, price_per_gpu_hour_usd, "
                          "snapshot_date::VARCHAR FROM cheapest_now WHERE gpu_model = ? "
                          "AND pricing_model = 'on_demand'", [H100])
        want = cur.fetchall()
        n_models = con.execute("SELECT count(*) FROM cheapest_now WHERE gpu_model = ?",
                               [H100]).fetchone()[0]
    finally:
        con.close()
    got = _rows(on_demand)
    assert [(r["provider"], r["sku"], r["region"], r["price_per_gpu_hour_usd"],
             r["snapshot_date"]) for r in got] == want
    assert len(_rows(everything)) == n_models > 1
    assert bad.is_error  # a pricing model the tool's type does not allow


def test_history_and_rank_tools(settings):
    _, (hist, ranked) = _ask(settings, [
        ("offer_history", {"provider": "lambda", "sku": "8x NVIDIA H100 SXM 80 GB",
                           "pricing_model": "on_demand"}),
        ("rank", {"workload": {"name": "ft", "model": "Llama 3.1 8B", "method": "qlora",
                               "tokens": 15_000_000, "checkpoint_every_tokens": 1_500_000},
                  "top": 3}),
    ])
    assert [r["price_per_gpu_hour"] for r in _rows(hist)] == [2.99, 3.99]
    rows = _rows(ranked)
    assert rows and {r["workload"] for r in rows} == {"ft"}
