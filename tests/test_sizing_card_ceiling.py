"""A card's share of its datasheet peak in a plain matmul scales its class's training HFU
(sizing/gemm_ceiling.csv, sizing/efficiency.py card_ceiling)."""

import csv

from gpuprices.sizing.efficiency import (
    GEMM_CSV_PATH,
    REFERENCE_CARD,
    efficiency_for,
    efficiency_table,
    gpu_class,
    matmul_share,
    same_stack_ratio,
)
from gpuprices.warehouse.gpus import gpu_models

GPUS = gpu_models()


def test_every_ceiling_row_names_its_source_and_a_known_card():
    rows = list(csv.DictReader(GEMM_CSV_PATH.open(newline="")))
    assert rows
    for r in rows:
        assert r["source"].strip(), r
        assert r["gpu_model"] in GPUS, r
        assert r["bf16_gemm_tflops"] or r["proxy_of"] in GPUS, r
    assert set(REFERENCE_CARD.values()) <= set(GPUS)


def test_reference_cards_keep_their_class_value():
    """The card a class row was measured on is not rescaled: the calibration is unchanged
    (a card with its own same-stack training rows, sizing/same_stack_ratio.csv, takes those)."""
    table = efficiency_table()
    for cls, card in REFERENCE_CARD.items():
        assert gpu_class(GPUS[card]) == cls
        if same_stack_ratio(card) is None:
            assert efficiency_for(GPUS[card]).hfu == table[(cls, "any")][0]


def test_rtx6000ada_is_not_run_at_the_4090s_share():
    """The 4090 sustains its whole 165 TFLOPS in a matmul, the L40S 269 of 362. The RTX 6000
    Ada (same die as the L40S, 300 W) takes the L40S's training measurement (flagged assumed),
    which sits below even the L40S's matmul share times the 4090's HFU."""
    ada = efficiency_for(GPUS["RTX6000ADA-48GB"])
    l40s = efficiency_for(GPUS["L40S-48GB"])
    ref = efficiency_for(GPUS["RTX4090-24GB"])
    share_l40s, _ = matmul_share("L40S-48GB", GPUS["L40S-48GB"].bf16_dense_tflops)
    share_4090, _ = matmul_share("RTX4090-24GB", GPUS["RTX4090-24GB"].bf16_dense_tflops)
    assert abs(share_l40s - 269.15 / 362) < 1e-3
    assert share_4090 == 164.81 / 165
    assert ada.hfu == l40s.hfu and ada.assumed and not l40s.assumed
    assert ada.hfu < ref.hfu * share_l40s / share_4090
    assert "L40S" in ada.source
    # sustained TFLOPS: the RTX 6000 Ada no longer runs at twice what the 4090 sustained
    assert ada.hfu * GPUS["RTX6000ADA-48GB"].bf16_dense_tflops < 1.7 * ref.hfu * 165.2


def test_cards_without_a_measurement_keep_the_class_value():
    assert efficiency_for(GPUS["L40-48GB"]).hfu == efficiency_table()[("ada", "any")][0]
    assert efficiency_for(GPUS["H100-PCIE-80GB"]).hfu == efficiency_for(GPUS["H100-SXM-80GB"]).hfu


def test_utilisation_grows_with_model_size_between_1b_and_70b_only():
    """PyTorch FSDP blog Table 1: HFU x1.175 (A100) and x1.216 (H100) from 7B to 70B; the
    trend is applied from the size the class was measured at, clamped to 1B-70B."""
    from gpuprices.sizing.efficiency import SIZE_TREND_PER_DECADE, size_factor
    assert abs(SIZE_TREND_PER_DECADE - 0.1955) < 1e-3
    assert size_factor(7e9, "hopper") == (1.0, "")
    up, why = size_factor(70e9, "hopper")
    assert abs(up - (1 + SIZE_TREND_PER_DECADE)) < 1e-9 and "70B" in why
    assert size_factor(400e9, "hopper")[0] == up  # no extrapolation above 70B
    assert size_factor(0.1e9, "hopper")[0] == size_factor(1e9, "hopper")[0] < 1
    # ampere-gddr's A10 value stands at GPT-2 124M (llm.c), taken at 1B: the same lift as Ada's
    assert size_factor(8e9, "ampere-gddr")[0] == size_factor(8e9, "ada")[0] > 1.2
