"""Offer identity (warehouse/identity.py): one definition for the gates, the warehouse and
quarantine releases; the gates and the warehouse group real captures the same way."""

import collections
import dataclasses
import datetime as dt
import json
import re

import duckdb
import pytest

from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import gates
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import list_archives
from gpuprices.spiders.importer import import_capture, parse_timestamp
from gpuprices.warehouse import db, identity
from gpuprices.warehouse.contract import CaptureMeta, make_offer, offers_to_table
from tests.conftest import ROOT, manifest_rows

DAY = dt.date(2026, 9, 29)
META = CaptureMeta("gcp", "https://example.test/prices",
                   dt.datetime.combine(DAY, dt.time(2), dt.UTC))

EXTRAS = [
    None,
    {},
    {"source": "api"},
    {"source": "api", "provider_term": "Low Priority"},
    {"source": "page", "tier": "On-demand"},
    {"source": "page", "tier": "X", "provider_term": "X"},
    {"source": "page", "provider_term": "X"},
    {"source": "page", "price_kind": "from"},
    {"source": "page", "gcp_model": "dws_flex_start"},
    {"offer_key": "k", "tier": ""},
    {"tier": None, "provider_term": "Spot"},
    {"offer_key": 1, "tier": True, "price_kind": 1.5},
    {"offer_key": ["a", 1], "provider_term": {"b": 2}},
    {"gcp_model": dt.date(2026, 1, 2)},
    {"gpu_wording": "not a key"},
]


def _row(extra) -> dict:
    return {"provider": "gcp", "sku": "a3-highgpu-8g", "region": "us-central1",
            "gpu_model": "H100-SXM-80GB", "gpu_count": 8.0, "pricing_model": "on_demand",
            "commitment_months": None, "effective_from": None, "currency": "USD",
            "extra": None if extra is None else json.dumps(extra, sort_keys=True, default=str)}


def test_the_variant_sql_gives_the_python_variant():
    con = duckdb.connect()
    texts = [_row(e)["extra"] for e in EXTRAS]
    sql = f"SELECT {identity.variant_sql('e')} FROM unnest(?) WITH ORDINALITY AS t(e, n)"  # noqa: S608
    got = [r[0] for r in con.execute(f"{sql} ORDER BY n", [texts]).fetchall()]
    assert got == [identity.of_row(_row(e)).variant for e in EXTRAS]
    # Where a price was read is not part of it (identity VERSION 3).
    assert got[:4] == ["", "", "", "Low Priority"]


def test_one_offer_whatever_source_it_was_read_from():
    # GCP's a2-highgpu-1g spot in us-central1 as the 2026-07-30 history export and the
    # 2026-10-05 pricing page give it (extra as their parsers write it).
    hist = _row({"derived": True, "provider_term": "Spot", "source": "history"})
    page = _row({"column": "Current Spot pricing (USD)", "provider_term": "Spot",
                 "source": "page"})
    assert identity.of_row(hist) == identity.of_row(page)
    assert identity.of_row(_row({"source": "api"})) != identity.of_row(hist)
    assert identity.source_rank("api") < identity.source_rank("spot_feed") \
        < identity.source_rank("page") < identity.source_rank("history") \
        < identity.source_rank("derived") < identity.source_rank("wayback")


def test_one_variant_text_per_combination_of_keys():
    idents = {identity.of_row(_row(e)) for e in EXTRAS}
    assert len({i.variant for i in idents}) == len(idents)
    # ... so a warehouse row (variant, no extra) gives back the identity.
    for i in idents:
        assert identity.of_row(dict(zip(identity.STORED, i.stored(), strict=True))) == i


def test_an_offer_and_its_lake_row_have_one_identity():
    for extra in EXTRAS[1:]:
        o = make_offer(META, sku="a3-highgpu-8g", region="us-central1",
                       gpu_model="H100-SXM-80GB", gpu_count=8, price_per_hour=88.49,
                       pricing_model="on_demand", extra=extra)
        (row,) = offers_to_table([o]).to_pylist()
        assert identity.of_offer(o) == identity.of_row(row)


