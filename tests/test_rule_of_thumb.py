"""bench/rule_of_thumb.py: the buyers' rule-of-thumb table against the estimator, cell by cell;
and the target block of bench/sizing_accuracy.py (bench/accuracy_targets.py)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import accuracy_targets  # noqa: E402
import rule_of_thumb as thumb  # noqa: E402
import sizing_accuracy as bench  # noqa: E402

from gpuprices.sizing.fit import VERDICTS  # noqa: E402
from gpuprices.sizing.workload import lookup_model  # noqa: E402
from gpuprices.warehouse.gpus import gpu_models  # noqa: E402

FIXTURE = ROOT / "tests/fixtures/sizing/rule_of_thumb_fit_table.csv"


@pytest.fixture(scope="module")
def cells() -> list[thumb.Cell]:
    return thumb.compare()


def _cell(cells: list[thumb.Cell], card: str, method: str) -> thumb.Cell:
    (cell,) = [c for c in cells if c.card == card and c.method == method]
    return cell


def test_the_script_reads_the_copied_fixture_named_in_sources():
    assert thumb.TABLE == FIXTURE and FIXTURE.exists()
    sources = (ROOT / "tests/fixtures/SOURCES.md").read_text()
    line = next(x for x in sources.splitlines() if "sizing/rule_of_thumb_fit_table.csv" in x)
    assert "planning article" in line
    with FIXTURE.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows == thumb.read_table()
    assert set(thumb.METHOD_COLUMNS.values()) <= set(rows[0])


def test_every_cell_is_compared_on_its_own_card(cells):
    rows = thumb.read_table()
    assert len(cells) == len(rows) * len(thumb.METHOD_COLUMNS)
    gpus = gpu_models()
    for row in rows:
        for method, column in thumb.METHOD_COLUMNS.items():
            c = _cell(cells, row["gpu"], method)
            assert c.capacity_gb == gpus[c.gpu].memory_gb
            # the card the table means: same memory within the 10% canonical_gpu allows
            assert abs(c.capacity_gb - float(row["memory_gb"])) <= 0.1 * float(row["memory_gb"])
            assert c.rule_b == (float(row[column]) if row[column] else None)
            assert bool(c.rule_checks) == (c.rule_b is not None)
            for check in (*c.rule_checks, *c.next_checks):
                assert check.verdict in VERDICTS and check.estimate_gb > 0
            assert c.judgement.startswith(("agree", "disagree"))


def test_the_ladder_is_the_tables_sizes_and_models_named_after_them():
    ladder = thumb.table_sizes(thumb.read_table())
    assert ladder[:3] == [8, 32, 70]
    assert ladder[3] >= 70 * 70 / 32  # the next rung is at least the table's smallest step up
    for size in ladder:
        for arch in thumb.models_of_size(size):
            assert f"{size:g}B" in arch.name


def test_no_70b_lora_on_141_gb_because_its_bf16_weights_alone_fill_the_card(cells):
    """The table's 32B (not 70B) for LoRA on the H200: a bf16 Llama 3.1 70B needs 2 bytes per
    parameter for its frozen weights alone, more than the card holds."""
    c = _cell(cells, "H200", "lora")
    llama3 = lookup_model("Llama 3.1 70B")
    assert 2 * llama3.params / 1e9 > c.capacity_gb
    (check,) = [x for x in c.next_checks if x.model == llama3.name]
    assert check.verdict == "no" and c.agree


def test_empty_full_cells_agree_since_bf16_weights_grads_and_8bit_states_exceed_48_gb(cells):
    """Full fine-tuning with an 8-bit optimizer keeps at least 2 (bf16 weights) + 2 (bf16
    gradients) + 2 (two 1-byte Adam states) bytes per parameter: 6 x 8.03B = 48.2 GB, more than
    any card the table leaves empty."""
    empty = [c for c in cells if c.method == "full_8bit" and c.rule_b is None]
    assert empty
    for c in empty:
        (check,) = c.next_checks
        floor_gb = 6 * lookup_model(check.model).params / 1e9
        assert floor_gb > c.capacity_gb
        assert check.estimate_gb >= floor_gb and check.verdict == "no" and c.agree


def test_the_70b_class_on_48_gb_depends_on_the_vocabulary(cells):
    """The disagreement on 48 GB cards: Llama 2 70B and Llama 3.1 70B share the transformer body
    (same layers and linear parameters), so the whole difference between their QLoRA estimates
    is the vocabulary (32k vs 128k): the embeddings and lm_head PEFT keeps unquantized and the
    logits, at least 2 bytes per element each. The table's "32B" is one answer for both."""
    c = _cell(cells, "L40S", "qlora")
    by_model = {x.model: x for x in c.next_checks}
    l2, l3 = lookup_model("Llama 2 70B"), lookup_model("Llama 3.1 70B")
    assert (l2.num_layers, l2.linear_params_per_layer()) == \
        (l3.num_layers, l3.linear_params_per_layer())
    extra_vocab = l3.vocab_size - l2.vocab_size
    floor_gb = extra_vocab * (2 * l3.hidden_size + thumb.COMMON["seq_len"]) * 2 / 1e9
    diff = by_model[l3.name].estimate_gb - by_model[l2.name].estimate_gb
    assert diff >= floor_gb
    assert by_model[l3.name].verdict == "no"
    if by_model[l2.name].verdict != "no":
        assert c.judgement == "disagree: table more cautious"


