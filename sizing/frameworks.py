"""Framework profiles: where trainers differ materially for the same settings.

Each field names the behaviour it models and where it comes from. Everything else in the memory
model is framework-independent (parameter counts x bytes, saved activations of the block).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FrameworkProfile:
    name: str
    # Bytes held per logit element at the loss (saved tensors + gradient at the start of the
    # backward pass).
    logits_bytes: float
    logits_note: str
    # Bytes per LoRA adapter parameter (weight); None = same as the base compute dtype.
    adapter_bytes: float | None
    adapter_note: str
    # Whether the 4-bit path quantizes the output projection (lm_head) as well.
    quantize_lm_head: bool
    # Per-GPU peak under FSDP also holds a full unsharded copy of the weights beside the shard.
    fsdp_full_weight_copy: bool
    fsdp_note: str
    # Defaults of the memory switches (sizing/switches.py) when the workload leaves them unset:
    # the loss ("full" | "chunked" | "fused"; logits_bytes above is this loss as the framework
    # implements it), its chunks, and whether saved activations are offloaded to host RAM.
    # Packing, optimizer step in backward and tiled MLP are off by default in all four (TRL
    # SFTConfig packing=False; torchtune recipes packed: False, optimizer_in_bwd: False in the
    # LoRA configs; LitGPT has no such options; Unsloth's unsloth_tiled_mlp is opt-in).
    loss: str = "full"
    loss_chunks: int = 1
    activation_offload: bool = False
    # A gated MLP saves act(gate) for backward as well as gate and up; a fused SwiGLU kernel that
    # recomputes it in backward (Liger's LigerSiLUMulFunction saves only a and b) does not.
    saves_swiglu_product: bool = True
    # Bytes x hidden per token a fused loss ("fused") holds: Liger's chunk of logits the size of
    # the hidden states + the input gradient (4); Cut Cross-Entropy never writes logits to
    # global memory, only the input gradient (2).
    fused_bytes_per_hidden: float = 4.0
    # The framework's own LoRA autograd functions dequantize NF4 weights themselves, so no
    # bitsandbytes MatMul4Bit saves a second copy of each quantized layer's input.
    own_lora_kernels: bool = False
    # QLoRA: the parameters left unquantized (embeddings, norms, lm_head) are upcast to fp32.
    kbit_fp32_unquantized: bool = False
    # LoRA on a frozen bf16/fp32 base runs transformers' modeling code with PEFT's LoRA layers:
    # its saved tensors are counted from that code (sizing/hf_activations.py) instead of the
    # generic per-block count fitted to LitGPT's modules.
    hf_lora_modules: bool = False


PROFILES: dict[str, FrameworkProfile] = {
    "hf": FrameworkProfile(
        name="hf",
        # transformers' causal-LM heads compute the loss on logits upcast to fp32
        # (loss_utils ForCausalLMLoss `logits.float()`): at the start of backward the fp32
        # log-softmax saved by cross_entropy (4) + nll_loss's and log_softmax's fp32 gradients
        # (4 + 4); the bf16 logits and the upcast are freed by then (switches.FULL_LOGIT_BYTES).
        logits_bytes=12.0,
        logits_note="fp32 log-softmax + two fp32 grads at the start of backward (transformers "
                    "ForCausalLMLoss upcasts logits to float)",
        # PEFT >= 0.12 `autocast_adapter_dtype=True` keeps adapter weights in fp32 when the base
        # model is bf16/fp16 (PEFT LoraConfig docs).
        adapter_bytes=4.0,
        adapter_note="PEFT autocast_adapter_dtype=True: adapters in fp32",
        # transformers' bitsandbytes integration keeps the output embedding unquantized
        # (integrations/bitsandbytes.py get_keys_to_not_convert).
        quantize_lm_head=False,
        fsdp_full_weight_copy=False,
        fsdp_note="FSDP/ZeRO-3: 1/n of weights + two all-gathered layer units (prefetch)",
        # transformers' Trainer: the whole T x vocab logits (loss_utils ForCausalLMLoss);
        # gradient_checkpointing_kwargs={"offload": ...} is opt-in, off by default.
        loss="full",
        # The HF QLoRA recipe (QLoRA repo, TRL, Axolotl) calls PEFT's
        # prepare_model_for_kbit_training, which casts every non-quantized parameter to fp32
        # "for stability" (peft/utils/other.py).
        kbit_fp32_unquantized=True,
        hf_lora_modules=True,
    ),
    "litgpt": FrameworkProfile(
        name="litgpt",
        # litgpt finetune scripts call the model with lm_head_chunk_size=128 and
        # chunked_cross_entropy, which runs cross_entropy on bf16 chunks: bf16 logits (2) +
        # bf16 log-softmax output (2). (Lightning-AI/litgpt finetune/lora.py, utils.py)
        logits_bytes=4.0,
        logits_note="chunked_cross_entropy in bf16: logits + log-softmax (litgpt utils.py)",
        adapter_bytes=None,
        adapter_note="adapters in the model dtype (litgpt lora.py)",
        # Lightning's BitsandbytesPrecision replaces every nn.Linear, lm_head included.
        quantize_lm_head=True,
        # Measured: LitGPT resource tables (tutorials/resource-tables.md, Oct 2023) show LoRA
        # under FSDP using MORE memory per GPU than on one GPU (Llama 2 7B: 22.18 GB on 2 GPUs vs
        # 21.30 GB on 1; phi-1.5 4.86 vs 4.82; 13B on 2 GPUs OOM on 40 GB). That is the
        # sharded weights plus one full copy; modeled as such.
        fsdp_full_weight_copy=True,
        fsdp_note="litgpt FSDP peak = shard + full weight copy (LitGPT resource tables: "
                  "7B LoRA 22.18 GB on 2 GPUs vs 21.30 GB on 1)",
        # lm_head_chunk_size=128 tokens per chunk: chunked, bf16 throughout (logits_bytes).
        loss="chunked",
        loss_chunks=128,
    ),
    "torchtune": FrameworkProfile(
        name="torchtune",
        # CEWithChunkedOutputLoss: bf16 output in 8 chunks, each upcast to fp32 only inside its
        # own loss: bf16 logits (2) + fp32 of one chunk at a time (~1 over the whole sequence).
        logits_bytes=3.0,
        logits_note="chunked output, fp32 one chunk at a time (torchtune CEWithChunkedOutputLoss)",
        adapter_bytes=None,
        adapter_note="adapters in the model dtype (torchtune LoRALinear)",
        quantize_lm_head=False,
        fsdp_full_weight_copy=False,
        fsdp_note="FSDP2 fully_shard: 1/n of weights + two gathered layer units",
        # recipes' default loss: CEWithChunkedOutputLoss(num_output_chunks=8);
        # enable_activation_offloading defaults to False (recipes/lora_finetune_single_device.py
        # cfg.get("enable_activation_offloading", False)).
        loss="chunked",
        loss_chunks=8,
    ),
    "unsloth": FrameworkProfile(
        name="unsloth",
        # Unsloth's older fast_cross_entropy_loss kernel (unsloth/kernels/cross_entropy_loss.py)
        # keeps the bf16 logits and writes the gradient in place: 2 B per logit. Current
        # releases call Cut Cross-Entropy by default (below: loss = "fused"), so this figure is
        # not used; a workload that sets loss = "chunked" gets the generic chunked formula.
        logits_bytes=2.0,
        logits_note="fast_cross_entropy_loss: bf16 logits, gradient in place (unsloth kernels)",
        adapter_bytes=4.0,
        adapter_note="PEFT adapters (fp32)",
        quantize_lm_head=False,
        fsdp_full_weight_copy=False,
        fsdp_note="single-GPU framework; sharding modeled as FSDP",
        # unsloth_zoo.loss_utils fused_linear_cross_entropy (Cut Cross-Entropy), on unless
        # UNSLOTH_ENABLE_CCE=0 (Unsloth's generated compiled modules, 2025.8+).
        loss="fused",
        # Cut Cross-Entropy (Wijmans et al. 2024, arXiv 2411.09009: the logits and the
        # log-sum-exp are computed in on-chip memory, "from 24 GB to 1 MB" for Gemma 2 2B at
        # 8,192 tokens): only the input gradient, T x hidden x 2 B, is held.
        fused_bytes_per_hidden=2.0,
        # use_gradient_checkpointing="unsloth" (the default in Unsloth's notebooks and
        # FastLanguageModel.get_peft_model) offloads checkpointed layer inputs to CPU RAM
        # (unsloth README / blog "long context": offloaded gradient checkpointing).
        activation_offload=True,
        # unsloth/kernels/fast_lora.py: LoRA_MLP / LoRA_QKV / LoRA_W call fast_dequantize and
        # save the layer input once (ctx.save_for_backward), not through bnb MatMul4Bit.
        # (Unsloth patches these fast paths in only with lora_dropout = 0.)
        own_lora_kernels=True,
    ),
    # transformers models patched with Liger Kernel (linkedin/Liger-Kernel; TRL / HF Trainer
    # `use_liger_kernel=True`, ArcticTraining `model.type: liger`), full fine-tuning as its
    # published runs do. LoRA through it is counted by the generic block count (PEFT's modules
    # are not re-read for it).
    "liger": FrameworkProfile(
        name="liger",
        logits_bytes=4.0,
        logits_note="LigerFusedLinearCrossEntropy: one chunk of logits + the input gradient",
        adapter_bytes=4.0,
        adapter_note="PEFT autocast_adapter_dtype=True: adapters in fp32",
        quantize_lm_head=False,
        fsdp_full_weight_copy=False,
        fsdp_note="FSDP/ZeRO-3: 1/n of weights + two all-gathered layer units (prefetch)",
        # apply_liger_kernel_to_llama(fused_linear_cross_entropy=True) is the default patch
        # (liger_kernel/transformers/monkey_patch.py): the T x vocab logits never exist.
        loss="fused",
        # liger_kernel/ops/swiglu.py LigerSiLUMulFunction.forward: ctx.save_for_backward(a, b);
        # silu(a) * b is recomputed in backward. LigerRMSNorm saves its input in the model dtype
        # with a per-row fp32 rstd (liger_kernel/ops/rms_norm.py), not an fp32 copy.
        saves_swiglu_product=False,
        kbit_fp32_unquantized=True,
    ),
}


def profile(name: str) -> FrameworkProfile:
    return PROFILES[name]
