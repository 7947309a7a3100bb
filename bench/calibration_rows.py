"""Calibration rows -> workloads: how each published measurement of
tests/fixtures/sizing/measured_calibration.csv becomes a workload (bench/sizing_accuracy.py
and bench/trace_vs_closed_form.py use it). No per-row constants.

Row -> workload rules (each from the row's own source):
* LitGPT rows: framework litgpt, LoRA r=8 on query+value with dropout 0.05 (litgpt
  finetune/lora.py defaults, Oct 2023: "trainable 4,194,304 (r=8 on q,v)" in the row),
  AdamW; seq_len = the longest Alpaca sample the row states (the peak is at that batch);
  single-GPU runs without activation checkpointing (not a litgpt finetune option then),
  multi-GPU FSDP runs with it (litgpt's FSDPStrategy(activation_checkpointing_policy={Block})).
  LitGPT prints torch.cuda.max_memory_allocated, so the estimate compared is `allocated_gb`
  (without the CUDA context).
* LLaMA-Adapter rows: frozen base with 0.5-4M trainable parameters, the same memory structure
  as LoRA r=8 on q,v (adapter -> lora, adapter_qlora -> qlora).
* PEFT README rows: models loaded in the default fp32 dtype (the PEFT example scripts pass no
  torch_dtype), batch 8 (PEFT twitter_complaints examples); sequence "short": 64 tokens is an
  ASSUMPTION (tweets + label), stated here and in the output. CPU-offload rows are excluded.
* Axolotl examples/llama-2 rows: the example configs (axolotl-ai-cloud/axolotl
  examples/llama-2/qlora.yml @013495e1: sequence_len 4096, micro_batch_size 2, lora_r 32 on
  all linear layers, dropout 0.05, gradient checkpointing, flash attention, paged AdamW with
  32-bit states); framework hf (Axolotl trains with transformers + PEFT). The LoRA example loads
  the base in 8 bits (load_in_8bit: true, LLM.int8), which is not a modeled method: excluded.
* Hugging Face PEFT docs rows (docs/source/accelerate/deepspeed.md and fsdp.md, Llama-2-70B):
  the launch commands they show (examples/sft/run_peft_*.sh): framework hf (TRL SFTTrainer +
  PEFT), LoRA r=8 on all linear layers with dropout 0.1, seq 2048 packed, gradient
  checkpointing, flash attention, the stated micro-batch, AdamW (TrainingArguments default);
  DeepSpeed ZeRO-3 -> zero3 with the module in bf16 (bf16-true), FSDP -> fsdp with bf16 autocast
  over the fp32 weights train.py loads (bf16-mixed) or, for QLoRA, bf16 quant storage. A card
  the page does not name gives a memory row without a verdict; "2X40GB GPUs" (the page's stated
  requirement) is taken as the 40 GB A100.
* Qwen README profiling rows (QwenLM/Qwen README.md "Profiling of Memory and Speed", the LoRA
  rows on one A100-SXM4-80G): finetune.py's LoraArguments (r=64, dropout 0.05, c_attn, c_proj,
  w1, w2: every linear layer) and finetune_lora_single_gpu.sh (bf16, gradient checkpointing),
  framework hf (transformers Trainer + PEFT), batch 1 at the stated length. Their s/it is kept
  in other_timing, not scored (docs/sizing.md, Accuracy).
* Megatron papers' rows (Narayanan et al. 2021, Korthikanti et al. 2022: figures from their
  abstracts, layouts from their tables, named in each row): framework megatron, full
  pre-training in bf16-mixed (the papers: "mixed precision"; tokens/s does not depend on which
  16-bit type), full activation recomputation, no optimizer sharding (DP all-reduce), the
  row's TP x PP, micro-batch 1 and its global batch (-> grad_accum = global / dp), the 1F1B
  schedule; GPT-3-style architecture (GELU MLP 4h, vocabulary 51200, tied embeddings) from
  the tables, in MEGATRON_PAPER_MODELS.
* Architectures: models.csv when the model is there, else inferred from params_b by the
  workload rule (T5, BLOOM, MPT families).
"""

from __future__ import annotations

import re

from gpuprices.warehouse.gpus import canonical_gpu

