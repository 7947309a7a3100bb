"""The network of each offer: warehouse/offer_networks.csv checked, loaded and matched to the
real bundled offers (w41_settings), and the view rank reads carrying it."""

import csv
import datetime as dt

import pytest

from gpuprices.warehouse import db, networks
from gpuprices.warehouse.contract import PROVIDERS


@pytest.fixture(scope="module")
def w41(w41_settings):
    c = db.connect(w41_settings.db_path, read_only=True)
    yield c
    c.close()


def _net(con, provider, sku):
    return con.execute("SELECT net_intra_node, net_intra_node_gbs, net_fabric, "
                       "net_fabric_gbps_per_gpu, net_label, net_source FROM latest_offer_networks "
                       "WHERE provider = ? AND sku = ? LIMIT 1", [provider, sku]).fetchone()


def test_every_row_is_checked_and_cited():
    rows = networks.offer_networks()
    assert len(rows) >= 30
    assert {r.provider for r in rows} <= set(PROVIDERS)
    assert all(r.source for r in rows)
    assert {"InfiniBand", "EFA", "RoCE"} <= {r.fabric for r in rows}


def test_a_bad_row_names_itself(tmp_path, monkeypatch):
    bad = tmp_path / "offer_networks.csv"
    with networks.NETWORKS_CSV.open() as fh:
        header = next(csv.reader(fh))
    bad.write_text(",".join(header) + "\naws,^p5,NVSwitch,900,Myrinet,400,somewhere\n")
    monkeypatch.setattr(networks, "NETWORKS_CSV", bad)
    networks.offer_networks.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"row 2 \('aws', '\^p5'\): fabric"):
            networks.offer_networks()
    finally:
        networks.offer_networks.cache_clear()


def test_published_fabrics_match_the_real_offers(w41):
    # AWS P5: 3,200 Gbps EFA for 8 GPUs; Azure ND H100 v5: 400 Gb/s InfiniBand per GPU.
    assert _net(w41, "aws", "p5.48xlarge")[:4] == ("NVSwitch", 900.0, "EFA", 400.0)
    assert _net(w41, "azure", "Standard_ND96isr_H100_v5")[2:4] == ("InfiniBand", 400.0)
    assert _net(w41, "gcp", "a3-megagpu-8g")[2:4] == ("GPUDirect-TCPXO", 200.0)
    b200 = _net(w41, "lambda", "1-Click Cluster NVIDIA HGX B200")
    assert b200[4] == "NVSwitch 1800 GB/s; InfiniBand 400 Gb/s/GPU"
    assert "docs.lambda.ai" in b200[5]


def test_a_family_without_a_published_figure_is_unknown(w41):
    # Lambda's on-demand 8-GPU VMs: NVSwitch inside, no cluster fabric published for them.
    assert _net(w41, "lambda", "8x NVIDIA H100 SXM 80 GB")[2:5] == (
        "unknown", None, "NVSwitch; fabric unknown")
    sku = w41.execute("SELECT sku FROM latest_offers WHERE provider = 'vast' LIMIT 1").fetchone()
    assert _net(w41, "vast", sku[0])[4] == "network unknown"


def test_each_offer_has_one_network(w41):
    n, distinct = w41.execute(
        "SELECT count(*), count(DISTINCT (provider, sku)) FROM offer_network").fetchone()
    assert n == distinct > 0
    assert w41.execute("SELECT count(*) FROM latest_offers").fetchone() == w41.execute(
        "SELECT count(*) FROM latest_offer_networks").fetchone()


def test_rank_reads_the_network(w41):
    rows = w41.execute(
        "SELECT provider, sku, net_fabric, net_fabric_gbps_per_gpu FROM "
        "offers_priced_as_of(?, 'USD') WHERE provider = 'azure' AND sku LIKE 'Standard_ND96isr%'",
        [dt.date(2026, 10, 11)]).fetchall()
    assert rows and all(r[2] == "InfiniBand" and r[3] == 400.0 for r in rows)
