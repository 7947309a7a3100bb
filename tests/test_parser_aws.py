"""AWS parsers on the real captures in tests/fixtures/raw/aws/ (values read off the files)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from gpuprices.spiders.archive import Capture
from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.parsers import wants as wants_any
from gpuprices.spiders.providers.aws import source as aws_source
from gpuprices.spiders.providers.aws.history import captures_from_p5_series
from gpuprices.spiders.providers.aws.offer_csv import parse_offer_csv
from gpuprices.spiders.providers.aws.offer_file import parse_offer_json
from gpuprices.spiders.providers.aws.parser import (
    attach_interruption_bands,
    interruption_bands,
    iter_offer_file,
    parse,
    wants,
)
from gpuprices.spiders.providers.aws.tables import instance_table
from gpuprices.warehouse.contract import CaptureMeta
from gpuprices.warehouse.gpus import gpu_models

RAW = Path(__file__).parent / "fixtures" / "raw" / "aws"
P4D = RAW / "opencost_offer_slice_us-east-1_p4d_20240528.json"
USE2 = RAW / "opencost_offer_slice_us-east-2_20230322.json"
CNW1 = RAW / "opencost_offer_slice_cn-northwest-1_CNY_20230314.json"
FEED = RAW / "gpu-price-index_aws.json"
SPOTJS = RAW / "spotinfo_legacy_spot-js_payload_20210406.json"
ADVISOR = RAW / "spotinfo_spot-advisor-data_20250628.json"
SERIES = RAW / "amorton45_p5.48xlarge_us-east-1_ondemand_daily_2025-04_2026-08.csv"

OFFER_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{}/index.json"


def meta(url: str, when: dt.datetime | None = None) -> CaptureMeta:
    return CaptureMeta(provider="aws", url=url,
                       captured_at=when or dt.datetime(2024, 5, 28, 20, 35, 22, tzinfo=dt.UTC))


def by_sku(offers, sku, region=None, model="on_demand"):
    found = [o for o in offers if o.sku == sku and o.pricing_model == model
             and (region is None or o.region == region)]
    assert len(found) == 1, found
    return found[0]


# -- mapping table ----------------------------------------------------------------------------


def test_instance_table_models_exist_and_every_row_has_a_source():
    table = instance_table()
    known = gpu_models()
    for row in table.values():
        assert row.source.strip()
        assert row.gpu_model is None or row.gpu_model in known
    assert table["p5en.48xlarge"].gpu_model == "H200-141GB"  # AWS Price List says "NVIDIA"
    assert table["p4d.24xlarge"].gpu_count == 8
    assert table["g6f.large"].gpu_count == 0.125


# -- offer files ----------------------------------------------------------------------------


def test_p4d_offer_file_on_demand_and_capacity_block_dropped():
    stats = Counter()
    offers = parse_offer_json(P4D.read_bytes(), meta(OFFER_URL.format("us-east-1")), stats)
    assert len(offers) == 1
    o = offers[0]
    assert (o.sku, o.region, o.pricing_model) == ("p4d.24xlarge", "us-east-1", "on_demand")
    assert o.price_per_hour == pytest.approx(32.7726)
    assert o.gpu_count == 8 and o.gpu_model == "A100-40GB"
    assert o.price_per_gpu_hour == pytest.approx(32.7726 / 8)
    assert o.currency == "USD"
    assert o.effective_from is None  # 2024-05-01 is past: kept in extra, not a future price
    assert o.extra["effective_date"] == "2024-05-01T00:00:00Z"
    assert o.extra["aws_sku"] == "H7NGEAC6UEHNTKSJ"
    assert o.extra["source"] == "api" and o.extra["gpu_wording"] == "NVIDIA A100"
    assert o.extra["publication_date"] == "2024-05-28T20:35:22Z"
    assert o.vcpus == 96 and o.ram_gb == 1152
    # the Capacity Block product YSXJGN78QTXNVGDQ is priced $0.00 and is not an offer
    assert stats["skipped_capacity_block"] == 1
    assert all(o.extra["aws_sku"] != "YSXJGN78QTXNVGDQ" for o in offers)


def test_parse_dispatches_offer_file_and_parse_body_accepts_it():
    offers = parse_body(P4D.read_bytes(), meta(OFFER_URL.format("us-east-1")))
    assert [o.price_per_hour for o in offers] == [pytest.approx(32.7726)]


def test_offer_file_streams_from_a_file_object():
    with P4D.open("rb") as fh:
        offers = list(iter_offer_file(fh, meta(OFFER_URL.format("us-east-1"))))
    assert [o.sku for o in offers] == ["p4d.24xlarge"]


def test_us_east_2_windows_byol_p3_excluded():
    stats = Counter()
    body = USE2.read_bytes()
    # streaming: the only GPU product, p3.8xlarge Windows BYOL at $12.24, is not a default offer
    assert list(iter_offer_file(body, meta(OFFER_URL.format("us-east-2")), stats)) == []
    assert stats["gpu_products"] == 1 and stats["skipped_os"] == 1
    # and the whole-body parser refuses to return an empty list for it
    with pytest.raises(ParseError, match="no default offer"):
        parse(body, meta(OFFER_URL.format("us-east-2")))


def test_upfront_fee_under_on_demand_is_not_an_offer():
    """Mutation of the real us-east-2 slice: make p3.8xlarge a Linux product and move the
    'Upfront Fee' term (unit Quantity, 3yr convertible All Upfront, filed under OnDemand) onto
    it. Only the hourly price may come out."""
    data = json.loads(USE2.read_bytes())
    attrs = data["products"]["9ZEEN7WWWQKAG292"]["attributes"]
    attrs.update(operatingSystem="Linux", licenseModel="No License required",
                 operation="RunInstances")
    fee_terms = data["terms"]["OnDemand"].pop("8D49XP354UEYTHGM")
    data["terms"]["OnDemand"]["9ZEEN7WWWQKAG292"].update(
        {k.replace("8D49XP354UEYTHGM", "9ZEEN7WWWQKAG292"): v for k, v in fee_terms.items()})
    stats = Counter()
    offers = parse_offer_json(json.dumps(data).encode(), meta(OFFER_URL.format("us-east-2")),
                              stats)
    assert [(o.sku, o.price_per_hour, o.gpu_model, o.gpu_count) for o in offers] == [
        ("p3.8xlarge", pytest.approx(12.24), "V100-16GB", 4.0)]
    assert stats["skipped_ondemand_term_attributes"] == 1


def test_reserved_terms_effective_hourly():
    """Mutation of the real p4d slice: the us-east-2 fee term's price dimensions become a
    Reserved 3yr Partial Upfront term of p4d (an Upfront Fee plus an hourly rate)."""
    data = json.loads(P4D.read_bytes())
    fee = json.loads(USE2.read_bytes())["terms"]["OnDemand"]["8D49XP354UEYTHGM"]
    term = next(iter(fee.values()))
    term["termAttributes"]["PurchaseOption"] = "Partial Upfront"
    term["priceDimensions"]["H.X.6YS6EN2CT7"] = {"unit": "Hrs", "rateCode": "H.X.6YS6EN2CT7",
                                                 "pricePerUnit": {"USD": "10.0000000000"}}
    data["terms"]["Reserved"] = {"H7NGEAC6UEHNTKSJ": {"H7NGEAC6UEHNTKSJ.T": term}}
    offers = parse_offer_json(json.dumps(data).encode(), meta(OFFER_URL.format("us-east-1")))
    reserved = [o for o in offers if o.pricing_model == "reserved"]
    assert len(reserved) == 1
    r = reserved[0]
    assert r.commitment_months == 36
    assert r.price_per_hour == pytest.approx(1161 / (3 * 8760) + 10.0, abs=1e-6)
    assert r.extra["purchase_option"] == "Partial Upfront"
    assert r.extra["offering_class"] == "convertible"
    assert r.extra["upfront_fee"] == 1161
    assert r.sku == "p4d.24xlarge convertible Partial Upfront"
    assert by_sku(offers, "p4d.24xlarge").price_per_hour == pytest.approx(32.7726)


def test_china_slice_has_no_gpu_product():
    with pytest.raises(ParseError, match="no GPU instance"):
        parse(CNW1.read_bytes(), meta(OFFER_URL.format("cn-northwest-1")))


def test_cny_currency_kept():
    """The CNY slice holds no GPU product; graft its pricePerUnit shape (CNY) onto the real
    p4d product to check the currency is carried, not converted."""
    data = json.loads(P4D.read_bytes())
    dim = next(iter(next(iter(data["terms"]["OnDemand"]["H7NGEAC6UEHNTKSJ"].values()))
                    ["priceDimensions"].values()))
    dim["pricePerUnit"] = {"CNY": "212.3456000000"}
    data["products"]["H7NGEAC6UEHNTKSJ"]["attributes"]["regionCode"] = "cn-northwest-1"
    offers = parse_offer_json(json.dumps(data).encode(), meta(OFFER_URL.format("cn-northwest-1")))
    assert [(o.currency, o.price_per_hour, o.region) for o in offers] == [
        ("CNY", pytest.approx(212.3456), "cn-northwest-1")]


@pytest.mark.parametrize("path", [P4D, USE2, CNW1])
def test_truncated_offer_file_raises(path):
    body = path.read_bytes()
    with pytest.raises(ParseError, match="truncated"):
        parse(body[: len(body) // 2], meta(OFFER_URL.format("us-east-1")))


def test_offer_file_cut_inside_terms_raises():
    body = P4D.read_bytes()
    cut = body.index(b'"YSXJGN78QTXNVGDQ.JRTCKXETXF"')
    with pytest.raises(ParseError, match="truncated"):
        parse(body[:cut], meta(OFFER_URL.format("us-east-1")))


def test_unknown_gpu_family_in_offer_file_is_quarantined():
    data = json.loads(P4D.read_bytes())
    attrs = data["products"]["H7NGEAC6UEHNTKSJ"]["attributes"]
    attrs["instanceType"] = "p9x.24xlarge"  # a family the table does not know, gpu "8"
    offers = parse_offer_json(json.dumps(data).encode(), meta(OFFER_URL.format("us-east-1")))
    o = by_sku(offers, "p9x.24xlarge")
    assert o.gpu_model is None and o.gpu_count == 8
    assert o.extra["unknown_family"] == "p9x"


def test_offer_csv_variant():
    """The CSV shape (5 preamble rows, header, one row per price dimension, a Reserved term as
    two rows Hrs + Quantity), written from the real p4d and us-east-2 slices' values; the
    us-east-2 fee term is replayed as a Reserved term of p4d."""
    data = json.loads(P4D.read_bytes())
    use2 = json.loads(USE2.read_bytes())
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(["FormatVersion", "v1.0"])
    w.writerow(["Disclaimer", data["disclaimer"]])
    w.writerow(["Publication Date", data["publicationDate"]])
    w.writerow(["Version", data["version"]])
    w.writerow(["OfferCode", "AmazonEC2"])
    cols = {"Instance Type": "instanceType", "Region Code": "regionCode",
            "Location": "location", "vCPU": "vcpu", "Memory": "memory", "GPU": "gpu",
            "Operating System": "operatingSystem", "Tenancy": "tenancy",
            "Pre Installed S/W": "preInstalledSw", "CapacityStatus": "capacitystatus",
            "MarketOption": "marketoption", "operation": "operation"}
    w.writerow(["SKU", "OfferTermCode", "RateCode", "TermType", "PriceDescription",
                "EffectiveDate", "Unit", "PricePerUnit", "Currency", "LeaseContractLength",
                "PurchaseOption", "OfferingClass", *cols])

    def rows(doc, sku, terms, term_type, sku_as=None):
        attrs = doc["products"][sku]["attributes"]
        for term in terms.values():
            ta = term.get("termAttributes") or {}
            for dim in term["priceDimensions"].values():
                currency, price = next(iter(dim["pricePerUnit"].items()))
                w.writerow([sku_as or sku, term["offerTermCode"], dim["rateCode"], term_type,
                            dim["description"], term["effectiveDate"][:10], dim["unit"], price,
                            currency, ta.get("LeaseContractLength", ""),
                            ta.get("PurchaseOption", ""), ta.get("OfferingClass", ""),
                            *[attrs.get(a, "") for a in cols.values()]])

    for doc in (use2, data):
        for sku, terms in doc["terms"]["OnDemand"].items():
            if doc["products"][sku]["productFamily"] == "Compute Instance":
                rows(doc, sku, terms, "OnDemand")
    fee = json.loads(json.dumps(use2["terms"]["OnDemand"]["8D49XP354UEYTHGM"]))
    term = next(iter(fee.values()))
    term["termAttributes"]["PurchaseOption"] = "Partial Upfront"
    term["priceDimensions"]["R.H"] = {"unit": "Hrs", "rateCode": "R.H", "description": "hourly",
                                      "pricePerUnit": {"USD": "10.0000000000"}}
    rows(data, "H7NGEAC6UEHNTKSJ", fee, "Reserved")
    body = out.getvalue().encode()
    stats = Counter()
    offers = parse_offer_csv(body, meta(OFFER_URL.format("us-east-1").replace(".json", ".csv")),
                             stats)
    assert parse(body, meta("https://x/index.csv"))  # dispatched by its preamble
    assert sorted((o.sku, o.pricing_model, round(o.price_per_hour, 4), o.gpu_count)
                  for o in offers) == [
        ("p4d.24xlarge", "on_demand", 32.7726, 8.0),
        ("p4d.24xlarge convertible Partial Upfront", "reserved",
         round(1161 / (3 * 8760) + 10.0, 4), 8.0)]
    # p3.8xlarge Windows BYOL and the Capacity Block product seen and skipped; m5.large ignored
    assert stats["skipped_os"] == 1 and stats["skipped_capacity_block"] == 1
    assert stats["gpu_products"] == 3
    with pytest.raises(ParseError):
        parse_offer_csv(body[: len(body) - 40], meta("https://x/index.csv"))


# -- page feed ----------------------------------------------------------------------------------

FEED_URL = ("https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/"
            "ec2-ondemand-without-sec-sel/US%20East%20(N.%20Virginia)/Linux/index.json")


def test_page_feed():
    offers = parse(FEED.read_bytes(), meta(FEED_URL, dt.datetime(2026, 9, 29, 12, tzinfo=dt.UTC)))
    assert len(offers) == 51
    p5 = by_sku(offers, "p5.48xlarge", "us-east-1")
    assert p5.price_per_hour == pytest.approx(55.04)
    assert p5.gpu_model == "H100-SXM-80GB" and p5.gpu_count == 8
    assert p5.extra["source"] == "page"
    assert by_sku(offers, "p6-b200.48xlarge", "us-east-1").price_per_hour == pytest.approx(
        113.9328)
    p5en = by_sku(offers, "p5en.48xlarge", "us-east-1")
    assert p5en.price_per_hour == pytest.approx(63.296) and p5en.gpu_model == "H200-141GB"
    assert by_sku(offers, "p4d.24xlarge", "us-east-1").price_per_hour == pytest.approx(21.957642)
    assert by_sku(offers, "p6-b300.48xlarge", "us-east-1").price_per_hour == pytest.approx(
        142.416)
    assert by_sku(offers, "p6-b300.48xlarge", "sa-east-1").price_per_hour == pytest.approx(281.13)
    assert by_sku(offers, "g6e.xlarge", "ap-northeast-1").gpu_model == "L40S-48GB"
    assert all(o.region for o in offers)


def test_page_feed_without_entries_raises():
    data = json.loads(FEED.read_bytes())
    for doc in data.values():
        doc["regions"] = {}
    with pytest.raises(ParseError, match="without instance entries"):
        parse(json.dumps(data).encode(), meta(FEED_URL))


# -- spot -----------------------------------------------------------------------------------

SPOT_URL = "http://spot-price.s3.amazonaws.com/spot.js"


def test_legacy_spot_payload():
    offers = parse(SPOTJS.read_bytes(), meta(SPOT_URL, dt.datetime(2021, 4, 6, 12, tzinfo=dt.UTC)))
    p4d = by_sku(offers, "p4d.24xlarge", "us-east-1", "spot")
    assert p4d.price_per_hour == pytest.approx(9.8318)
    assert p4d.gpu_count == 8 and p4d.gpu_model == "A100-40GB"
    assert p4d.extra["spot_region_id"] == "us-east"
    # "N/A*" is no price: us-west has p4d.24xlarge as N/A*
    assert not [o for o in offers if o.sku == "p4d.24xlarge" and o.region == "us-west-1"]
    # only Linux: p4d mswin is N/A*, g4dn.xlarge mswin 0.3418 must not appear
    assert by_sku(offers, "g4dn.xlarge", "us-east-1", "spot").price_per_hour == pytest.approx(
        0.1578)
    assert {o.region for o in offers} <= {"us-east-1", "us-east-2", "us-west-1", "eu-west-1",
                                          "ap-southeast-2"}
    assert all(o.pricing_model == "spot" for o in offers)


def test_legacy_spot_unknown_gpu_family_quarantined():
    offers = parse(SPOTJS.read_bytes(), meta(SPOT_URL))
    g2 = by_sku(offers, "g2.2xlarge", "us-east-1", "spot")  # GRID K520, not in our table
    assert g2.gpu_model is None and g2.extra["unknown_family"] == "g2"


def test_spot_js_with_callback_wrapper():
    body = b"callback(" + SPOTJS.read_bytes() + b");"
    offers = parse(body, meta(SPOT_URL))
    assert by_sku(offers, "p4d.24xlarge", "us-east-1", "spot").price_per_hour == pytest.approx(
        9.8318)
    with pytest.raises(ParseError):
        parse(body[: len(body) // 2], meta(SPOT_URL))


def test_spot_advisor_bands_and_attach():
    url = aws_source.SPOT_ADVISOR
    assert wants(meta(url)) is False
    assert wants_any(meta(url)) is False
    with pytest.raises(ParseError, match="no prices"):
        parse(ADVISOR.read_bytes(), meta(url))
    bands = interruption_bands(ADVISOR.read_bytes())
    assert bands[("us-east-1", "p5.48xlarge")] == {"band": ">20%", "savings_pct": 52}
    assert bands[("us-east-1", "p4d.24xlarge")] == {"band": "10-15%", "savings_pct": 67}
    spot = parse(SPOTJS.read_bytes(), meta(SPOT_URL))
    attach_interruption_bands(spot, bands)
    p4d = by_sku(spot, "p4d.24xlarge", "us-east-1", "spot")
    assert p4d.extra["interruption_band"] == "10-15%"
    assert p4d.extra["spot_savings_pct"] == 67


# -- bad input ----------------------------------------------------------------------------------


def test_empty_and_unknown_bodies():
    with pytest.raises(ParseError, match="empty"):
        parse(b"", meta(SPOT_URL))
    with pytest.raises(ParseError, match="empty"):
        parse_body(b"  \n", meta(SPOT_URL))
    with pytest.raises(ParseError, match="unknown layout"):
        parse(b'{"hello": 1}', meta(SPOT_URL))


def test_wants_index_documents():
    assert wants(meta(aws_source.REGION_INDEX)) is False
    assert wants(meta(f"{aws_source.PRICING}/offers/v1.0/aws/index.json")) is False
    assert wants(meta("https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/"
                      "index.json")) is False
    assert wants(meta(OFFER_URL.format("us-east-1"))) is True
    assert wants(meta(FEED_URL)) is True
    assert wants(meta(aws_source.SPOT_FEED)) is True


# -- history ------------------------------------------------------------------------------------


def test_p5_series_captures_and_the_price_cut():
    caps = captures_from_p5_series(SERIES)
    days = [c.snapshot_date for c in caps]
    assert days == sorted(days) and len(days) == len(set(days))
    assert days[0] == dt.date(2025, 4, 23) and days[-1] == dt.date(2026, 8, 22)
    assert len(caps) == 486  # 500 rows, 13 without a price, 2025-04-23 twice
    prices = {}
    for c in caps:
        assert c.url.startswith("https://raw.githubusercontent.com/amorton45/")
        assert c.origin and "amorton45/aws-gpu-price-tracker" in c.origin
        offers = parse_body(c.body, c.meta())
        assert len(offers) == 1
        o = offers[0]
        assert o.extra["derived"] is True and o.extra["source"] == "history"
        assert (o.sku, o.region, o.gpu_count) == ("p5.48xlarge", "us-east-1", 8.0)
        prices[c.snapshot_date] = o.price_per_hour
    assert prices[dt.date(2025, 6, 4)] == pytest.approx(98.32)
    assert prices[dt.date(2025, 6, 5)] == pytest.approx(55.04)
    changes = [d for d, p in sorted(prices.items())
               if p != prices.get(d - dt.timedelta(days=1), p)]
    assert changes == [dt.date(2025, 6, 5)]
    first = caps[0]
    assert first.body.decode().splitlines() == ["timestamp,instance,price_usd",
                                                "2025-04-23T19:41:48,p5.48xlarge,98.32"]


# -- sources ------------------------------------------------------------------------------------


def test_sources_plan():
    specs = aws_source.start_requests({})
    urls = [s.url for s in specs]
    assert aws_source.REGION_INDEX in urls and aws_source.SPOT_FEED in urls
    assert aws_source.SPOT_ADVISOR in urls
    index = {"regions": {
        "us-east-1": {"regionCode": "us-east-1",
                      "currentVersionUrl": "/offers/v1.0/aws/AmazonEC2/20240528203522/us-east-1/"
                                           "index.json"},
        "eu-west-1": {"regionCode": "eu-west-1",
                      "currentVersionUrl": "/offers/v1.0/aws/AmazonEC2/20240528203522/eu-west-1/"
                                           "index.json"}}}
    cap = Capture(provider="aws", url=aws_source.REGION_INDEX, body=json.dumps(index).encode(),
                  captured_at=dt.datetime(2024, 5, 28, tzinfo=dt.UTC))
    follow = aws_source.follow(cap, {})
    assert [s.url for s in follow] == [OFFER_URL.format("eu-west-1"),
                                       OFFER_URL.format("us-east-1")]
    assert all(s.max_bytes and s.max_bytes >= 2 * 1024**3 for s in follow)
    assert [s.url for s in aws_source.follow(cap, {"AWS_REGIONS": "us-east-1"})] == [
        OFFER_URL.format("us-east-1")]
    assert aws_source.follow(Capture(provider="aws", url=aws_source.SPOT_FEED, body=b"{}",
                                     captured_at=dt.datetime(2024, 5, 28, tzinfo=dt.UTC))) == []


def test_p5_series_in_the_warehouse_offer_history(tmp_path):
    from gpuprices.warehouse import bulk_append, db, store
    from gpuprices.warehouse.contract import offers_to_table

    con = db.connect(tmp_path / "w.duckdb")
    db.init_schema(con)
    # The 486 days in one bulk append (what a replay into a fresh warehouse takes; the same
    # warehouse as day by day: tests/test_bulk_load.py), not 486 transactions.
    with store.transaction(con):
        bulk_append.append_many(con, [
            (cap.snapshot_date, "aws", offers_to_table(parse_body(cap.body, cap.meta())))
            for cap in captures_from_p5_series(SERIES)])
    rows = con.execute(
        "SELECT price_per_hour, valid_from, valid_to FROM offer_history "
        "WHERE provider = 'aws' AND sku = 'p5.48xlarge' AND region = 'us-east-1' "
        "ORDER BY valid_from").fetchall()
    assert rows == [(98.32, dt.date(2025, 4, 23), dt.date(2025, 6, 4)),
                    (55.04, dt.date(2025, 6, 5), dt.date(2026, 8, 22))]


@pytest.mark.parametrize("chunk", [3, 7, 64, 65, 1000])
def test_offer_file_markers_split_across_chunks(monkeypatch, chunk):
    """Key markers ("terms", "OnDemand", "Reserved") falling across read boundaries: the real
    p4d slice with the us-east-2 fee term as a Reserved term, read in tiny chunks."""
    from gpuprices.spiders.providers.aws import offer_stream

    data = json.loads(P4D.read_bytes())
    fee = json.loads(USE2.read_bytes())["terms"]["OnDemand"]["8D49XP354UEYTHGM"]
    data["terms"]["Reserved"] = {"H7NGEAC6UEHNTKSJ": {
        k.replace("8D49XP354UEYTHGM", "H7NGEAC6UEHNTKSJ"): v for k, v in fee.items()}}
    body = json.dumps(data, indent=1).encode()
    expected = [(o.sku, o.pricing_model, o.price_per_hour)
                for o in parse_offer_json(body, meta(OFFER_URL.format("us-east-1")))]
    assert len(expected) == 2
    monkeypatch.setattr(offer_stream, "CHUNK", chunk)
    got = [(o.sku, o.pricing_model, o.price_per_hour)
           for o in parse_offer_json(body, meta(OFFER_URL.format("us-east-1")))]
    assert got == expected
    with pytest.raises(ParseError, match="truncated"):
        parse_offer_json(body[: len(body) * 3 // 4], meta(OFFER_URL.format("us-east-1")))


def test_offer_file_terms_entry_of_another_shape_is_loud():
    """A terms entry whose keys are not "<sku>.<term code>" (the structural scan lost its
    place): refused, never silently read."""
    data = json.loads(P4D.read_bytes())
    entry = data["terms"]["OnDemand"]["H7NGEAC6UEHNTKSJ"]
    data["terms"]["OnDemand"]["H7NGEAC6UEHNTKSJ"] = {"X" + k: v for k, v in entry.items()}
    with pytest.raises(ParseError, match="not a set of terms"):
        parse(json.dumps(data).encode(), meta(OFFER_URL.format("us-east-1")))


def test_offer_file_terms_with_mixed_layout():
    """Valid JSON whose terms are not laid out uniformly (a compact entry between two
    pretty-printed ones, built from the real p4d slice): the GPU entry in the middle must still
    be read, whether the layout shortcut is taken or not."""
    data = json.loads(P4D.read_bytes())
    on_demand = data["terms"]["OnDemand"]
    extra_sku = "ZZZZ2222ZZZZ2222"
    data["products"][extra_sku] = json.loads(json.dumps(data["products"]["YSXJGN78QTXNVGDQ"]))
    data["products"][extra_sku]["sku"] = extra_sku

    def pretty(sku, value):
        return (f'      "{sku}" : ' + json.dumps(value, indent=2).replace("\n", "\n      "))

    terms = (',\n'.join([pretty("YSXJGN78QTXNVGDQ", on_demand["YSXJGN78QTXNVGDQ"])])
             + ',"H7NGEAC6UEHNTKSJ":' + json.dumps(on_demand["H7NGEAC6UEHNTKSJ"]) + ',\n'
             + pretty(extra_sku, {extra_sku + ".JRTCKXETXF": next(iter(
                 on_demand["YSXJGN78QTXNVGDQ"].values()))}))
    head = json.dumps({k: v for k, v in data.items() if k != "terms"}, indent=2)[:-2]
    body = (head + ',\n  "terms" : {\n    "OnDemand" : {\n' + terms + '\n    }\n  }\n}\n').encode()
    json.loads(body)  # valid JSON
    offers = parse_offer_json(body, meta(OFFER_URL.format("us-east-1")))
    assert [(o.sku, o.price_per_hour) for o in offers] == [
        ("p4d.24xlarge", pytest.approx(32.7726))]


def test_pipeline_attaches_the_days_advisor_band_to_spot_offers(tmp_path):
    """Both real captures archived on one day: parse_archive reads the advisor capture (which
    holds no prices) and hands its bands to the spot offers of the same day."""
    from gpuprices.flows.pipeline.steps import parse_archive
    from gpuprices.spiders.archive import append_captures, archive_path

    when = dt.datetime(2025, 6, 28, 2, tzinfo=dt.UTC)
    append_captures(tmp_path, [
        Capture(provider="aws", url=SPOT_URL, body=SPOTJS.read_bytes(), captured_at=when),
        Capture(provider="aws", url=aws_source.SPOT_ADVISOR, body=ADVISOR.read_bytes(),
                captured_at=when + dt.timedelta(minutes=1)),
    ])
    parsed = parse_archive(archive_path(tmp_path, "aws", when.date()), "aws")
    assert parsed.errors == [] and parsed.captures == 1  # the advisor is not a price document
    p4d = by_sku(parsed.offers, "p4d.24xlarge", "us-east-1", "spot")
    assert p4d.extra["interruption_band"] == "10-15%"


def _reference_offers(body: bytes, url: str) -> tuple[list, Counter]:
    """The offers of an offer file by the plain path: the whole file decoded with json.loads,
    every product handed to the same Collector (no raw-byte pre-filter, no structural scan)."""
    from gpuprices.spiders.providers.aws.offer_file import Collector

    data = json.loads(body)
    stats = Counter()
    col = Collector(meta(url), stats)
    col.publication_date, col.version = data.get("publicationDate"), data.get("version")
    for sku, product in data["products"].items():
        col.add_product(sku, product)
    handlers = {"OnDemand": col.on_demand, "Reserved": col.reserved}
    offers = [o for name, section in data["terms"].items() for sku, terms in section.items()
              for o in handlers[name](sku, terms)]
    stats["gpu_products"] = col.gpu_products_seen
    return offers, stats


@pytest.mark.parametrize("path,region,n", [(P4D, "us-east-1", 1), (USE2, "us-east-2", 0)])
@pytest.mark.parametrize("indent", [None, 1, 2])
def test_offer_file_scan_gives_the_offers_of_a_full_decode(path, region, n, indent):
    """The real slices as captured, compact, and re-indented: the streaming parser (products
    pre-filtered on their raw bytes, then scanned) gives exactly the offers and skip counts of a
    full decode (us-east-2's one GPU product is the Windows BYOL p3, skipped for its OS)."""
    body = path.read_bytes() if indent == 2 else json.dumps(
        json.loads(path.read_bytes()), indent=indent).encode()
    url = OFFER_URL.format(region)
    expected, expected_stats = _reference_offers(body, url)
    stats = Counter()
    got = list(iter_offer_file(body, meta(url), stats))
    assert got == expected and len(got) == n
    assert {k: v for k, v in stats.items() if k.startswith("skipped_") or k == "gpu_products"} \
        == expected_stats and stats["gpu_products"] >= 1


def test_raw_gpu_prefilter_never_drops_a_gpu_product():
    """may_be_gpu on each real product's bytes (as captured and compact) agrees with the decoded
    test wherever the decoded test says GPU; a GPU type without a "gpu" attribute, and a "gpu"
    attribute on an unknown type, are both kept."""
    from gpuprices.spiders.providers.aws.offer_file import _gpu_product, may_be_gpu

    products = {}
    for path in (P4D, USE2, CNW1):
        products.update(json.loads(path.read_bytes())["products"])
    p4d = json.loads(json.dumps(products["H7NGEAC6UEHNTKSJ"]))
    p4d["attributes"].pop("gpu")
    products["NOGPUATTR"] = p4d
    other = json.loads(json.dumps(products["H7NGEAC6UEHNTKSJ"]))
    other["attributes"]["instanceType"] = "p9x.24xlarge"
    products["UNKNOWNFAM"] = other
    assert sum(_gpu_product(p["attributes"]) for p in products.values()) >= 4
    for product in products.values():
        for raw in (json.dumps(product).encode(), json.dumps(product, indent=2).encode()):
            if _gpu_product(product["attributes"]):
                assert may_be_gpu(raw, 0, len(raw), b"")
    cpu = json.dumps(products["8D49XP354UEYTHGM"]).encode()  # the real m5.large
    assert not may_be_gpu(cpu, 0, len(cpu), b"")


def test_offer_file_cut_inside_products_raises():
    body = P4D.read_bytes()
    cut = body.index(b'"productFamily"', body.index(b'"products"'))
    with pytest.raises(ParseError, match="truncated"):
        parse(body[:cut], meta(OFFER_URL.format("us-east-1")))
