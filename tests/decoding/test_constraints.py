"""``ConstraintCompiler``: compiles a schema once per tokenizer and masks logits per request.

These tests use the default model's real tokenizer (no model weights), so the masks are the
ones the engine applies.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from aau.decoding.constraints import ConstraintCompiler, schema_key
from aau.errors import SpecError

SCHEMA = {
    "type": "object",
    "properties": {"amount": {"type": "integer"}, "currency": {"enum": ["EUR", "USD"]}},
    "required": ["amount", "currency"],
    "additionalProperties": False,
}
SAME_SCHEMA_OTHER_ORDER = {
    "additionalProperties": False,
    "required": ["amount", "currency"],
    "properties": {"currency": {"enum": ["EUR", "USD"]}, "amount": {"type": "integer"}},
    "type": "object",
}


@pytest.fixture(scope="module")
def compiler(smollm2_tokenizer: Any) -> ConstraintCompiler:
    """One compiler for the module: building xgrammar's vocabulary view takes a second."""
    return ConstraintCompiler(smollm2_tokenizer, len(smollm2_tokenizer))


def allowed_texts(tokenizer: Any, processor: Any, prefix: list[int]) -> set[str]:
    logits = torch.zeros(1, len(tokenizer))
    masked = processor(torch.tensor([prefix]), logits)
    return {tokenizer.decode([i]) for i in torch.isfinite(masked[0]).nonzero().flatten().tolist()}


def test_schema_key_ignores_key_order_and_tells_schemas_apart() -> None:
    assert schema_key(SCHEMA) == schema_key(SAME_SCHEMA_OTHER_ORDER)
    assert schema_key(SCHEMA) != schema_key({**SCHEMA, "required": ["amount"]})


def test_second_compile_of_an_equal_schema_returns_the_cached_constraint(
    compiler: ConstraintCompiler,
) -> None:
    first = compiler.compile(SCHEMA)
    second = compiler.compile(SAME_SCHEMA_OTHER_ORDER)

    assert second is first
    assert first.backend == "xgrammar"
    assert first.schema == SCHEMA
    assert first.compile_ms > 0


def test_different_schemas_compile_to_different_constraints(compiler: ConstraintCompiler) -> None:
    first = compiler.compile(SCHEMA)
    other = compiler.compile({**SCHEMA, "required": ["amount"]})

    assert other is not first


def test_least_recently_used_constraint_is_dropped_past_max_entries(smollm2_tokenizer: Any) -> None:
    compiler = ConstraintCompiler(smollm2_tokenizer, len(smollm2_tokenizer), max_entries=2)
    schemas = [{"type": "object", "properties": {name: {"type": "integer"}}} for name in "abc"]
    a = compiler.compile(schemas[0])
    b = compiler.compile(schemas[1])
    assert compiler.compile(schemas[0]) is a  # a is now the most recently used

    compiler.compile(schemas[2])  # evicts b

    assert compiler.compile(schemas[0]) is a
    assert compiler.compile(schemas[1]) is not b


def test_schema_the_backend_cannot_compile_is_a_spec_error_naming_the_unit(
    compiler: ConstraintCompiler,
) -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "(?<=x)a"}}}

    with pytest.raises(SpecError) as caught:
        compiler.compile(schema, unit="extract_code")

    error = caught.value
    assert error.spec_code == "S014"
    assert error.field == "output"
    assert "extract_code: output schema cannot be compiled for constrained decoding" in str(error)
    assert "Lookbehind is not supported" in str(error)
    with pytest.raises(SpecError):  # a failure is not cached as a success
        compiler.compile(schema, unit="extract_code")


def test_each_request_gets_a_fresh_processor(compiler: ConstraintCompiler) -> None:
    constraint = compiler.compile(SCHEMA)

    assert constraint.new_processor() is not constraint.new_processor()


def test_processor_masks_every_token_the_schema_does_not_allow(
    compiler: ConstraintCompiler, smollm2_tokenizer: Any
) -> None:
    processor = compiler.compile(SCHEMA).new_processor()
    prompt = smollm2_tokenizer.encode("Text: 5 EUR")

    first = allowed_texts(smollm2_tokenizer, processor, prompt)
    assert first
    assert all(text.startswith("{") for text in first), first

    opening = smollm2_tokenizer.encode("{")
    after_brace = allowed_texts(smollm2_tokenizer, processor, prompt + opening)
    assert after_brace
    assert all(text.startswith('"') for text in after_brace), after_brace