def test_a_record_by_name_round_trips_through_json():
    o = make_offer(META, sku="gpu-h100", region="eu-north1", gpu_model="H100-SXM-80GB",
                   gpu_count=1, price_per_hour=4.5, pricing_model="on_demand",
                   effective_from=dt.date(2026, 10, 1), extra={"source": "page", "tier": "t"})
    ident = identity.of_offer(o)
    rec = json.loads(json.dumps(identity.to_record(ident)))
    assert rec["sku"] == "gpu-h100" and rec["effective_from"] == "2026-10-01"
    assert rec["tier"] == "t" and rec["offer_key"] is None
    assert identity.from_record(rec) == ident


def test_records_positional_before_names_decode_in_their_old_order():
    # What `quarantine release` wrote before identities were stored by name: the gates' tuple
    # (no provider, no gpu_count), extra keys source, variant, price_kind, provider_term, tier.
    old = ["ND96isr_H100_v5", "eastus", "H100-SXM-80GB", "spot", None, "2026-10-01", "USD",
           "api", None, None, "Low Priority", None]
    ident = identity.from_positional_v1(json.loads(json.dumps(old)), "azure")
    assert ident == identity.from_record({
        "provider": "azure", "sku": "ND96isr_H100_v5", "region": "eastus",
        "gpu_model": "H100-SXM-80GB", "pricing_model": "spot",
        "effective_from": "2026-10-01", "currency": "USD", "source": "api",
        "provider_term": "Low Priority"})
    assert ident.gpu_count is None and ident.effective_from == dt.date(2026, 10, 1)


