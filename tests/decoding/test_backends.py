"""Constraint backends: found by name, interchangeable, checked without a tokenizer, pluggable.

The masks are compared on the default model's real tokenizer; outlines-core builds its
vocabulary through the model, so those tests load it (``slow``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import xgrammar

from aau.decoding import CONSTRAINT_BACKENDS, ConstraintCompiler, schema_compile_problem
from aau.decoding.backends import OutlinesCoreBackend, XGrammarBackend
from aau.decoding.constraints import schema_key
from aau.errors import SpecError
from aau.registry import UnknownName

SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": ["number", "null"]},
        "currency": {"enum": ["EUR", "USD"]},
        "paid": {"type": "boolean"},
    },
    "required": ["amount", "currency", "paid"],
    "additionalProperties": False,
}
LOOKBEHIND = {"type": "object", "properties": {"code": {"type": "string", "pattern": "(?<=x)a"}}}


def test_the_shipped_backends_are_registered_under_their_own_names() -> None:
    assert CONSTRAINT_BACKENDS.get("xgrammar") is XGrammarBackend
    assert CONSTRAINT_BACKENDS.get("outlines_core") is OutlinesCoreBackend
    for name, backend in CONSTRAINT_BACKENDS.items():
        assert backend.name == name


def test_an_unknown_backend_name_lists_the_available_ones(smollm2_tokenizer: Any) -> None:
    expected = "unknown constraint backend 'llguidnace'. Available: outlines_core, xgrammar"

    with pytest.raises(UnknownName) as caught:
        ConstraintCompiler(smollm2_tokenizer, len(smollm2_tokenizer), backend="llguidnace")
    assert str(caught.value) == expected
    with pytest.raises(UnknownName, match="Available: outlines_core, xgrammar"):
        schema_compile_problem(SCHEMA, "llguidnace")


@pytest.mark.parametrize("backend", ["xgrammar", "outlines_core"])
def test_a_compilable_schema_has_no_problem(backend: str) -> None:
    assert schema_compile_problem(SCHEMA, backend) is None


def test_an_uncompilable_schema_gets_xgrammars_own_message() -> None:
    with pytest.raises(RuntimeError) as direct:  # what the load-time check always ran
        xgrammar.Grammar.from_json_schema(
            json.dumps(LOOKBEHIND), any_whitespace=False, separators=(",", ":"), strict_mode=True
        )

    problem = schema_compile_problem(LOOKBEHIND)

    assert problem == str(direct.value)
    assert "Lookbehind is not supported" in problem


def test_an_uncompilable_schema_gets_outlines_cores_own_message() -> None:
    assert schema_compile_problem(LOOKBEHIND, "outlines_core") == (
        "Failed to build DFA error building NFA"
    )
    assert schema_compile_problem({"type": "wat"}, "outlines_core") == "Unsupported type: wat"


def test_outlines_core_check_is_not_limited_to_ascii_text() -> None:
    # The check's vocabulary is single bytes: any UTF-8 text can be spelled with it.
    assert schema_compile_problem({"enum": ["€", "xé"]}, "outlines_core") is None


def test_outlines_core_refuses_merged_term_tokens_when_built(smollm2_tokenizer: Any) -> None:
    with pytest.raises(ValueError, match="merged term tokens need the xgrammar"):
        ConstraintCompiler(
            smollm2_tokenizer, len(smollm2_tokenizer), model=object(),
            backend="outlines_core", extra_tokens=["Acme GmbH"],
        )  # fmt: skip
    with pytest.raises(ValueError, match="needs the model"):
        ConstraintCompiler(smollm2_tokenizer, len(smollm2_tokenizer), backend="outlines_core")


def test_xgrammar_keeps_compiled_schemas_on_disk_under_the_same_key(
    smollm2_tokenizer: Any, tmp_path: Path
) -> None:
    rows = len(smollm2_tokenizer)
    first = ConstraintCompiler(smollm2_tokenizer, rows, cache_dir=tmp_path)
    written = first.compile(SCHEMA).new_mask()
    # The key as earlier releases wrote it: a changed format would orphan every cache.
    vocab = sorted(smollm2_tokenizer.get_vocab().items(), key=lambda kv: kv[1])
    digest = hashlib.sha256(json.dumps(vocab, ensure_ascii=False).encode())
    digest.update(f"{rows}|xgrammar {version('xgrammar')}|compact".encode())
    digest.update(("" + "|specials blanked").encode())
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert f"{digest.hexdigest()[:16]}-{schema_key(SCHEMA)}.json" in kept
    assert len(kept) == 2  # and the tokenizer info (test below)
    assert first.disk_hits == 0

    second = ConstraintCompiler(smollm2_tokenizer, rows, cache_dir=tmp_path)
    read = second.compile(SCHEMA).new_mask()

    assert second.disk_hits == 1
    written.fill()
    read.fill()
    assert (written.allowed() == read.allowed()).all()


def test_xgrammar_reads_its_tokenizer_info_back_and_rebuilds_a_damaged_one(
    smollm2_tokenizer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = len(smollm2_tokenizer)
    ConstraintCompiler(smollm2_tokenizer, rows, cache_dir=tmp_path).compile(SCHEMA)
    [info_file] = tmp_path.glob("*-tokenizer-*.json")
    other = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    expected = ConstraintCompiler(smollm2_tokenizer, rows).compile(other).new_mask()
    expected.fill()

    def built_again(self: XGrammarBackend) -> Any:  # fault injection: building is refused
        raise AssertionError("the tokenizer info was built again")

    with monkeypatch.context() as patched:
        patched.setattr(XGrammarBackend, "_build_tokenizer_info", built_again)
        read = ConstraintCompiler(smollm2_tokenizer, rows, cache_dir=tmp_path).compile(other)
    mask = read.new_mask()
    mask.fill()
    assert (mask.allowed() == expected.allowed()).all()

    info_file.write_text('{"vocab_type": 0, "decoded_vocab": [', encoding="utf-8")  # cut short
    rebuilt = ConstraintCompiler(smollm2_tokenizer, rows, cache_dir=tmp_path).compile(other)
    mask = rebuilt.new_mask()
    mask.fill()
    assert (mask.allowed() == expected.allowed()).all()
    assert len(info_file.read_text(encoding="utf-8")) > 100_000  # written whole again


class EvenTokens:
    """A plug-in backend: any even token below ``vocab_size`` may come next, forever."""

    name = "even_tokens"

    def __init__(self, tokenizer: Any, vocab_size: int, **options: Any) -> None:
        self.vocab_size, self.options = vocab_size, options

    @classmethod
    def check_schema(cls, schema: dict[str, Any]) -> None:
        if schema.get("type") != "object":
            raise ValueError("only objects")

    def compile(self, schema: dict[str, Any]) -> Any:
        self.check_schema(schema)
        return schema

    def new_matcher(
        self, compiled: Any, bitmask: torch.Tensor
    ) -> tuple[Callable[[], None], Callable[[int], bool]]:
        def fill() -> None:
            bitmask.fill_(0x55555555)  # bits 0, 2, 4… of every word

        return fill, lambda token: token % 2 == 0

    def new_processor(self, compiled: Any) -> Any:
        raise NotImplementedError


@pytest.fixture
def even_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    CONSTRAINT_BACKENDS.names()  # read the entry points first, so the plug-in is added to them
    monkeypatch.setitem(CONSTRAINT_BACKENDS._entries, "even_tokens", EvenTokens)


@pytest.mark.usefixtures("even_tokens")
def test_a_plugged_in_backend_compiles_and_masks_through_the_compiler() -> None:
    compiler = ConstraintCompiler(None, 40, model="m", backend="even_tokens", cache_dir=None)

    constraint = compiler.compile({"type": "object"})
    mask = constraint.new_mask()
    mask.fill()

    assert isinstance(compiler._backend, EvenTokens)
    assert compiler._backend.options == {"model": "m", "cache_dir": None, "extra_tokens": ()}
    assert constraint.backend == "even_tokens"
    assert np.flatnonzero(mask.allowed()).tolist() == list(range(0, 40, 2))
    assert [mask.allows(token) for token in (38, 39, 40)] == [True, False, False]
    mask.accept(2)
    with pytest.raises(RuntimeError, match="rejected token 3"):
        mask.accept(3)
    assert compiler.disk_hits == 0
    assert schema_compile_problem({"type": "array"}, "even_tokens") == "only objects"
    with pytest.raises(SpecError, match="only objects"):
        compiler.compile({"type": "array"})


@pytest.mark.slow
def test_both_backends_allow_the_same_tokens_at_every_step(default_engine: Any) -> None:
    # Up to and after the closing brace (where only the end of the text may come). Inside a
    # free JSON string they differ: outlines-core admits special and lone non-ASCII byte
    # tokens there, xgrammar (its vocabulary blanks specials) single control bytes.
    tokenizer, model = default_engine.tokenizer, default_engine.model
    rows = model.get_output_embeddings().weight.shape[0]
    masks = [
        ConstraintCompiler(tokenizer, rows, model=model, backend=backend).compile(SCHEMA).new_mask()
        for backend in ("xgrammar", "outlines_core")
    ]
    written = tokenizer.encode('{"amount":-12.5,"currency":"USD","paid":true}')
    for step, token in enumerate([*written, None]):
        for mask in masks:
            mask.fill()
        xgrammar_allowed, outlines_allowed = (mask.allowed() for mask in masks)

        differ = np.flatnonzero(xgrammar_allowed != outlines_allowed)
        assert not differ.size, (tokenizer.decode(written[:step]), differ[:10])
        if token is None:
            assert xgrammar_allowed[tokenizer.eos_token_id]
            break
        assert xgrammar_allowed[token]
        for mask in masks:
            mask.accept(token)
