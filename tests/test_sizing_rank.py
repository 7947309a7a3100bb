"""Ranking with a small synthetic offer list (no DuckDB). Rows come priced in the ranking
currency, with the warehouse's firm_price verdict, as offers_priced_as_of gives them."""

import json
import math

import pytest

from gpuprices.sizing.fit import measured_margin
from gpuprices.sizing.memory import estimate_memory
from gpuprices.sizing.rank import rank
from gpuprices.sizing.workload import workload_from_dict
from gpuprices.spiders import registry


def _offer(sku, gpu, count, price, pricing="on_demand", cur="USD", **kw):
    o = dict(provider="p", sku=sku, region="r", gpu_model=gpu, gpu_count=count,
             price_per_hour=price, currency=cur, pricing_model=pricing,
             billing_increment_s=1, min_billing_s=None, extra="{}")
    o.update(kw)
    return o


QLORA_70B = workload_from_dict(dict(
    name="q70", model="Llama 3.1 70B", method="qlora", grad_checkpointing=True, seq_len=2048,
    optimizer="paged_adamw_8bit", tokens=2e7, checkpoint_every_tokens=2e6))

OFFERS = [
    _offer("h100", "H100-SXM-80GB", 1, 3.00),
    _offer("h100-cheap", "H100-SXM-80GB", 1, 2.00),
    _offer("a100", "A100-SXM-80GB", 1, 1.50),
    _offer("l4", "L4-24GB", 1, 0.40),            # cheapest, does not fit
    _offer("h100-spot", "H100-SXM-80GB", 1, 1.00, "spot",
           extra=json.dumps({"interruption_band": "<5%"})),
    _offer("slice", "L4-24GB", 0.5, 0.2),
    # The warehouse had no rate to convert this one: no price, and it says which currency.
    _offer("eur", "H100-SXM-80GB", 1, None, price_currency="EUR"),
    _offer("mystery", "X1000", 1, 0.1),
]


def test_ranking_order_and_verdicts():
    rows = rank([QLORA_70B], OFFERS)["q70"]
    ok = [r for r in rows if r.verdict == "ok"]
    costs = [r.cost_per_checkpoint for r in ok]
    assert costs == sorted(costs)
    assert ok[0].sku == "h100-spot"  # cheapest per checkpoint even with rework
    assert "spot risk: <5% per node (AWS Spot Instance Advisor band" in ok[0].reason
    skus = [r.sku for r in ok]
    assert skus.index("h100-cheap") < skus.index("h100")
    by = {r.sku: r for r in rows}
    assert by["l4"].verdict == "no_fit" and "does not fit" in by["l4"].reason
    assert by["slice"].verdict == "slice"
    assert by["mystery"].verdict == "unknown_gpu"
    assert by["eur"].verdict == "no_fx"
    assert rows.index(by["l4"]) > rows.index(ok[-1])  # non-fitting after every fitting one
    assert "headroom" in by["h100"].reason and by["h100"].headroom_gb > 0


def test_same_gpu_cost_scales_with_price():
    rows = {r.sku: r for r in rank([QLORA_70B], OFFERS)["q70"]}
    a, b = rows["h100"], rows["h100-cheap"]
    assert a.tokens_per_s == b.tokens_per_s
    gpu_a = a.inputs["gpu_cost_to_finish"]
    gpu_b = b.inputs["gpu_cost_to_finish"]
    assert gpu_a / gpu_b == 1.5


