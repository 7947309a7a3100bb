"""Verda parser on the real JSON-LD capture of verda.com/pricing (values as in
../shared/PROVIDERS_MORE.md, read off the saved bytes) and bad input derived from it."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from gpuprices.spiders.parsers import ParseError, parse_body
from gpuprices.spiders.providers.verda import source
from gpuprices.spiders.providers.verda.parser import parse
from gpuprices.warehouse import identity
from gpuprices.warehouse.contract import CaptureMeta

CAPTURE = Path(__file__).parent / "fixtures" / "raw" / "verda" / "cgi_verda_pricing_jsonld.html"
URL = "https://verda.com/pricing"


def meta() -> CaptureMeta:
    return CaptureMeta(provider="verda", url=URL,
                       captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def rows():
    offers = parse_body(CAPTURE.read_bytes(), meta())
    out = {}
    for o in offers:
        key = (o.sku, o.pricing_model, o.extra.get("provider_term"))
        assert key not in out, f"two rows for {key}"
        out[key] = o
    return out


def test_on_demand_and_spot_per_gpu(rows):
    h100 = rows[("1x H100 SXM5 80GB", "on_demand", None)]
    assert h100.price_per_hour == 3.25 and h100.gpu_count == 1
    assert h100.gpu_model == "H100-SXM-80GB" and h100.currency == "USD"
    assert rows[("1x H100 SXM5 80GB", "spot", None)].price_per_hour == 1.625
    assert rows[("1x B300 SXM6 268GB", "on_demand", None)].price_per_hour == 7.5
    assert rows[("1x B300 SXM6 268GB", "on_demand", None)].gpu_model == "B300-288GB"
    assert rows[("1x B200 SXM6 180GB", "on_demand", None)].price_per_hour == 6.11
    assert rows[("1x H200 SXM5 141GB", "on_demand", None)].price_per_hour == 4


def test_gb300_is_not_b300(rows):
    gb300 = rows[("1x GB300 SXM6 288GB", "on_demand", None)]
    assert gb300.gpu_model == "GB300" and gb300.price_per_hour == 8.62


def test_unit_of_n_gpus_from_the_name(rows):
    cluster = rows[("104x B300 SXM6 268GB", "on_demand", "instant cluster")]
    assert cluster.gpu_count == 104 and cluster.price_per_hour == 780
    assert cluster.price_per_gpu_hour == pytest.approx(7.5)
    serverless = rows[("8x B200 SXM6 180GB", "on_demand", "serverless continuous")]
    assert serverless.gpu_count == 8 and serverless.price_per_hour == 53.77
    assert serverless.price_per_gpu_hour == pytest.approx(53.77 / 8)
    assert rows[("1x B300 SXM6 268GB", "spot", "serverless spot")].price_per_hour == 4.13


def test_confidential_variant_and_repeats(rows):
    cc = rows[("1x B200 CC SXM6 180GB", "on_demand", None)]
    assert cc.gpu_model == "B200-180GB" and cc.price_per_hour == 6.232
    assert cc.extra["confidential_computing"] is True
    # The two identical "1x H100 SXM5 80GB on-demand" offers are one row.
    assert rows[("1x H100 SXM5 80GB", "on_demand", None)].extra["listed"] == 2


def test_cpu_instances_and_storage_give_no_rows(rows):
    text = CAPTURE.read_text()
    assert '"name":" on-demand"' in text and '"unitText":"GiB-month"' in text
    assert all(o.gpu_model for o in rows.values())
    assert len(rows) == 18
    assert len({identity.of_offer(o) for o in rows.values()}) == len(rows)


def test_same_name_at_two_prices_stays_two_offers():
    text = CAPTURE.read_text()
    # The second H100 on-demand node at another price (a derived bad input).
    changed = re.sub(r'(#offer-\d+","@type":"Offer","name":"1x H100 SXM5 80GB on-demand"'
                     r'[^}]*?"price":)3\.25', r"\g<1>3.35", text, count=1)
    assert changed != text
    offers = [o for o in parse(changed.encode(), meta())
              if o.sku == "1x H100 SXM5 80GB" and o.pricing_model == "on_demand"]
    assert sorted(o.price_per_hour for o in offers) == [3.25, 3.35]
    assert len({identity.of_offer(o) for o in offers}) == 2


def test_currency_is_read_per_offer():
    text = CAPTURE.read_text().replace('"priceCurrency":"USD"', '"priceCurrency":"EUR"')
    assert {o.currency for o in parse(text.encode(), meta())} == {"EUR"}


def test_bad_input_is_a_clear_error():
    with pytest.raises(ParseError, match="verda: https://verda.com/pricing: unknown layout"):
        parse(b"<html><body><p>Pricing</p></body></html>", meta())
    only_storage = {"@graph": [{"@type": "Offer", "name": "NVMe storage", "price": 0.2,
                                "priceCurrency": "USD",
                                "priceSpecification": {"unitText": "GiB-month"}}]}
    body = f'<script type="application/ld+json">{json.dumps(only_storage)}</script>'
    with pytest.raises(ParseError, match="none is an hourly GPU price"):
        parse(body.encode(), meta())
    with pytest.raises(ParseError, match="not valid JSON"):
        parse(b'<script type="application/ld+json">{"@graph": [</script>', meta())


def test_fetch_plan():
    (spec,) = source.start_requests({})
    assert spec.url == URL and spec.method == "GET" and not spec.browser
