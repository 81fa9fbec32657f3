"""Tests of the tiny GLM-5 fixture: it builds, loads offline, and decodes on CPU.

How fast it loads and decodes is measured by ``benchmarks/tiny_glm5.py``, not asserted here.

They also pin down two facts an engine running its own decode loop depends on: a manual loop over
a `DynamicCache` gives the same greedy tokens as `generate`, and a left-padded batch gives the same
tokens as each request alone once the DSA indexer breaks ties among equal scores by position.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    Cache,
    DynamicCache,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)
from transformers.models.glm_moe_dsa import modeling_glm_moe_dsa

from tests._tiny_glm5 import INDEX_TOPK, build_tiny_glm5

NEW_TOKENS = 16


@dataclass(frozen=True, slots=True)
class TinyGlm5:
    """The loaded fixture model and its tokenizer."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """Run torch on one thread for these tests, then restore the previous count.

    The model is far too small to gain from intra-op threads, and on a busy machine with few cores
    extra OpenMP threads wait on each other: decoding turns from tens of milliseconds into seconds.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_glm5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the checkpoint once per test session."""
    return build_tiny_glm5(tmp_path_factory.mktemp("tiny_glm5"))


@pytest.fixture(scope="session")
def tiny_glm5(tiny_glm5_dir: Path) -> TinyGlm5:
    """Load the checkpoint the way an engine does, from its folder alone (no hub, no GGUF)."""
    model = AutoModelForCausalLM.from_pretrained(tiny_glm5_dir, local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_glm5_dir, local_files_only=True)
    return TinyGlm5(model, tokenizer)


def chat_prompt(tokenizer: PreTrainedTokenizerBase, clauses: int) -> str:
    """Render a contract-extraction request through the chat template (~14 tokens a clause)."""
    body = " ".join(
        f"Clause {i}: a penalty of {i * 37 % 1000} EUR is due within {i % 30 + 1} days."
        for i in range(clauses)
    )
    messages = [{"role": "user", "content": f"What is the penalty amount in clause 7? {body}"}]
    return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


@torch.no_grad()
def greedy_decode(
    model: PreTrainedModel,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    new_tokens: int,
) -> torch.Tensor:
    """Decode greedily with an explicit `DynamicCache`, as an engine's own loop does.

    Rows may be left-padded. Positions count real tokens only, as `generate` computes them.

    Returns:
        The new tokens, shape `[batch, new_tokens]`.
    """
    # The config tells the cache to give every layer the indexer's key cache as well.
    cache = DynamicCache(config=model.config)
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    step_ids = input_ids
    generated = []
    for _ in range(new_tokens):
        # transformers 5.24 renamed `past_key_values` to `cache`; the old name warns.
        logits = model(
            input_ids=step_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            cache=cache,
            use_cache=True,
        ).logits
        step_ids = logits[:, -1].argmax(-1, keepdim=True)
        generated.append(step_ids)
        attention_mask = torch.cat([attention_mask, attention_mask.new_ones(step_ids.shape)], -1)
        position_ids = position_ids[:, -1:] + 1
    return torch.cat(generated, dim=-1)


@dataclass(slots=True)
class TieCount:
    """How often the indexer met equal scores on both sides of its top-k cut."""

    rows: int = 0


@torch.no_grad()
def _indexer_forward_with_position_ties(
    self: modeling_glm_moe_dsa.GlmMoeDsaIndexer,
    hidden_states: torch.Tensor,
    q_resid: torch.Tensor,
    position_embeddings: tuple[torch.Tensor, torch.Tensor],
    attention_mask: torch.Tensor,
    position_ids: torch.Tensor | None,
    cache: Cache | None = None,
    *,
    ties: TieCount,
) -> torch.Tensor:
    """`GlmMoeDsaIndexer.forward` of transformers 5.24, except for how it breaks ties.

    `Tensor.topk` picks among equal scores in an order that depends on the row's length and on
    where the tied keys sit in it, so left padding changes which keys win. A stable descending
    sort keeps the earliest keys instead; padding shifts every key of a row alike, so the choice
    is the same in a batch as alone.
    """
    batch_size, seq_len, _ = hidden_states.shape
    cos, sin = position_embeddings
    q = self.wq_b(q_resid).view(batch_size, seq_len, self.n_heads, self.head_dim)
    rope_split = [self.qk_rope_head_dim, self.head_dim - self.qk_rope_head_dim]
    q_rot, q_pass = torch.split(q, rope_split, dim=-1)
    k = self.k_norm(self.wk(hidden_states)).unsqueeze(2)
    k_rot, k_pass = torch.split(k, rope_split, dim=-1)
    q_rot, k_rot = modeling_glm_moe_dsa.apply_rotary_pos_emb_interleave(
        q_rot, k_rot, cos, sin, unsqueeze_dim=2
    )
    q = torch.cat([q_rot, q_pass], dim=-1)
    k = torch.cat([k_rot, k_pass], dim=-1).squeeze(2)
    if cache is not None:
        k = cache.update_indexer(k, self.layer_idx)
    scores = torch.matmul(q.float(), k.transpose(-1, -2).float().unsqueeze(1)) * self.softmax_scale
    weights = self.weights_proj(hidden_states.to(self.weights_proj.weight.dtype)).float()
    index_scores = torch.matmul(
        (weights * self.n_heads**-0.5).unsqueeze(-2), torch.relu(scores)
    ).squeeze(-2)
    if attention_mask.dtype == torch.bool:
        index_scores = index_scores.masked_fill(~attention_mask, float("-inf"))
    else:
        index_scores = index_scores + attention_mask
    topk = min(self.index_topk, index_scores.shape[-1])
    ranked = torch.sort(index_scores, dim=-1, descending=True, stable=True)
    if topk < index_scores.shape[-1]:
        cut = ranked.values[..., topk - 1]
        ties.rows += int(((cut == ranked.values[..., topk]) & torch.isfinite(cut)).sum())
    return ranked.indices[..., :topk].to(torch.int32)


@pytest.fixture
def position_ties(monkeypatch: pytest.MonkeyPatch) -> TieCount:
    """Make every GLM-5 indexer break score ties by position, and count the ties it met."""
    ties = TieCount()

    def forward(
        self: modeling_glm_moe_dsa.GlmMoeDsaIndexer, *args: Any, **kwargs: Any
    ) -> torch.Tensor:
        return _indexer_forward_with_position_ties(self, *args, **kwargs, ties=ties)

    monkeypatch.setattr(modeling_glm_moe_dsa.GlmMoeDsaIndexer, "forward", forward)
    return ties


def test_build_writes_small_glm_moe_dsa_checkpoint_with_smollm2_tokenizer(
    tiny_glm5_dir: Path, tiny_glm5: TinyGlm5
) -> None:
    config = tiny_glm5.model.config
    weights_mib = (tiny_glm5_dir / "model.safetensors").stat().st_size / 2**20
    assert config.model_type == "glm_moe_dsa"
    assert type(tiny_glm5.model).__name__ == "GlmMoeDsaForCausalLM"
    assert weights_mib < 8
    assert config.vocab_size == len(tiny_glm5.tokenizer) == 49152
    assert (config.bos_token_id, config.eos_token_id, config.pad_token_id) == (
        tiny_glm5.tokenizer.bos_token_id,
        tiny_glm5.tokenizer.eos_token_id,
        tiny_glm5.tokenizer.pad_token_id,
    )
    assert tiny_glm5.tokenizer.chat_template


def test_build_gives_same_weights_for_same_seed(tiny_glm5_dir: Path, tmp_path: Path) -> None:
    rebuilt = build_tiny_glm5(tmp_path / "again", tokenizer_dir=tiny_glm5_dir)
    name = "model.safetensors"
    assert (rebuilt / name).read_bytes() == (tiny_glm5_dir / name).read_bytes()


def test_checkpoint_loads_offline_from_a_saved_tokenizer_not_the_gguf(
    tiny_glm5_dir: Path, tiny_glm5: TinyGlm5
) -> None:
    # The folder carries a saved tokenizer, so loading never parses the SmolLM2 GGUF (seconds).
    files = {path.name for path in tiny_glm5_dir.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= files
    assert not any(name.endswith(".gguf") for name in files)
    assert tiny_glm5.model.name_or_path == str(tiny_glm5_dir)
    assert not tiny_glm5.model.training


def test_model_has_dense_and_moe_layers_and_full_and_shared_indexers(
    tiny_glm5: TinyGlm5,
) -> None:
    layers = tiny_glm5.model.model.layers
    assert [type(layer.mlp).__name__ for layer in layers] == [
        "GlmMoeDsaMLP",
        "GlmMoeDsaMoE",
        "GlmMoeDsaMoE",
    ]
    assert [layer.self_attn.indexer is not None for layer in layers] == [True, False, True]


def test_long_prompt_takes_sparse_attention_path(tiny_glm5: TinyGlm5) -> None:
    ids = tiny_glm5.tokenizer(chat_prompt(tiny_glm5.tokenizer, 14), return_tensors="pt")
    selected: list[torch.Tensor] = []
    hooks = [
        module.register_forward_hook(lambda _m, _a, out: selected.append(out))
        for module in tiny_glm5.model.modules()
        if isinstance(module, modeling_glm_moe_dsa.GlmMoeDsaIndexer)
    ]
    try:
        with torch.no_grad():
            tiny_glm5.model(**ids)
    finally:
        for hook in hooks:
            hook.remove()
    prompt_len = ids.input_ids.shape[1]
    assert prompt_len > INDEX_TOPK
    assert [tuple(s.shape) for s in selected] == [(1, prompt_len, INDEX_TOPK)] * 2


def test_generate_greedy_on_chat_prompt(tiny_glm5: TinyGlm5) -> None:
    ids = tiny_glm5.tokenizer(chat_prompt(tiny_glm5.tokenizer, 14), return_tensors="pt")
    out = tiny_glm5.model.generate(**ids, max_new_tokens=NEW_TOKENS, do_sample=False)
    assert 250 <= ids.input_ids.shape[1] <= 350
    assert out.shape == (1, ids.input_ids.shape[1] + NEW_TOKENS)
    assert out[0, : ids.input_ids.shape[1]].tolist() == ids.input_ids[0].tolist()


def test_manual_decode_with_dynamic_cache_matches_generate(tiny_glm5: TinyGlm5) -> None:
    ids = tiny_glm5.tokenizer(chat_prompt(tiny_glm5.tokenizer, 14), return_tensors="pt")
    expected = tiny_glm5.model.generate(**ids, max_new_tokens=NEW_TOKENS, do_sample=False)
    got = greedy_decode(tiny_glm5.model, ids.input_ids, ids.attention_mask, NEW_TOKENS)
    assert got.tolist() == expected[:, ids.input_ids.shape[1] :].tolist()
    # Varied tokens: a model stuck on one token would hide a difference between the two loops.
    assert len(set(got[0].tolist())) > NEW_TOKENS // 2


def test_left_padded_batch_matches_single_when_indexer_ties_break_by_position(
    tiny_glm5: TinyGlm5, position_ties: TieCount
) -> None:
    tokenizer = tiny_glm5.tokenizer
    prompts = [chat_prompt(tokenizer, clauses) for clauses in (14, 9, 12, 4)]
    alone: list[torch.Tensor] = []
    for prompt in prompts:
        ids = tokenizer(prompt, return_tensors="pt")
        alone.append(
            greedy_decode(tiny_glm5.model, ids.input_ids, ids.attention_mask, NEW_TOKENS)[0]
        )
    ties_alone = position_ties.rows
    batch = tokenizer(prompts, return_tensors="pt", padding=True, padding_side="left")
    together = greedy_decode(tiny_glm5.model, batch.input_ids, batch.attention_mask, NEW_TOKENS)
    # Ties at the top-k cut occurred, so the test exercised the tie-breaking it relies on.
    assert ties_alone > 0
    assert [row.tolist() for row in together] == [row.tolist() for row in alone]