def test_prices_come_converted_and_dataframe_input():
    import pandas as pd  # here: ~0.4 s to import, for the one test that uses it

    # 1 EUR = 1.10 USD: the warehouse priced a 1.80 EUR offer at 1.98 USD (fx_factor).
    converted = _offer("eur", "H100-SXM-80GB", 1, 1.80 * 1.10, price_currency="EUR", fx=1.10)
    offers = [o for o in OFFERS if o["sku"] != "eur"] + [converted]
    rows = {r.sku: r for r in rank([QLORA_70B], pd.DataFrame(offers))["q70"]}
    assert rows["eur"].verdict == "ok"
    assert math.isclose(rows["eur"].price_per_hour, 1.80 * 1.10)
    assert rows["eur"].inputs["price_currency"] == "EUR"
    assert rows["eur"].inputs["fx_factor"] == 1.10
    # Unconverted rows (None, NaN in a DataFrame) cannot be priced.
    missing = {r.sku: r for r in rank([QLORA_70B], pd.DataFrame(OFFERS))["q70"]}["eur"]
    assert missing.verdict == "no_fx" and "EUR -> USD" in missing.reason
    # In EUR, the USD cost constants need the warehouse's USD -> EUR factor.
    in_eur = [dict(o, currency="EUR") for o in offers]
    ranked = {r.sku: r for r in rank([QLORA_70B], in_eur, "EUR", usd_to_currency=1 / 1.1)["q70"]}
    assert ranked["h100"].verdict == "ok" and ranked["h100"].currency == "EUR"
    no_usd = {r.sku: r for r in rank([QLORA_70B], in_eur, "EUR")["q70"]}
    assert no_usd["h100"].verdict == "no_fx" and "USD -> EUR" in no_usd["h100"].reason
    # A row still in another currency is never ranked as if it were converted.
    raw = {r.sku: r for r in rank([QLORA_70B], OFFERS, "EUR", usd_to_currency=0.9)["q70"]}
    assert raw["h100"].verdict == "no_fx"


def test_nodes_added_until_sharded_workload_fits():
    w = workload_from_dict(dict(name="big", model="Llama 3.1 70B", method="full",
                                precision="bf16-mixed", sharding="fsdp",
                                grad_checkpointing=True, seq_len=4096, tokens=1e8,
                                checkpoint_every_tokens=1e7))
    # across nodes only on a cluster: an offer with a published RDMA fabric
    (r,) = rank([w], [_offer("8x", "H100-SXM-80GB", 8, 24.0, net_fabric="InfiniBand",
                             net_fabric_gbps_per_gpu=400.0)])["big"]
    assert r.verdict == "ok" and r.nodes >= 2 and r.gpus == r.nodes * 8
    assert "nodes" in r.reason


def test_poor_pcie_scaling_is_named():
    w = workload_from_dict(dict(name="full8", model="Llama 3.1 8B", method="full",
                                sharding="fsdp", gpus=8, grad_checkpointing=True,
                                seq_len=1024, micro_batch=1, tokens=1e8,
                                checkpoint_every_tokens=1e7))
    (r,) = rank([w], [_offer("l40s", "L40S-48GB", 8, 10.0)])["full8"]
    assert "pcie across 8 GPUs" in r.reason


def test_top_k():
    out = rank([QLORA_70B], OFFERS, top=2)["q70"]
    # The two cheapest are the best spot and the best on-demand offer: no choice lies below.
    assert len(out) == 2 and {r.choice for r in out} == {"spot", "on_demand"}


def test_single_gpu_pods_across_nodes_use_ethernet_and_say_so():
    w = workload_from_dict(dict(name="full8", model="Llama 3.1 8B", method="full",
                                sharding="fsdp", gpus=8, grad_checkpointing=True,
                                seq_len=4096, micro_batch=2, tokens=1e8,
                                checkpoint_every_tokens=1e7))
    rows = rank([w], [_offer("pod", "H100-SXM-80GB", 1, 2.0),
                      _offer("hgx", "H100-SXM-80GB", 8, 16.0)])["full8"]
    pods, board = sorted(rows, key=lambda r: r.sku != "pod")
    assert pods.nodes == 8 and board.nodes == 1
    assert "multi-node across 8 GPUs (8 nodes)" in pods.reason
    assert pods.tokens_per_s < board.tokens_per_s / 2
    assert pods.cost_per_checkpoint > board.cost_per_checkpoint


def test_top_k_is_the_head_of_the_full_ranking():
    many = [_offer(f"o{i}", g, c, 0.5 + i * 0.37 % 5, pm)
            for i, (g, c, pm) in enumerate(
                [(g, c, pm) for g in ("H100-SXM-80GB", "A100-SXM-80GB", "L40S-48GB",
                                      "H200-141GB", "L4-24GB")
                 for c in (1, 2, 8) for pm in ("on_demand", "spot")])]
    full = [r.sku for r in rank([QLORA_70B], many)["q70"]]
    head = [r.sku for r in rank([QLORA_70B], many, top=7)["q70"]]
    assert head[:7] == full[:7]