def test_token_mask_allows_exactly_what_the_outlines_processor_leaves_finite(
    compiler: ConstraintCompiler, smollm2_tokenizer: Any
) -> None:
    constraint = compiler.compile(SCHEMA)
    mask, processor = constraint.new_mask(), constraint.new_processor()
    written = smollm2_tokenizer.encode('{"amount":12,"currency":"EUR"}')
    previous = [0]
    for token in written:
        logits = torch.zeros(1, len(smollm2_tokenizer))
        finite = torch.isfinite(processor(torch.tensor([previous]), logits))[0].numpy()
        mask.fill()
        allowed = mask.allowed()[: len(smollm2_tokenizer)]

        assert (allowed == finite).all(), smollm2_tokenizer.decode(previous[1:])
        assert mask.allows(token)
        assert not mask.allows(int((~allowed).nonzero()[0][0]))
        single = np.flatnonzero(allowed)
        assert mask.only() == (int(single[0]) if len(single) == 1 else None)
        mask.accept(token)
        previous.append(token)


def test_token_mask_refuses_a_token_it_did_not_allow(compiler: ConstraintCompiler) -> None:
    mask = compiler.compile(SCHEMA).new_mask()
    mask.fill()
    refused = int((~mask.allowed()).nonzero()[0][0])

    with pytest.raises(RuntimeError, match=f"rejected token {refused}"):
        mask.accept(refused)


def test_token_mask_jumps_over_what_the_schema_forces_and_only_that(
    compiler: ConstraintCompiler, smollm2_tokenizer: Any
) -> None:
    mask = compiler.compile(SCHEMA).new_mask()
    text = smollm2_tokenizer.decode

    assert text(mask.jump()) == '{"amount'  # '":' is left to the model: '":"' might extend it
    for token in smollm2_tokenizer.encode('{"amount":12,'):
        mask.accept(token)
    forced = mask.jump()
    assert text(forced) == '"currency":"'  # an enum's opening quote is forced too
    assert mask.jump() == forced  # asking does not advance
    for token in forced:
        mask.fill()
        assert mask.allows(token)
        mask.accept(token)
    for token in smollm2_tokenizer.encode('EUR"}'):
        mask.accept(token)
    assert mask.jump() == []  # complete: only the stop token may follow, never jumped over


def test_token_mask_says_a_stop_may_come_exactly_where_its_fill_allows_one(
    compiler: ConstraintCompiler, smollm2_tokenizer: Any
) -> None:
    """The engine skips the fill before a forward where ``may_end()`` is False: it must never
    be False where the fill would allow the stop token."""
    stop = smollm2_tokenizer.eos_token_id
    for written in ('{"amount":12,"currency":"EUR"}', '{"amount":120,"currency":"USD"}'):
        mask = compiler.compile(SCHEMA).new_mask()
        seen = []
        for token in [*smollm2_tokenizer.encode(written), None]:
            mask.fill()
            seen.append(mask.may_end())
            assert mask.allows(stop) == seen[-1], (written, len(seen))
            if token is not None:
                mask.accept(token)
        assert seen[-1]  # once the object is closed
        assert not any(seen[:-1])  # and only then


def test_token_mask_fills_once_per_accepted_token(compiler: ConstraintCompiler) -> None:
    mask = compiler.compile(SCHEMA).new_mask()
    calls = []
    real_fill = mask._fill
    mask._fill = lambda: calls.append(1) or real_fill()
    mask.fill()
    mask.fill()
    assert len(calls) == 1
    mask.accept(mask.jump()[0])
    mask.fill()
    assert len(calls) == 2


@pytest.mark.slow
def test_outlines_core_token_mask_allows_what_its_processor_leaves_finite(
    default_engine: Any,
) -> None:
    tokenizer, model = default_engine.tokenizer, default_engine.model
    rows = model.get_output_embeddings().weight.shape[0]
    compiler = ConstraintCompiler(tokenizer, rows, model=model, backend="outlines_core")
    constraint = compiler.compile(SCHEMA)
    mask, processor = constraint.new_mask(), constraint.new_processor()
    written = tokenizer.encode('{"amount":7,"currency":"USD"}')
    previous = [0]
    for token in written:
        finite = torch.isfinite(processor(torch.tensor([previous]), torch.zeros(1, rows)))
        mask.fill()

        assert (mask.allowed()[:rows] == finite[0].numpy()).all(), tokenizer.decode(previous[1:])
        assert mask.allows(token)
        mask.accept(token)
        previous.append(token)
    with pytest.raises(RuntimeError, match="rejected token"):
        mask.accept(written[0])  # "{" again, after the object closed
    assert compiler.compile(SCHEMA).new_mask().jump() == []  # a Guide cannot tell a forced run