# Calibration wordings canonical_gpu cannot take as they stand (explanations in parentheses).
GPU_WORDING = {
    "A100 40GB (inferred: bf16-true rows identical to resource-tables A100 run)": "A100-40GB",
    "A100 40GB (inferred)": "A100-40GB",
    "24GB GPU (RTX 4090 mentioned)": "RTX4090-24GB",
    # PEFT docs: "now requires 2X40GB GPUs" for the measured 36.6 GB per GPU; the card is not
    # named, the 40 GB A100 is the 40 GB data-centre card of gpus.csv
    "2x40GB GPUs (the docs' stated requirement; the card is not named)": "A100-40GB",
}
# A row whose card is not named: a memory figure without a capacity (no verdict).
GPU_NOT_STATED = "not stated"
MODEL_NAMES = {
    "Llama-2-7B": "Llama 2 7B", "Llama-2-13B": "Llama 2 13B", "phi-1.5": "phi-1.5",
    "StableLM-Base-Alpha-3B": "StableLM-Base-Alpha-3B", "Falcon-7B": "Falcon-7B",
    "Falcon-40B": "Falcon-40B", "Llama-2-70B": "Llama 2 70B",
    "Qwen-1.8B": "Qwen 1.8B", "Qwen-7B": "Qwen 7B", "Qwen-14B": "Qwen 14B",
}
# GPT-3-style models of the Megatron papers: (hidden, layers, heads), vocabulary 51200, MLP 4h
# (Narayanan et al. 2021 Table 1, Korthikanti et al. 2022 Table 3).
MEGATRON_PAPER_MODELS = {
    "GPT-1T (Narayanan 2021)": (25600, 128, 160),
    "MT-NLG 530B (Korthikanti 2022)": (20480, 105, 128),
}
PEFT_SEQ_ASSUMED = 64
PEFT_BATCH = 8


def _gpu(text: str) -> str | None:
    return GPU_WORDING.get(text) or canonical_gpu(text)


def _method(text: str) -> str | None:
    t = text.lower()
    if t.startswith("full"):
        return "full"
    if "qlora" in t:
        return "qlora"
    if t.startswith("lora") or t.startswith("llama_adapter"):
        return "lora"
    return None


def _axolotl_workload(d: dict, method: str, r: dict[str, str]) -> tuple[dict | None, str]:
    """An Axolotl examples/llama-2 row: the example config's settings (module docstring)."""
    if method != "qlora":
        return None, "Axolotl LoRA example loads the base in 8 bits (not modeled)"
    d.update(framework="hf", precision="bf16-true", seq_len=4096, micro_batch=2,
             lora_rank=32, lora_targets="all", grad_checkpointing=True, gpus=1,
             sharding="none", optimizer="adamw")
    d["gpu"] = _gpu(r["gpu_model"])
    return d, ""


def _peft_docs_workload(d: dict, method: str, r: dict[str, str]) -> tuple[dict | None, str]:
    """A Hugging Face PEFT docs row: the launch command's settings (module docstring)."""
    zero3 = "zero-3" in r["sharding"].lower()
    mixed = "autocast" in r["precision"].lower()
    d.update(framework="hf", lora_rank=8, lora_targets="all", lora_dropout=True,
             seq_len=int(re.search(r"\d+", r["seq_len"]).group()),
             micro_batch=int(r["micro_batch"]), grad_checkpointing=True, gpus=int(r["gpus"]),
             sharding="zero3" if zero3 else "fsdp", optimizer="adamw",
             precision="bf16-mixed" if mixed else "bf16-true")
    if method == "qlora":
        d["double_quant"] = "nf4-dq" in r["precision"]
    d["gpu"] = None if r["gpu_model"] == GPU_NOT_STATED else _gpu(r["gpu_model"])
    return d, ""


def _qwen_readme_workload(d: dict, r: dict[str, str]) -> tuple[dict | None, str]:
    """A Qwen README profiling row: finetune.py's LoraArguments and the single-GPU script."""
    d.update(framework="hf", lora_rank=64, lora_targets="all", lora_dropout=True,
             precision="bf16-true", seq_len=int(r["seq_len"]), micro_batch=1,
             grad_checkpointing=True, gpus=1, sharding="none", optimizer="adamw",
             gpu=_gpu(r["gpu_model"]))
    return d, ""