def test_placeholder_prices_rank_after_trusted_offers():
    offers = [_offer("placeholder", "H100-SXM-80GB", 1, 0.5, firm_price=False,
                     price_caveat="price flagged by the parser as a likely placeholder"),
              _offer("real", "H100-SXM-80GB", 1, 2.5),
              _offer("l4", "L4-24GB", 1, 0.1)]
    rows = rank([QLORA_70B], offers)["q70"]
    assert [r.sku for r in rows] == ["real", "placeholder", "l4"]
    assert rows[1].verdict == "not_firm" and "placeholder" in rows[1].reason
    assert rows[1].firm is False and rows[1].choice is None and rows[0].choice == "on_demand"
    assert [r.sku for r in rank([QLORA_70B], offers, top=2)["q70"]] == ["real", "placeholder"]


def test_from_prices_rank_after_firm_prices():
    # Nebius' preemptible table prints "from $0.79": a floor of a dynamic price, not a quote.
    offers = [_offer("floor", "H100-SXM-80GB", 1, 0.79, firm_price=False,
                     price_caveat="a 'from' price: the floor of a dynamic price"),
              _offer("firm", "H100-SXM-80GB", 1, 2.5)]
    rows = rank([QLORA_70B], offers)["q70"]
    assert [r.sku for r in rows] == ["firm", "floor"]
    assert rows[1].verdict == "not_firm" and "'from' price" in rows[1].reason


FULL_8B_8GPU = workload_from_dict(dict(
    name="f8", model="Llama 3.1 8B", method="full", precision="bf16-mixed", sharding="fsdp",
    gpus=8, seq_len=4096, micro_batch=2, grad_checkpointing=True, tokens=1e9,
    checkpoint_every_tokens=1e8))


def test_per_gpu_prices_are_bought_as_multi_gpu_nodes_where_the_provider_sells_them():
    # Runpod quotes one GPU's price and sells Pods of up to 8 GPUs (its declaration's node_shapes):
    # the 8-GPU job is one 8-GPU node at 8 x the price, not eight 1-GPU pods over Ethernet.
    runpod = _offer("H100 SXM/secure", "H100-SXM-80GB", 1, 2.69, provider="runpod")
    other = _offer("h100.1x", "H100-SXM-80GB", 1, 2.69, provider="elsewhere")
    rows = {r.provider: r for r in rank([FULL_8B_8GPU], [runpod, other],
                                        node_shapes=registry.node_shapes())["f8"]}
    assert (rows["runpod"].gpus_per_node, rows["runpod"].nodes) == (8, 1)
    assert rows["runpod"].price_per_hour == pytest.approx(8 * 2.69)
    assert "priced per GPU: a 8-GPU node" in rows["runpod"].reason
    assert (rows["elsewhere"].gpus_per_node, rows["elsewhere"].nodes) == (1, 8)
    # Same GPUs and price per GPU-hour: the single node is faster, so cheaper per checkpoint.
    assert rows["runpod"].cost_per_checkpoint < rows["elsewhere"].cost_per_checkpoint


def test_a_job_that_fits_one_gpu_buys_one_gpu_from_a_per_gpu_price():
    (row,) = rank([QLORA_70B], [_offer("H100 SXM/secure", "H100-SXM-80GB", 1, 2.69,
                                       provider="runpod")],
                  node_shapes=registry.node_shapes())["q70"]
    assert (row.gpus_per_node, row.nodes, row.price_per_hour) == (1, 1, 2.69)


def test_node_shapes_can_be_given():
    offer = _offer("H100 SXM/secure", "H100-SXM-80GB", 1, 2.69, provider="runpod")
    (row,) = rank([FULL_8B_8GPU], [offer], node_shapes={"runpod": [4, 1]})["f8"]
    assert (row.gpus_per_node, row.nodes) == (4, 2)
    assert "sells nodes of 1, 4 GPUs" in row.reason
    (alone,) = rank([FULL_8B_8GPU], [offer], node_shapes={})["f8"]
    assert (alone.gpus_per_node, alone.nodes) == (1, 8)


