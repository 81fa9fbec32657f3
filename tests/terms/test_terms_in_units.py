"""Term hits reach what units are made of: prompt templates, CRF features, results."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pycrfsuite

import aau
from aau.answers import PathContext
from aau.errors import EngineUnavailable
from aau.fallbacks.crf import CrfFallback, config_digest
from aau.fallbacks.crf_training import train_unit
from aau.prompts.render import render_messages
from aau.terms import TermSet, TermStore, parse_dictionary
from aau.terms.matcher import TermMatcher
from aau.testing import FunctionEngine
from tests.conftest import UNITS_DIR

TERMS = parse_dictionary(
    "term\tcanonical\tcategory\nEUR\tEUR\tcurrency\nlate payment fee\tlate payment fee\tfee\n",
    file="t.tsv",
)


def test_templates_read_the_term_hits_of_the_input_and_of_each_example(
    unit_data: dict, tmp_path: Path
) -> None:
    unit_data["prompt"]["template"] = (
        "Text: {{ text }}{% for t in terms %} [{{ t.category }}: {{ t.text }}]{% endfor %}"
    )
    unit_data["prompt"]["examples"][0]["input"] = "Total: 10 EUR"
    spec = aau.UnitSpec.model_validate(unit_data)
    term_set = TermSet(None, TermMatcher([TERMS]))
    text = "The late payment fee is 40 EUR."
    messages = render_messages(spec, text, terms=term_set, term_hits=term_set.find(text))
    assert messages[1]["content"] == "Text: Total: 10 EUR [currency: EUR]"
    assert messages[-1]["content"] == (
        "Text: The late payment fee is 40 EUR. [fee: late payment fee] [currency: EUR]"
    )
    assert render_messages(spec, text)[-1]["content"] == "Text: The late payment fee is 40 EUR."


def test_pipeline_results_carry_the_tenants_hits(tmp_path: Path) -> None:
    store = TermStore(tmp_path / "store", shipped=[TERMS])
    pipeline = aau.Pipeline(
        [UNITS_DIR / "extract_price.yaml"], engine=False, terms=store, calibrator=False
    )
    result = pipeline.run("The late payment fee is 40.00 EUR.")
    assert [(h.text, h.category) for h in result.terms] == [
        ("late payment fee", "fee"),
        ("EUR", "currency"),
    ]
    assert result.to_dict().keys() == {"id", "units"}  # the batch line format is unchanged
    off = aau.Pipeline(
        [UNITS_DIR / "extract_price.yaml"], engine=False, terms=False, calibrator=False
    )
    assert off.run("The late payment fee is 40.00 EUR.").terms == []


def test_a_crf_path_can_learn_from_and_read_term_hits(tmp_path: Path) -> None:
    for name in ("extract_price.yaml", "extract_price.annotated.jsonl"):
        shutil.copy(UNITS_DIR / name, tmp_path / name)
    path = tmp_path / "extract_price.yaml"
    path.write_text(
        path.read_text().replace(
            "    model: extract_price.crf\n",
            "    model: extract_price.crf\n    features: {use_terms: true}\n",
        )
    )
    unit = aau.load_unit(path)
    crf = next(f for f in unit.fallbacks if isinstance(f, CrfFallback))
    shipped = next(
        f
        for f in aau.load_unit(UNITS_DIR / "extract_price.yaml").fallbacks
        if isinstance(f, CrfFallback)
    )
    assert config_digest(crf) != config_digest(shipped)
    train_unit(unit)
    tagger = pycrfsuite.Tagger()
    tagger.open(str(tmp_path / "extract_price.crf"))
    attributes = {attr for attr, _ in tagger.info().state_features}
    assert any(attr.startswith("term:") for attr in attributes)  # it learned from hits
    # Fault injection: the model is down, so the CRF path answers.
    engine = FunctionEngine(lambda request: EngineUnavailable("model server unreachable"))
    result = aau.Pipeline([unit], engine=engine, calibrator=False).run(
        "Late payment fee: EUR 40.00 due now."
    )
    assert result["extract_price"].path == "crf"
    assert result["extract_price"].output == {"amount": 40.0, "currency": "EUR"}
    # The run hands the hits to the path: with them, the tagger sees other features.
    path = next(
        p
        for p in aau.Pipeline([unit], engine=False, calibrator=False).runners[0].fallbacks
        if p.name == "crf"
    )
    text = "Late payment fee: EUR 40.00 due now."
    context = PathContext(unit_name=unit.name, output_schema=unit.output)
    hits = TermSet(None, TermMatcher([TERMS])).find(text)
    with_hits = path.extract(text, replace(context, extras={"term_hits": hits}))
    without = path.extract(text, context)
    assert with_hits.output == without.output
    assert with_hits.confidence != without.confidence
