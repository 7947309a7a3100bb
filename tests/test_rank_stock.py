"""Stock in the ranking: a known sold-out offer (`available` false) is listed apart as "sold out
at snapshot", never a choice; unknown stock (None) is ranked as before. Synthetic offer rows, as
offers_priced_as_of hands them over (the parsers' stock is tested on the real captures in
test_parser_runpod.py and the other parser tests)."""

import datetime as dt

from gpuprices.sizing.rank import rank
from gpuprices.sizing.workload import workload_from_dict

QLORA_70B = workload_from_dict(dict(
    name="q70", model="Llama 3.1 70B", method="qlora", grad_checkpointing=True, seq_len=2048,
    optimizer="paged_adamw_8bit", tokens=2e7, checkpoint_every_tokens=2e6))


def _offer(sku, price, available, pricing="on_demand"):
    return dict(provider="p", sku=sku, region="r", gpu_model="H100-SXM-80GB", gpu_count=1,
                price_per_hour=price, currency="USD", pricing_model=pricing,
                billing_increment_s=1, min_billing_s=None, extra="{}", available=available,
                snapshot_date=dt.date(2026, 8, 25), age_days=3)


def test_sold_out_offer_is_listed_apart_and_never_chosen():
    offers = [_offer("gone", 1.0, False), _offer("unknown", 2.0, None),
              _offer("in-stock", 2.5, True)]
    rows = rank([QLORA_70B], offers)["q70"]
    by = {r.sku: r for r in rows}
    assert by["unknown"].choice == "on_demand" and by["unknown"].verdict == "ok"
    assert by["in-stock"].verdict == "ok" and by["in-stock"].available is True
    gone = by["gone"]
    assert gone.verdict == "sold_out" and gone.choice is None and gone.available is False
    assert gone.reasons[0].startswith("sold out at snapshot: the source listed no stock "
                                      "(snapshot of 2026-08-25 (3 d old))")
    # Cheapest, but after every recommendable row.
    assert [r.sku for r in rows] == ["unknown", "in-stock", "gone"]


def test_sold_out_spot_leaves_the_spot_choice_to_the_next_in_stock():
    offers = [_offer("od", 3.0, True), _offer("spot-gone", 0.5, False, "spot"),
              _offer("spot-ok", 0.9, True, "spot")]
    rows = rank([QLORA_70B], offers)["q70"]
    assert {r.choice: r.sku for r in rows if r.choice} == {"on_demand": "od", "spot": "spot-ok"}