def test_a_row_without_firm_price_counts_as_firm_whatever_its_extra_says():
    offer = _offer("h100", "H100-SXM-80GB", 1, 2.5,
                   extra=json.dumps({"suspect_placeholder": True}))
    (row,) = rank([QLORA_70B], [offer])["q70"]
    assert row.verdict == "ok"


ONE_GPU_QLORA = workload_from_dict(dict(
    name="q8", model="Llama 3.1 8B", method="qlora", grad_checkpointing=True, seq_len=2048,
    optimizer="paged_adamw_8bit", gpus=1, tokens=1.5e7, checkpoint_every_tokens=1.5e6))


def test_a_node_bigger_than_the_job_is_priced_whole_and_said_so():
    (row,) = rank([ONE_GPU_QLORA], [_offer("8x", "H100-SXM-80GB", 8, 24.0)])["q8"]
    assert (row.gpus_per_node, row.nodes, row.gpus) == (8, 1, 1)
    assert row.price_per_hour == 24.0
    assert "8-GPU node priced whole for a 1-GPU job" in row.reason
    # the same job on one GPU of the same kind: same speed, an eighth of the price
    (one,) = rank([ONE_GPU_QLORA], [_offer("1x", "H100-SXM-80GB", 1, 3.0)])["q8"]
    assert one.tokens_per_s == row.tokens_per_s
    assert one.cost_to_finish < row.cost_to_finish / 4


def test_max_gpus_lets_the_job_scale_out_and_no_further():
    scaled = workload_from_dict(dict(
        name="q8", model="Llama 3.1 8B", method="qlora", grad_checkpointing=True,
        seq_len=2048, optimizer="paged_adamw_8bit", gpus=1, max_gpus=4, tokens=1.5e7,
        checkpoint_every_tokens=1.5e6))
    (row,) = rank([scaled], [_offer("8x", "H100-SXM-80GB", 8, 24.0)])["q8"]
    assert row.gpus == 4 and "priced whole for a 4-GPU job (max_gpus 4" in row.reason
    (small,) = rank([ONE_GPU_QLORA], [_offer("8x", "H100-SXM-80GB", 8, 24.0)])["q8"]
    assert row.tokens_per_s > 3 * small.tokens_per_s


def test_stale_rows_are_listed_apart_never_chosen():
    import datetime as dt
    offers = [_offer("old", "H100-SXM-80GB", 1, 0.9, is_stale=True,
                     snapshot_date=dt.date(2026, 1, 9), age_days=275),
              _offer("fresh", "H100-SXM-80GB", 1, 2.5, snapshot_date=dt.date(2026, 9, 29),
                     age_days=12)]
    rows = rank([QLORA_70B], offers)["q70"]
    assert [r.sku for r in rows] == ["fresh", "old"]
    assert rows[0].choice == "on_demand" and rows[0].age_days == 12
    assert rows[1].verdict == "stale" and rows[1].choice is None
    assert rows[1].reasons[0].startswith("stale: snapshot of 2026-01-09 (275 d old)")


def test_committed_choice_is_paid_for_its_term_and_says_how_much_it_uses():
    offers = [_offer("od", "H100-SXM-80GB", 1, 3.0),
              _offer("1y", "H100-SXM-80GB", 1, 1.5, "committed", commitment_months=12)]
    rows = {r.sku: r for r in rank([QLORA_70B], offers)["q70"]}
    od, cud = rows["od"], rows["1y"]
    assert cud.inputs["gpu_cost_to_finish"] == pytest.approx(1.5 * 12 * 730)
    assert cud.cost_to_finish > od.cost_to_finish  # a year paid for an 8-hour job
    assert "12-month commitment paid whole: 8,760 h per node; the job uses" in cud.reason
    # so it is not the committed choice: the row says which term would pay, from what usage
    # (compare's break-even: 1.5 x 730 h / 3.0 = 365 GPU-hours a month)
    assert (od.choice, cud.choice) == ("on_demand", None)
    assert cud.choice_note.startswith("no commitment pays for a run this size")
    assert "a 12-month term (p 1y, 1.50 USD per GPU-hour) pays from 365 GPU-hours a month" \
        in cud.choice_note