def _megatron_paper_workload(d: dict, r: dict[str, str]) -> tuple[dict | None, str]:
    """A Megatron paper row: the layout and batch its source states (module docstring)."""
    h, layers, heads = MEGATRON_PAPER_MODELS[r["model"]]
    tp, pp = (int(x) for x in re.search(r"TP (\d+) x PP (\d+)", r["sharding"]).groups())
    gpus = int(r["gpus"])
    d.update(hidden_size=h, num_layers=layers, num_attention_heads=heads, num_kv_heads=heads,
             intermediate_size=4 * h, vocab_size=51200, mlp="gelu", tie_embeddings=True,
             framework="megatron", precision="bf16-mixed", seq_len=int(r["seq_len"]),
             micro_batch=int(r["micro_batch"]), grad_checkpointing=True, gpus=gpus,
             sharding="none", tensor_parallel=tp, pipeline_parallel=pp,
             global_batch=int(re.search(r"global batch (\d+)", r["other_timing"]).group(1)),
             gpu=_gpu(r["gpu_model"]))
    return d, ""


def _framework_fields(src: str) -> dict:
    """LitGPT and PEFT rows train LoRA r=8 on q,v (their defaults, module docstring)."""
    if "litgpt" in src.lower() or "LitGPT" in src:
        return dict(framework="litgpt", lora_rank=8, lora_targets="qv")
    if "PEFT" in src:
        return dict(framework="hf", lora_rank=8, lora_targets="qv")
    return dict(framework="hf")


def _precision(prec: str, src: str) -> str | None:
    if "mixed" in prec or prec.startswith("amp_bf16"):
        return "bf16-mixed"
    if prec.startswith("bf16"):
        return "bf16-true"
    if "PEFT" in src and "unknown" in prec:
        return "fp32"
    return None


def _batch_shape(r: dict[str, str], src: str) -> tuple[tuple[int, int] | None, str]:
    """((sequence length, micro-batch), why-not) of a row; PEFT rows take the assumed ones."""
    if "PEFT" in src:
        return (PEFT_SEQ_ASSUMED, PEFT_BATCH), ""
    m = re.search(r"\d+", r["seq_len"])
    if not (m and "-" not in r["seq_len"].split("(")[0].replace("<=", "")):
        return None, f"sequence length not stated ({r['seq_len']})"
    mb = re.search(r"\d+", r["micro_batch"])
    if not mb:
        return None, f"micro-batch not stated ({r['micro_batch']})"
    return (int(m.group()), int(mb.group())), ""


def _grad_checkpointing(text: str, framework: str | None, gpus: int) -> bool:
    gc = text.lower()
    if gc.startswith("yes") or "recomputation" in gc or "selective" in gc:
        return True
    if gc.startswith("no"):
        return False
    return framework == "litgpt" and gpus > 1  # litgpt: see module docstring


def row_to_workload(r: dict[str, str]) -> tuple[dict | None, str]:
    """(workload dict, why-not) for one calibration row."""
    method = _method(r["method"])
    if method is None:
        return None, f"method not stated ({r['method']})"
    if "offload" in r["sharding"]:
        return None, "CPU offload (not modeled)"
    src = r["source"]
    d: dict = {"name": f"{r['model']} {r['method']} mb{r['micro_batch']} x{r['gpus']}",
               "method": method, "optimizer": "adamw"}
    name = MODEL_NAMES.get(r["model"])
    if name:
        d["model"] = name
    else:
        d["params_b"] = float(r["params_b"])
    if "Axolotl" in src:
        return _axolotl_workload(d, method, r)
    if src.startswith("Hugging Face PEFT docs"):
        return _peft_docs_workload(d, method, r)
    if src.startswith("Qwen README"):
        return _qwen_readme_workload(d, r)
    if r["model"] in MEGATRON_PAPER_MODELS:
        return _megatron_paper_workload(d, r)
    d.update(_framework_fields(src))
    prec = r["precision"].lower()
    precision = _precision(prec, src)
    if precision is None:
        return None, f"precision not stated ({r['precision']})"
    d["precision"] = precision
    if method == "qlora":
        d["double_quant"] = "nf4-dq" in prec
    shape, why = _batch_shape(r, src)
    if shape is None:
        return None, why
    d["seq_len"], d["micro_batch"] = shape
    gpus = int(r["gpus"])
    d["gpus"] = gpus
    d["sharding"] = "fsdp" if "fsdp" in r["sharding"].lower() else "none"
    d["grad_checkpointing"] = _grad_checkpointing(r["grad_checkpointing"], d.get("framework"),
                                                  gpus)
    gpu = _gpu(r["gpu_model"])
    if gpu is None:
        return None, f"GPU wording {r['gpu_model']!r} unknown"
    d["gpu"] = gpu
    return d, ""