def test_largest_that_fits_claims_at_80_gb_are_not_refused(cells):
    """The issue's example: the table says 32B LoRA fits on 80 GB cards; such configurations
    published as fitting must be `fits` or `tight`, never `no`."""
    for card in ("A100", "H100"):
        c = _cell(cells, card, "lora")
        assert c.rule_b == 32 and all(x.verdict != "no" for x in c.rule_checks)


def test_the_script_prints_every_cell(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["rule_of_thumb.py", "--markdown"])
    thumb.main()
    out = capsys.readouterr().out.splitlines()
    table = [x for x in out if x.startswith("| ")]
    assert len(table) == 1 + len(thumb.read_table()) * len(thumb.METHOD_COLUMNS)
    assert any(x.endswith("cells agree") or "cells agree (" in x for x in out)


def test_the_target_block_names_every_target_and_can_fail():
    res = bench.evaluate()
    s = bench.summary(res)
    by_class = bench.tokens_per_s_by_class(res)
    names = [t.name for t in accuracy_targets.targets(res, s, by_class)]
    for words in ("memory median", "within +-25%", "OOM", "fits or tight", "tokens/s"):
        assert any(words in n for n in names), words
    worse = dict(s, mem_median=accuracy_targets.MEMORY_MEDIAN_MAX + 1, oom_caught=0)
    failed = [t.name for t in accuracy_targets.targets(res, worse, by_class) if not t.ok]
    assert any("memory median" in n for n in failed) and any("OOM" in n for n in failed)


def test_docs_show_the_table_as_the_script_prints_it(capsys, monkeypatch):
    """docs/sizing.md's cell-by-cell table is the script's output: a change to the estimator
    that moves a cell fails here until the page is regenerated (--markdown)."""
    monkeypatch.setattr(sys, "argv", ["rule_of_thumb.py", "--markdown"])
    thumb.main()
    printed = [x for x in capsys.readouterr().out.splitlines() if x.startswith("| ")]
    docs = (ROOT / "docs/sizing.md").read_text().splitlines()
    start = docs.index(printed[0])
    assert docs[start:start + len(printed) + 1] == [printed[0], docs[start + 1], *printed[1:]]


def test_a_size_no_model_is_named_after_is_inferred(tmp_path):
    """A table naming a size models.csv lacks is compared on an architecture inferred from it."""
    (arch,) = thumb.models_of_size(20)
    assert arch.params_b == 20 and arch.inferred and "inferred" in arch.name
    table = tmp_path / "table.csv"
    table.write_text("gpu,memory_gb,qlora_max_b,lora16_max_b,full_max_b,source\n"
                     "L40S,48,20,8,,test\n")
    cells = thumb.compare(table)
    assert [c.rule_checks[0].model for c in cells if c.method == "qlora"] == [arch.name]
    lora = _cell(cells, "L40S", "lora")
    assert [x.model for x in lora.next_checks] == [arch.name]  # 20 is the next size up from 8