def test_spot_rate_scales_with_nodes_in_the_ranking():
    w = workload_from_dict(dict(name="f16", model="Llama 3.1 8B", method="full",
                                precision="bf16-mixed", sharding="fsdp", gpus=16,
                                seq_len=4096, micro_batch=2, grad_checkpointing=True,
                                tokens=1e9, checkpoint_every_tokens=1e8))
    rows = rank([w, FULL_8B_8GPU], [_offer("8x", "H100-SXM-80GB", 8, 10.0, "spot")])
    two, one = rows["f16"][0], rows["f8"][0]
    assert (two.nodes, one.nodes) == (2, 1)
    assert two.inputs["preemptions_per_hour"] == pytest.approx(
        2 * one.inputs["preemptions_per_hour"])
    assert "x 2 node(s)" in two.reason and "assumed: 15%/day" in two.reason


LORA_32B = workload_from_dict(dict(
    name="l32", model="Qwen2.5 32B", method="lora", precision="bf16-true", framework="hf",
    optimizer="adamw", seq_len=2048, micro_batch=1, grad_checkpointing=True, lora_rank=16,
    lora_targets="all", gpus=1, tokens=2e7, checkpoint_every_tokens=2e6))


def test_tight_offers_are_ranked_flagged_and_a_fitting_one_is_the_choice():
    """32B LoRA (issue 13): tight on 80 GB cards, fits on an H200. The tight rows rank by cost
    with the risk as their first reason; the headline choice is the fitting H200 although a
    tight H100 is cheaper; with no fitting offer of a kind, the tight one is chosen."""
    offers = [_offer("h100", "H100-SXM-80GB", 1, 2.00),
              _offer("h200", "H200-141GB", 1, 3.50),
              _offer("h100-spot", "H100-SXM-80GB", 1, 1.00, "spot"),
              _offer("l40s", "L40S-48GB", 1, 0.80)]
    by = {r.sku: r for r in rank([LORA_32B], offers)["l32"]}
    h100, h200 = by["h100"], by["h200"]
    assert h100.verdict == "ok" and h100.fit_verdict == "tight" and h100.fits
    margin = f"error margin {measured_margin().margin:.1%}"
    assert h100.reasons[0].startswith("tight: estimate ") and margin in h100.reasons[0]
    assert h100.headroom_gb < 0 < h100.capacity_gb - h100.per_gpu_gb
    assert h200.fit_verdict == "fits" and "headroom" in h200.reasons[0]
    assert h100.cost_per_checkpoint < h200.cost_per_checkpoint
    assert h200.choice == "on_demand" and h100.choice is None
    assert by["h100-spot"].choice == "spot"  # tight, and no spot offer of this job fits
    assert by["l40s"].verdict == "no_fit" and by["l40s"].fit_verdict == "no"
    assert "the estimate alone is" in by["l40s"].reason


def test_layout_prefers_fits_over_tight_and_keeps_tight_over_nothing():
    """A sharded 70B that is tight on one 8 x 80 GB node and fits on two buys two; capped at
    one node (max_gpus 8), it runs tight on one rather than not at all."""
    base = dict(name="s", model="Llama 3.1 70B", method="full", precision="bf16-true",
                sharding="fsdp", grad_checkpointing=True, optimizer="adamw", seq_len=1024,
                micro_batch=1, tokens=1e8, checkpoint_every_tokens=1e7)
    w = workload_from_dict(base)
    one, two = (estimate_memory(w, gpus=n, capacity_gb=80) for n in (8, 16))
    assert (one.verdict, two.verdict) == ("tight", "fits"), (one.per_gpu_gb, two.per_gpu_gb)
    (free,) = rank([w], [_offer("8x", "H100-SXM-80GB", 8, 24.0)])["s"]
    assert free.nodes == 2 and free.fit_verdict == "fits"
    capped = workload_from_dict(dict(base, max_gpus=8))
    (r,) = rank([capped], [_offer("8x", "H100-SXM-80GB", 8, 24.0)])["s"]
    assert r.nodes == 1 and r.fit_verdict == "tight" and r.verdict == "ok"