def test_released_reads_old_positional_and_new_named_records(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", archive_root=tmp_path / "snap").ensure()
    o = make_offer(META, sku="a3-highgpu-8g", region="us-central1", gpu_model="H100-SXM-80GB",
                   gpu_count=8, price_per_hour=88.49, pricing_model="on_demand",
                   extra={"source": "page"})
    new = dataclasses.replace(o, sku="a3-megagpu-8g", price_per_hour=93.4,
                              price_per_gpu_hour=93.4 / 8)
    path = pipeline.releases_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    old_tuple = [o.sku, o.region, o.gpu_model, o.pricing_model, None, None, "USD", "page",
                 None, None, None, None]
    lines = [{"date": DAY.isoformat(), "provider": "gcp", "identity": old_tuple,
              "price_per_hour": 88.49},
             {"date": DAY.isoformat(), "provider": "gcp",
              "identity": identity.to_record(identity.of_offer(new)), "price_per_hour": 93.4},
             {"date": DAY.isoformat(), "provider": "aws", "identity": old_tuple,
              "price_per_hour": 88.49}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"cut short')
    ref = gates.Reference(released=pipeline._released(settings, "gcp", DAY))
    assert len(ref.released) == 2
    assert gates.is_released(ref, identity.of_offer(o), 88.49)
    assert gates.is_released(ref, identity.of_offer(new), 93.4)
    assert not gates.is_released(ref, identity.of_offer(o), 93.4)


@pytest.mark.parametrize("key", ["offer_key", "gcp_model", "tier", "price_kind"])
def test_rows_told_apart_by_a_variant_key_are_two_offers_for_gates_and_warehouse(key):
    rows = [make_offer(META, sku="a3-highgpu-8g", region="us-central1",
                       gpu_model="H100-SXM-80GB", gpu_count=8, price_per_hour=p,
                       pricing_model="on_demand", extra={"source": "page", **extra})
            for p, extra in ((88.49, {}), (40.32, {key: "second"}))]
    out = gates.run_gates(rows)
    assert out.bad == [] and len(out.good) == 2
    con = db.connect(":memory:")
    db.init_schema(con)
    db.load_partition(con, DAY, "gcp", offers_to_table(out.good))
    assert con.execute("SELECT count(*) FROM offer_ids").fetchone()[0] == 2


# ---------------------------------------------------------------------------------------------
# Real captures: the gates and the warehouse group offers the same way

# Providers whose captures list one SKU several times, told apart by variant keys; and the
# variants each must show, so the test keeps exercising them.
PROVIDERS = ("azure", "lambda", "nebius", "runpod", "gcp", "vast", "hyperbolic", "together")
EXPECTED_VARIANTS = {
    "azure": {"", "Spot", "Low Priority"},
    "lambda": {"|On-demand", "1-Click Clusters||||||2 weeks – 1 year|16"},
    "nebius": {"", "||from"},
    "gcp": {"", "|||dws_flex_start", "|||resource_cud", "|||flexible_cud"},
    # marketplace books (spiders/marketplace.py): three figures of one book, three offers
    "vast": {"|||||min", "|||||p25", "|||||median"},
    "hyperbolic": {"|||||min", "|||||p25", "|||||median"},
    "together": {"", "Reserved 7-30 days", "Reserved 31-90 days", "Reserved 91-180 days"},
}


@pytest.fixture(scope="module")
def real_days(tmp_path_factory):
    """Each provider-day of the bundled real captures, parsed as the nightly run parses it:
    (day, provider, parsed offers). Two days hold one offer from two sources, as a night that
    reads both would: Runpod's API answer is also filed on the day of its 2023 pricing page
    (whose SKUs are the API's GPU ids), GCP's billing-API capture on the day of its pricing
    page."""
    root = tmp_path_factory.mktemp("real") / "snapshots"
    for p in PROVIDERS:
        for r in manifest_rows(p):
            import_capture(root, ROOT / r["file"], p, r["url"], parse_timestamp(r["captured_at"]),
                           method=r["method"], origin=r["origin"])
    for p, api_url, page_file in (("runpod", "graphql", "nextdata"),
                                  ("gcp", "cloudbilling", "gpu-price-index")):
        api = next(r for r in manifest_rows(p) if api_url in r["url"])
        page = next(r for r in manifest_rows(p) if page_file in r["file"])
        import_capture(root, ROOT / api["file"], p, api["url"],
                       parse_timestamp(page["captured_at"]) + dt.timedelta(minutes=5),
                       method=api["method"], origin=api["origin"])
    return [(d, p, pipeline.parse_archive(path, p).offers) for d, p, path in list_archives(root)]


def test_gates_and_warehouse_group_real_captures_the_same_way(real_days):
    con = db.connect(":memory:")
    db.init_schema(con)
    seen_variants: dict[str, set[str]] = collections.defaultdict(set)
    superseded: dict[str, list[str]] = collections.defaultdict(list)
    for day, provider, offers in real_days:
        out = gates.run_gates(offers)
        checked = [o for o in offers if gates.schema_problem(o) is None and o.gpu_model]
        # The gates hold back exactly the rows whose identity was already read that day ...
        held = [(o, r) for o, r in out.bad if r.startswith(("duplicate", "superseded"))]
        assert len(held) == len(checked) - len({identity.of_offer(o) for o in checked})
        # ... and none of these real pages lists one identity twice.
        assert not [o for o, r in held if r.startswith("duplicate")], (day, provider)
        superseded[provider] += [r for o, r in held]
        db.load_partition(con, day, provider, offers_to_table(out.good))
        ours = {identity.of_offer(o) for o in out.good}
        stored = {identity.of_row(r) for r in db.query(
            con, "SELECT * FROM offer_ids WHERE offer_no IN (SELECT offer_no FROM offer_points "
            "WHERE snapshot_date = ? AND provider = ?)", [day, provider]).to_pylist()}
        assert stored == ours, (day, provider)
        assert {i.variant for i in ours} == {i.variant for i in stored}
        seen_variants[provider] |= {i.variant for i in ours}
    for provider, expected in EXPECTED_VARIANTS.items():
        assert expected <= seen_variants[provider], provider
    # The combined days list one offer from the API and from the page: it is one offer at the
    # API's price, the page's row superseded with both prices named. Before identity VERSION 3
    # these were two offers with two histories. Runpod: 33 rows on both (27 before its GeForce
    # wordings were mapped), most at other prices (2026 API, 2023 page: H100 SXM secure 3.49 vs
    # 4.49); GCP: 5 A2 types in us-central1, at one price.
    got = {p: rs for p, rs in superseded.items() if rs}
    assert {p: len(rs) for p, rs in got.items()} == {"runpod": 33, "gcp": 5}
    assert all(re.fullmatch(r"superseded: same offer read from the api at [\d.]+; "
                            r"page said [\d.]+", r) for rs in got.values() for r in rs)
    assert ("superseded: same offer read from the api at 3.49; page said 4.49"
            in got["runpod"])
    # One price per offer per day reached the warehouse: no "change" within one day.
    twice = con.execute("SELECT count(*) FROM price_changes WHERE old_date = new_date").fetchone()
    assert twice[0] == 0
