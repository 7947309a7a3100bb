"""The report shows the network of each recommended offer ("Where to rent this week"), on the
real W41 data (tests/conftest.py: w41_settings)."""

import datetime as dt
from pathlib import Path

import pytest

from reports import build, render
from sizing.workload import load_workloads
from warehouse import db

WORKLOADS = Path(__file__).parents[1] / "sizing" / "workloads.toml"


@pytest.fixture(scope="module")
def w41(w41_settings):
    c = db.connect(w41_settings.db_path, read_only=True)
    try:
        return build.build_report(c, "2026-W41", "EUR", load_workloads(WORKLOADS),
                                  now=dt.datetime(2026, 10, 12, 6, tzinfo=dt.UTC))
    finally:
        c.close()


def test_each_choice_shows_its_network(w41, w41_settings):
    rows = w41.headline.rows
    assert rows and all(r["network"] for r in rows)
    con = db.connect(w41_settings.db_path, read_only=True)
    try:
        for r in rows:  # the label is the view's, offer by offer
            (label,) = con.execute("SELECT net_label FROM offer_network WHERE provider = ? AND "
                                   "sku = ?", [r["provider"], r["sku"]]).fetchone()
            assert r["network"] == label
    finally:
        con.close()
    md = render.render_markdown(w41)
    head = md.split("## Where to rent this week", 1)[1].split("## Workloads", 1)[0]
    assert "| GPUs | network |" in head
    assert any(r["network"] in head for r in rows)


def test_multi_node_choices_name_their_fabric(w41):
    cpt = [r for r in w41.headline.rows if r["workload"] == "cpt-llama3.1-70b-64gpu"]
    assert cpt and all(r["nodes"] > 1 for r in cpt)
    for r in cpt:
        fast = any(f in r["network"] for f in ("InfiniBand", "RoCE", "EFA", "GPUDirect"))
        warned = any("no fast fabric" in x or "publishes no fabric" in x for x in r["reasons"])
        assert fast != warned, r
