"""Together AI parser on the real pricing-page excerpt (values from ../shared/PROVIDERS_MORE.md,
read off the saved bytes)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gpuprices.flows.pipeline import gates
from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.providers.together import source
from gpuprices.spiders.providers.together.parser import column, parse
from gpuprices.warehouse.contract import CaptureMeta

RAW = Path(__file__).parent / "fixtures" / "raw" / "together" / "cgi_together_pricing_excerpt.html"
META = CaptureMeta(provider="together", url=source.PRICING_URL,
                   captured_at=dt.datetime(2026, 8, 22, 12, tzinfo=dt.UTC))


def rows():
    out = {}
    for o in parse(RAW.read_bytes(), META):
        key = (o.sku, o.pricing_model, o.commitment_months)
        assert key not in out, f"duplicate row {key}"  # the hidden table is not read again
        out[key] = o
    return out


@pytest.mark.parametrize(("sku", "model", "prices"), [
    ("HGX H100", "H100-SXM-80GB", (3.99, 3.69, 3.45, 3.19)),
    ("HGX H200", "H200-141GB", (5.99, 4.99, 4.15, 3.99)),
    ("HGX B200", "B200-180GB", (8.19, 7.99, 7.79, 6.79)),
])
def test_on_demand_and_reserved_per_gpu_hour(sku, model, prices):
    r = rows()
    keys = [(sku, "on_demand", None), (sku, "reserved", 1), (sku, "reserved", 3),
            (sku, "reserved", 6)]
    assert tuple(r[k].price_per_hour for k in keys) == prices
    assert all(r[k].gpu_model == model and r[k].gpu_count == 1 for k in keys)
    assert r[(sku, "reserved", 1)].extra["provider_term"] == "Reserved 7-30 days"
    assert r[(sku, "reserved", 3)].extra["term_days"] == [31, 90]


def test_no_inference_prices_no_dashes_no_contact_us():
    r = rows()
    assert len(r) == 12
    # Dedicated Inference's HGX H100 $5.49 / HGX B200 $8.99 are not GPU rental
    assert not {5.49, 8.99} & {o.price_per_hour for o in r.values()}
    assert not any("NVL72" in sku or "B300" in sku for sku, _, _ in r)


def test_every_row_passes_the_gates():
    out = gates.run_gates(list(rows().values()))
    assert out.bad == [] and len(out.good) == 12


def test_columns():
    assert column("Pay as you go") == ("on_demand", None, None)
    assert column("91-180 days") == ("reserved", 6, [91, 180])
    assert column("181+ days") == ("reserved", None, [181])
    assert column("Hardware") is None


def test_bad_input():
    text = RAW.read_text()
    with pytest.raises(ParseError, match="no id=\"gpu-clusters\" anchor"):
        parse(text.replace('id="gpu-clusters"', 'id="x"').encode(), META)
    cut = text[:text.index('id="gpu-clusters"')] + 'id="gpu-clusters"></div>' + \
        text[text.index('id="sandbox"'):]
    with pytest.raises(ParseError, match="no visible table"):
        parse(cut.encode(), META)
