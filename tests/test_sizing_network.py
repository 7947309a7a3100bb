"""Multi-node sizing over each offer's published network (sizing/network.py), on the real
bundled offers of 2026-10-11 (tests/conftest.py: w41_settings) and the bundled workloads."""

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.sizing import network
from gpuprices.sizing.rank import rank
from gpuprices.sizing.workload import load_workloads
from gpuprices.spiders import registry
from gpuprices.warehouse import db

WORKLOADS = Path(__file__).parents[1] / "sizing" / "workloads.toml"
CPT = "cpt-llama3.1-70b-64gpu"  # 64 GPUs: 8 nodes of 8


@pytest.fixture(scope="module")
def offers(w41_settings):
    con = db.connect(w41_settings.db_path, read_only=True)
    try:
        return con.execute("SELECT * FROM offers_priced_as_of(?, 'USD')",
                           [dt.date(2026, 10, 11)]).df().to_dict("records")
    finally:
        con.close()


@pytest.fixture(scope="module")
def cpt():
    return [w for w in load_workloads(WORKLOADS) if w.name == CPT]


def _one(offers, provider, sku, pricing="on_demand"):
    return next(o for o in offers if o["provider"] == provider and o["sku"] == sku
                and o["pricing_model"] == pricing)


def _row(workloads, offer):
    (row,) = rank(workloads, [offer], node_shapes=registry.node_shapes())[CPT]
    return row


def test_fast_fabric_is_timed_at_its_published_bandwidth(offers, cpt):
    p5 = _row(cpt, _one(offers, "aws", "p5.48xlarge"))
    assert p5.nodes == 8 and p5.network == "NVSwitch 900 GB/s; EFA 400 Gb/s/GPU"
    assert any("8 nodes" in r and "over 50 GB/s per GPU" in r for r in p5.reasons)  # 400 / 8
    assert not any("fast fabric" in r or "publishes no fabric" in r for r in p5.reasons)
    a3 = _row(cpt, _one(offers, "gcp", "a3-highgpu-8g"))
    # GPUDirect-TCPX 100 Gb/s per GPU: a quarter of p5's, and it scales worse
    assert any("8 nodes" in r and "over 12.5 GB/s per GPU" in r for r in a3.reasons)
    assert a3.inputs["scaling_efficiency"] < p5.inputs["scaling_efficiency"]


def test_nodes_over_ethernet_say_so_and_scale_worse(offers, cpt):
    a2 = _one(offers, "gcp", "a2-ultragpu-8g")
    slow = _row(cpt, a2)
    assert slow.network == "NVSwitch 600 GB/s; Ethernet"
    assert any(r.startswith("spans 8 nodes over Ethernet, no fast fabric") for r in slow.reasons)
    # The same offer had it InfiniBand at 200 Gb/s per GPU: faster, and no warning.
    fast = _row(cpt, dict(a2, net_fabric="InfiniBand", net_fabric_gbps_per_gpu=200.0))
    assert fast.tokens_per_s > slow.tokens_per_s
    assert fast.inputs["scaling_efficiency"] > slow.inputs["scaling_efficiency"]
    assert not any("fast fabric" in r for r in fast.reasons)


def test_unknown_fabric_across_nodes_says_what_it_assumed(offers, cpt):
    row = _row(cpt, _one(offers, "vast", "H100 SXM/8x"))
    assert row.network == "network unknown"
    assert any("publishes no fabric for this offer: timed at an assumed 400 Gb/s" in r
               for r in row.reasons)


def test_one_node_jobs_give_no_fabric_reason(offers):
    eight = [w for w in load_workloads(WORKLOADS) if w.name == "full-llama3.1-8b-8gpu"]
    (row,) = rank(eight, [_one(offers, "vast", "H100 SXM/8x")])["full-llama3.1-8b-8gpu"]
    assert row.nodes == 1 and not any("fabric" in r for r in row.reasons)


def test_a_row_without_network_columns_is_unknown():
    net = network.of_offer({"provider": "x"})
    assert (net.fabric, net.label, network.internode_gbs(net, 8)) == (
        "unknown", "network unknown", None)
    eth = network.of_offer({"net_fabric": "Ethernet", "net_fabric_gbps_per_gpu": float("nan")})
    assert network.internode_gbs(eth, 8) == pytest.approx(25 / 8 / 8)
