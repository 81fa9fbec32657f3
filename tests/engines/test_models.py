"""``aau.engines.models``: which dtype a config means, and GGUF weights cached at full width."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from aau.engines.models import device_dtype, load_model_and_tokenizer


def test_a_named_dtype_is_that_dtype_on_every_device() -> None:
    assert device_dtype("float32", "cpu") is torch.float32
    assert device_dtype("bfloat16", "cpu") is torch.bfloat16
    assert device_dtype("float16", "cuda") is torch.float16


def test_auto_on_a_cpu_is_bfloat16_exactly_when_the_cpu_computes_it() -> None:
    capabilities = torch.cpu.get_capabilities()
    native = bool(capabilities.get("avx512_bf16") or capabilities.get("amx_bf16"))
    assert device_dtype("auto", "cpu") is (torch.bfloat16 if native else torch.float32)


@pytest.mark.slow
def test_gguf_weights_loaded_in_bfloat16_are_cached_in_float32(tmp_path: Path) -> None:
    model, _, _ = load_model_and_tokenizer(None, dtype=torch.bfloat16, device="cpu",
                                           cache_dir=tmp_path)  # fmt: skip
    assert next(model.parameters()).dtype is torch.bfloat16
    [weights] = list((tmp_path / "models").glob("*/model.safetensors"))
    with safe_open(str(weights), "pt") as stored:
        name = next(iter(stored.keys()))
        assert stored.get_tensor(name).dtype is torch.float32
    # A later float32 load reads the cache and gets full-width weights.
    again, _, _ = load_model_and_tokenizer(None, dtype=torch.float32, device="cpu",
                                           cache_dir=tmp_path)  # fmt: skip
    assert next(again.parameters()).dtype is torch.float32
