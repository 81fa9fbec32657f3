"""GLM-5 (``glm_moe_dsa``): deterministic tie-breaking in the sparse-attention indexer.

The DSA indexer keeps each query's top-k keys by score. Its scores pass through a ReLU, so many
are exactly 0.0, and ``Tensor.topk`` breaks ties in an order that depends on the row's length
and where the tied keys sit: the same request left-padded in a batch then attends to other keys
than alone, and greedy outputs differ. A stable descending sort keeps the earliest of tied keys
instead; padding shifts every key of a row alike, so the choice is the same in a batch as alone.

The replacement forward is transformers 5.24's ``GlmMoeDsaIndexer.forward`` with that one change,
bound per indexer instance of the loaded model (never patched process-wide). When the installed
transformers' indexer differs from the one it was written against, it is left alone and a
warning says batched GLM-5 rows may differ from single runs.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import types
from typing import Any

import torch

__all__ = ["make_indexer_ties_deterministic"]

_log = logging.getLogger(__name__)
# sha256 of inspect.getsource(GlmMoeDsaIndexer.forward) in transformers 5.24.0
_EXPECTED_DIGEST = "5b484bc355c707d6a1f8c41e7c90ea3e5c3e0e25f81e0ec76e00aec385f384bb"


def _source_digest(fn: Any) -> str:
    return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()


def _forward(
    self: Any,
    hidden_states: torch.Tensor,
    q_resid: torch.Tensor,
    position_embeddings: tuple[torch.Tensor, torch.Tensor],
    attention_mask: torch.Tensor,
    position_ids: torch.Tensor | None,
    cache: Any = None,
) -> torch.Tensor:
    from transformers.models.glm_moe_dsa.modeling_glm_moe_dsa import (
        apply_rotary_pos_emb_interleave,
    )

    batch_size, seq_len, _ = hidden_states.shape
    cos, sin = position_embeddings
    q = self.wq_b(q_resid).view(batch_size, seq_len, self.n_heads, self.head_dim)
    split = [self.qk_rope_head_dim, self.head_dim - self.qk_rope_head_dim]
    q_rot, q_pass = torch.split(q, split, dim=-1)
    k = self.k_norm(self.wk(hidden_states)).unsqueeze(2)
    k_rot, k_pass = torch.split(k, split, dim=-1)
    q_rot, k_rot = apply_rotary_pos_emb_interleave(q_rot, k_rot, cos, sin, unsqueeze_dim=2)
    q = torch.cat([q_rot, q_pass], dim=-1)
    k = torch.cat([k_rot, k_pass], dim=-1).squeeze(2)
    if cache is not None:
        k = cache.update_indexer(k, self.layer_idx)
    scores = torch.matmul(q.float(), k.transpose(-1, -2).float().unsqueeze(1)) * self.softmax_scale
    scores = torch.relu(scores)
    weights = self.weights_proj(hidden_states.to(self.weights_proj.weight.dtype)).float()
    weights = weights * (self.n_heads**-0.5)
    index_scores = torch.matmul(weights.unsqueeze(-2), scores).squeeze(-2)
    if attention_mask.dtype == torch.bool:
        index_scores = index_scores.masked_fill(~attention_mask, float("-inf"))
    else:
        index_scores = index_scores + attention_mask
    topk = min(self.index_topk, index_scores.shape[-1])
    # The one change: ties go to the earliest key, whatever the padding.
    ranked = torch.sort(index_scores, dim=-1, descending=True, stable=True).indices
    return ranked[..., :topk].to(torch.int32)


def make_indexer_ties_deterministic(model: Any) -> int:
    """Bind the stable-tie forward to every DSA indexer of ``model``; return how many."""
    try:
        from transformers.models.glm_moe_dsa import modeling_glm_moe_dsa as dsa
    except ImportError:
        return 0
    digest = _source_digest(dsa.GlmMoeDsaIndexer.forward)
    if digest != _EXPECTED_DIGEST:
        _log.warning(
            "GLM-5 indexer code differs from the version AAU patches (%s); batched rows may "
            "differ from single runs on exact score ties",
            digest[:12],
        )
        return 0
    count = 0
    for module in model.modules():
        if isinstance(module, dsa.GlmMoeDsaIndexer):
            module.forward = types.MethodType(_forward, module)
            count += 1
    return count
