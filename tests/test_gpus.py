import csv

import pytest

from gpuprices.warehouse.gpus import ALIASES_CSV, canonical_gpu, gpu_models, normalise


def test_every_gpu_row_has_memory_and_a_source():
    models = gpu_models()
    assert "H100-SXM-80GB" in models and models["H100-SXM-80GB"].memory_gb == 80
    assert models["H100-SXM-80GB"].bf16_dense_tflops == 989
    for m in models.values():
        assert m.memory_gb > 0 and m.source.strip(), m.gpu_model


def test_every_alias_names_a_known_model_with_a_source():
    with ALIASES_CSV.open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for r in rows:
        assert r["gpu_model"] in gpu_models() and r["source"].strip(), r


@pytest.mark.parametrize(
    ("wording", "memory", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", 80, "H100-SXM-80GB"),
        ("NVIDIA A100-SXM4-40GB", 40, "A100-40GB"),
        ("A100 SXM", 40, "A100-40GB"),  # Lambda lists 40 and 80 GB under one plan name
        ("A100 SXM", 80, "A100-SXM-80GB"),
        ("HGX H100", None, "H100-SXM-80GB"),
        ("AMD Instinct MI300X OAM", 192, "MI300X-192GB"),
        ("NVIDIA H200 NVL", 143, "H200-NVL-141GB"),
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 96, "RTX-PRO-6000-96GB"),
    ],
)
def test_known_wordings_map(wording, memory, expected):
    assert canonical_gpu(wording, memory) == expected


@pytest.mark.parametrize(
    ("wording", "memory"),
    [
        ("NVIDIA GeForce RTX 2070", 8),  # not in gpus.csv: quarantined, not guessed
        ("H100", None),  # bare H100 could be SXM, PCIe or NVL
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb", 24),  # a slice
        ("unknown", 0),
        ("", None),
        ("NVIDIA H100 80GB HBM3", 40),  # stated memory contradicts the model
    ],
)
def test_unknown_or_contradictory_wordings_do_not_map(wording, memory):
    assert canonical_gpu(wording, memory) is None


def test_normalise_ignores_order_vendor_and_punctuation():
    assert normalise("NVIDIA A100-SXM4-80GB") == normalise("A100 80 GB SXM")
