"""Merged term tokens on the real default model: the view, the engine, tenant isolation.

These load SmolLM2 once (a second engine, with ``term_merging`` on) and run it a few times.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import torch

from aau.engines.base import GenerationRequest
from aau.engines.local import TransformersEngine
from aau.engines.registry import EngineConfig
from aau.pipeline import Pipeline
from aau.terms import TermSet, TermStore, parse_dictionary
from aau.terms.matcher import TermMatcher
from aau.terms.merge import MergedVocabulary, term_token_name
from tests.conftest import UNITS_DIR

pytestmark = pytest.mark.slow

TERMS = parse_dictionary(
    "term\tcanonical\tcategory\n"
    "force majeure clause\tforce majeure\tclause\n"
    "late payment fee\tlate payment fee\tfee\n"
    "purchase order\tpurchase order\tdocument\n"
    "欧元\tEUR\tcurrency\n",
    file="contract.tsv",
)
TERM_SET = TermSet("acme", TermMatcher([TERMS]))
TEXT = "Under the force majeure clause, the late payment fee of the purchase order is 40 欧元."


@pytest.fixture(scope="module")
def engine() -> Any:
    engine = TransformersEngine(EngineConfig(term_merging=True))
    engine.load()
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def view(engine: Any) -> MergedVocabulary:
    return engine.term_view(TERM_SET)[0]


def test_each_term_is_one_named_token_and_decodes_back(view: MergedVocabulary) -> None:
    names = view.tokens(TEXT)
    assert "Ġ<TERM_force_majeure_clause>" in names
    assert "Ġ<TERM_late_payment_fee>" in names
    assert "Ġ<TERM_欧元>" in names
    assert view.decode(view.encode(TEXT)) == TEXT
    plain = view.tokenizer(TEXT, add_special_tokens=False)["input_ids"]
    assert len(view.encode(TEXT)) < len(plain)
    assert term_token_name("USD/GBP cross-currency swap") == "<TERM_usd_gbp_cross_currency_swap>"


def test_text_without_terms_tokenizes_exactly_as_before(view: MergedVocabulary) -> None:
    text = "Total due: 1,250.00 by 30 April."
    assert view.encode(text) == view.tokenizer(text, add_special_tokens=False)["input_ids"]


def test_a_merged_embedding_is_the_mean_of_its_pieces(engine: Any, view: MergedVocabulary) -> None:
    pieces = view.tokenizer(" force majeure clause", add_special_tokens=False)["input_ids"]
    weight = engine.model.get_input_embeddings().weight
    index = view.strings.index(" force majeure clause")
    assert torch.allclose(view.input_rows[index], weight[pieces].mean(0), atol=1e-6)
    assert view.size == weight.shape[0] + len(view)


def test_the_constrained_decoder_knows_merged_tokens(engine: Any, view: MergedVocabulary) -> None:
    compiler = engine.term_view(TERM_SET)[1]
    schema = {"type": "object", "properties": {"clause": {"type": "string"}},
              "required": ["clause"], "additionalProperties": False}  # fmt: skip
    processor = compiler.compile(schema).new_processor()
    prefix = view.tokenizer('{"clause":"', add_special_tokens=False)["input_ids"]
    logits = torch.zeros((1, view.size))
    masked = processor(torch.tensor([[0]]), logits.clone())  # the first call reads no token
    for token in prefix:  # then each call accepts the token chosen after the previous one
        masked = processor(torch.tensor([[token]]), logits.clone())
    term_id = view.base_size + view.strings.index(" force majeure clause")
    assert torch.isfinite(masked[0, term_id])  # a merged token may continue a JSON string
    special = view.tokenizer.convert_tokens_to_ids("<|im_start|>")
    assert not torch.isfinite(masked[0, special])  # special tokens are never string content


def generate(engine: Any, text: str, terms: TermSet | None) -> Any:
    request = GenerationRequest(
        messages=[{"role": "user", "content": f"{text}\nName the clause as JSON."}],
        schema={"type": "object", "properties": {"clause": {"type": "string", "maxLength": 40}},
                "required": ["clause"], "additionalProperties": False},
        max_new_tokens=16, key="merge-test", terms=terms,
    )  # fmt: skip
    return asyncio.run(engine.generate([request]))[0]


def test_a_tenants_upload_changes_nothing_for_another_tenant(engine: Any, tmp_path: Path) -> None:
    store = TermStore(tmp_path / "store", shipped=[])
    store.create_tenant("acme")
    store.create_tenant("globex")
    globex_before = generate(engine, TEXT, store.term_set("globex"))
    folder = tmp_path / "upload"
    folder.mkdir()
    (folder / "contract.tsv").write_text(
        "term\tcanonical\tcategory\nforce majeure clause\tforce majeure\tclause\n"
    )
    store.add("acme", [folder / "contract.tsv"])
    globex_after = generate(engine, TEXT, store.term_set("globex"))
    acme = generate(engine, TEXT, store.term_set("acme"))
    assert (globex_after.text, globex_after.prompt_tokens) == (
        globex_before.text, globex_before.prompt_tokens
    )  # fmt: skip
    assert acme.prompt_tokens < globex_after.prompt_tokens  # acme's prompt has a merged token


def test_merged_and_plain_rows_share_one_batch(engine: Any) -> None:
    alone = [generate(engine, TEXT, TERM_SET), generate(engine, TEXT, None)]
    request = [
        GenerationRequest(
            messages=[{"role": "user", "content": f"{TEXT}\nName the clause as JSON."}],
            schema={
                "type": "object",
                "properties": {"clause": {"type": "string", "maxLength": 40}},
                "required": ["clause"],
                "additionalProperties": False,
            },
            max_new_tokens=16,
            key="merge-test",
            terms=terms,
        )  # fmt: skip
        for terms in (TERM_SET, None)
    ]
    together = asyncio.run(engine.generate(request))
    assert [g.text for g in together] == [g.text for g in alone]


def test_a_unit_runs_with_merged_tokens_in_its_prompt(engine: Any, tmp_path: Path) -> None:
    store = TermStore(tmp_path / "store", shipped=[TERMS])
    pipeline = Pipeline([UNITS_DIR / "extract_price.yaml"], engine=engine, terms=store,
                        calibrator=False)  # fmt: skip
    text = "Purchase order 88: the late payment fee is EUR 40.00, due on receipt."
    result = pipeline.run(text)
    plain = Pipeline([UNITS_DIR / "extract_price.yaml"], engine=engine, terms=False,
                     calibrator=False).run(text)  # fmt: skip
    unit = result["extract_price"]
    assert [h.text for h in result.terms] == ["Purchase order", "late payment fee"]
    assert unit.error is None
    assert unit.output == {"amount": 40.0, "currency": "EUR"}
    assert unit.tokens["prompt"] < plain["extract_price"].tokens["prompt"]


def test_terms_merge_in_message_contents_only(engine: Any) -> None:
    from aau.engines.local import _content_regions

    roles = parse_dictionary(
        "term\tcanonical\tcategory\nassistant\tassistant\trole\nim_start\tx\tmarkup\n"
        "purchase order\tpurchase order\tdocument\n",
        file="roles.tsv",
    )
    view = engine.term_view(TermSet("roles", TermMatcher([roles])))[0]
    messages = [{"role": "user", "content": "Ask the assistant about purchase order 7."}]
    text = engine.tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=False
    )
    names = view.tokens(text)  # default: all but special tokens
    assert "<|im_start|>" in names  # a term inside a special token's text never merges
    ids = view.encode(text, _content_regions(text, messages))
    merged = [view.names[i - view.base_size] for i in ids if i >= view.base_size]
    assert merged == ["Ġ<TERM_assistant>", "Ġ<TERM_purchase_order>"]  # the role header stays
    assert view.decode(ids, skip_special_tokens=False) == text


def test_sentencepiece_style_tokenizers_are_refused(engine: Any) -> None:
    from aau.errors import EngineUnavailable

    class PrefixingTokenizer:  # test double: adds a word-start marker to every piece it encodes
        all_special_tokens: list[str] = []

        def __call__(self, texts: Any, add_special_tokens: bool = False) -> dict[str, Any]:
            def encode(text: str) -> list[int]:
                return [0] + [ord(ch) % 100 for ch in text]

            if isinstance(texts, str):
                return {"input_ids": encode(texts)}
            return {"input_ids": [encode(t) for t in texts]}

    with pytest.raises(EngineUnavailable, match="byte-level BPE"):
        MergedVocabulary(TERM_SET, PrefixingTokenizer(), engine.model)
