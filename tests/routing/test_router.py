"""The router: fitted on real unit files (their data cut short to keep it fast), then asked."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from aau.calibration.features import SentenceEmbedder
from aau.cli.route import add_route_parser
from aau.errors import InputError, SpecError
from aau.limits import LIMITS
from aau.routing import Router, RouterArtifactError, RouterStale
from aau.routing import data as routing_data
from aau.routing.artifact import encode_vectors
from aau.routing.data import UnitTexts
from aau.routing.features import (
    FEATURES,
    MAX_CHUNKS,
    TERM_FEATURES,
    UnitReference,
    chunks,
    value_kinds,
    value_profile,
    words,
)
from aau.routing.router import _with_needs
from aau.routing.training import MIXED_PER_PAIR, _fold, _mixed_texts, _telling_kinds
from aau.spec.model import UnitSpec

UNITS = Path(__file__).resolve().parents[2] / "units"
NAMES = ("extract_price", "extract_date", "extract_quantity")
EMBEDDER = SentenceEmbedder()
needs_embedder = pytest.mark.skipif(
    not EMBEDDER.available, reason="the packaged embedding model is not installed"
)


def _copy_units(folder: Path, lines: int = 40) -> list[UnitSpec]:
    """The real unit files, each with the first ``lines`` of its annotated examples."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        shutil.copy(UNITS / f"{name}.yaml", folder)
        for suffix in (".crf", ".crf.json"):
            if (UNITS / f"{name}{suffix}").exists():
                shutil.copy(UNITS / f"{name}{suffix}", folder)
        head = (UNITS / f"{name}.annotated.jsonl").read_text(encoding="utf-8").splitlines()
        (folder / f"{name}.annotated.jsonl").write_text("\n".join(head[:lines]) + "\n")
    return [UnitSpec.from_file(folder / f"{name}.yaml") for name in NAMES]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Router, Path, Path]:
    if not EMBEDDER.available:
        pytest.skip("the packaged embedding model is not installed")
    folder = tmp_path_factory.mktemp("units")
    units = _copy_units(folder)
    router = Router.fit(units, embedder=EMBEDDER)
    path = router.save(folder / "router.json")
    return router, path, folder


# -- without the embedding model ---------------------------------------------------------


def test_chunks_are_bounded_and_keep_each_sentence() -> None:
    text = "Invoice 17. Total due: EUR 1,250.00. Delivery on 3 May 2025. " * 5_000
    windows = chunks(text)
    assert len(windows) <= MAX_CHUNKS
    assert all(len(w) <= 1_000 for w in windows)
    assert chunks("How much is due?") == ["How much is due?"]


def test_words_include_value_shapes() -> None:
    found = words("Total due: EUR 1,250.00 on 2025-04-12, 12kg.")
    assert {"total", "due", "eur", "#9,999.99", "#9999-99-99", "#99a"} <= found


def test_value_kinds_read_dates_money_and_quantities() -> None:
    assert value_kinds("Invoice of 3 May 2025: total EUR 1.190,00 for 250 kg.") == {
        "date", "money", "quantity"
    }  # fmt: skip
    assert value_kinds("Form field 'date of birth': 31.02.1988") == {"date"}  # no such day
    assert value_kinds("What is the total of this invoice?") == frozenset()
    assert value_kinds("") == frozenset()
    # a dense document is read until each kind is found, not value by value to its end
    dense = "Lieferung von 250 Stück am 22.03.2025 zum Preis von 1.190,00 EUR. " * 400
    assert value_kinds(dense) == {"date", "money", "quantity"}
    late = "Nothing to see here. " * 60 + "Total: EUR 12.00"
    assert value_kinds(late) == {"money"}  # past the first window, within the read head


def test_value_profile_and_the_kinds_that_tell_a_unit() -> None:
    profile = value_profile([frozenset({"date"}), frozenset({"date", "money"}), frozenset()])
    assert profile == {"date": 0.625, "money": 0.375, "quantity": 0.125}

    def ref(name: str, values: dict[str, float]) -> UnitReference:
        empty = np.zeros((0, 3), dtype=np.float32)
        return UnitReference(name, np.zeros(3), "", empty, [], empty, [], empty, [], [], {}, {},
                             values=values)  # fmt: skip

    refs = [
        ref("dates", {"date": 0.98, "money": 0.1, "quantity": 0.1}),
        ref("prices", {"date": 0.1, "money": 0.95, "quantity": 0.1}),
        ref("fees", {"date": 0.1, "money": 0.95, "quantity": 0.1}),
        ref("mail", {"date": 0.05, "money": 0.05, "quantity": 0.1}),
    ]
    # a date tells the date unit (few others hold one); money is held by two units of four
    assert _telling_kinds(refs) == {
        "dates": {"date"}, "prices": frozenset(), "fees": frozenset(), "mail": frozenset()
    }  # fmt: skip


def test_mixed_documents_join_two_units_texts_from_one_fold() -> None:
    def unit(name: str, needs: tuple[str, ...] = ()) -> UnitTexts:
        texts = tuple((f"{name} text number {i}.", "data") for i in range(40))
        return UnitTexts(name, "", (), (), (*texts, (f"{name} golden.", "golden")), (), needs)

    units = [unit("a"), unit("b"), unit("c"), unit("derived", ("a", "b"))]
    mixed = _mixed_texts(units)
    owners = {t: u.name for u in units for t, _ in u.positives}
    pairs = {frozenset(owners[p] for p in parts) for parts in mixed.values()}
    assert pairs == {frozenset("ab"), frozenset("ac"), frozenset("bc")}  # never the derived unit
    for text, parts in mixed.items():
        assert text == " ".join(parts)
        assert len({_fold(p) for p in parts}) == 1  # cross-validation never sees a part
        assert not any(p.endswith("golden.") for p in parts)  # golden cases stay whole
    assert len(mixed) <= 3 * 5 * MIXED_PER_PAIR


def test_a_derived_unit_applies_where_its_needs_all_apply() -> None:
    def ref(name: str, needs: list[str] | None = None) -> object:
        return type("Ref", (), {"name": name, "needs": needs or []})()

    refs = [ref("a"), ref("b"), ref("ab", ["a", "b"]), ref("ax", ["a", "missing"])]
    out = _with_needs(np.array([0.9, 0.7, 0.1, 0.2]), refs)  # type: ignore[arg-type]
    assert out.tolist() == [0.9, 0.7, 0.7, 0.2]
    assert _with_needs(np.array([0.9, 0.1, 0.3, 0.2]), refs)[2] == 0.3  # type: ignore[arg-type]


def test_missing_or_corrupt_artifact_is_a_coded_error(tmp_path: Path) -> None:
    with pytest.raises(RouterArtifactError, match="no fitted router") as missing:
        Router.load(tmp_path / "absent.json")
    assert missing.value.code == "router_artifact"
    bad = tmp_path / "router.json"
    bad.write_bytes(b"\x80\x04\x95pickle")
    with pytest.raises(RouterArtifactError, match="not JSON"):
        Router.load(bad)
    bad.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(RouterArtifactError, match="not a router artifact"):
        Router.load(bad)


def test_oversized_example_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (unit,) = [u for u in _copy_units(tmp_path) if u.name == "extract_price"]
    monkeypatch.setattr(routing_data, "MAX_DATA_BYTES", 100)
    with pytest.raises(SpecError, match="over the router's limit") as error:
        routing_data.unit_texts(unit)
    assert error.value.check == "S009"


def test_unit_texts_split_positives_from_own_negatives(tmp_path: Path) -> None:
    (unit,) = [u for u in _copy_units(tmp_path, lines=600) if u.name == "extract_price"]
    texts = routing_data.unit_texts(unit)
    assert len([t for t, s in texts.positives if s == "data"]) == routing_data.MAX_DATA_POSITIVES
    assert "The meeting moved to Tuesday, room 4." in [t for t, _ in texts.negatives]
    assert ("Invoice 2024-117. Total due: EUR 1,250.00 by 30 April.", "example") in texts.positives


def test_not_for_requests_are_own_negatives_and_enter_the_digest(tmp_path: Path) -> None:
    (shipped,) = [u for u in _copy_units(tmp_path) if u.name == "extract_price"]

    def with_not_for(requests: list[str]) -> UnitSpec:
        routing = shipped.routing.model_copy(update={"not_for": requests})
        return shipped.model_copy(update={"routing": routing})

    unit = with_not_for(["What is the deductible?", "Write a haiku about rain."])
    texts = routing_data.unit_texts(unit)
    assert ("What is the deductible?", "not_for") in texts.negatives
    assert "What is the deductible?" not in [t for t, _ in texts.positives]
    assert routing_data.unit_digest(unit) != routing_data.unit_digest(with_not_for([]))


# -- fitted on real units ----------------------------------------------------------------


@needs_embedder
def test_routes_and_explains(fitted: tuple[Router, Path, Path]) -> None:
    router, _, _ = fitted
    decision = router.route("Invoice 2025-117. Total due: EUR 1,250.00, VAT included.")
    assert decision.units[0].unit == "extract_price"
    assert decision.units[0].applies
    assert "extract_price" in decision.applies
    assert all(0.0 <= u.probability <= 1.0 for u in decision.units)
    top = decision.units[0]
    assert 1 <= len(top.contributions) <= 4
    assert {c.feature for c in top.contributions} <= set(FEATURES)
    assert top.contributions[0].contribution >= top.contributions[-1].contribution
    assert decision.nearest
    assert decision.nearest[0].unit in NAMES
    assert decision.nearest[0].similarity >= decision.nearest[-1].similarity
    body = decision.to_dict()
    assert body["applies"] == decision.applies
    assert len(body["units"]) == 3
    quantity = router.route("Please deliver 240 pallets of cement, net weight 12,000 kg.")
    assert quantity.units[0].unit == "extract_quantity"


@needs_embedder
def test_saved_router_is_json_and_loads_to_the_same_decisions(
    fitted: tuple[Router, Path, Path],
) -> None:
    router, path, folder = fitted
    body = json.loads(path.read_text(encoding="utf-8"))
    assert body["format"] == "aau-router/1"
    assert set(body["models"]) == {"terms", "no_terms"}
    units = [UnitSpec.from_file(folder / f"{name}.yaml") for name in NAMES]
    loaded = Router.load(path, units=units, embedder=EMBEDDER)
    text = "The parcel arrives on 14 March 2025."
    before = {u.unit: u.probability for u in router.route(text).units}
    after = {u.unit: u.probability for u in loaded.route(text).units}
    assert after == pytest.approx(before, abs=0.02)  # the references are stored as float16


@needs_embedder
def test_no_terms_ablation_reads_no_term_features(fitted: tuple[Router, Path, Path]) -> None:
    router, _, _ = fitted
    text = "Total due: 1,250.00 euros."
    with_terms = router.route(text)
    without = router.route(text, use_terms=False)
    assert with_terms.term_hits > 0
    assert with_terms.use_terms
    assert without.term_hits == 0
    assert not without.use_terms
    assert not set(router.models["no_terms"].features) & set(TERM_FEATURES)
    assert set(router.models["terms"].features) == set(FEATURES)
    features = {c.feature for u in without.units for c in u.contributions}
    assert not features & set(TERM_FEATURES)


@needs_embedder
def test_changed_unit_data_makes_the_router_stale(
    fitted: tuple[Router, Path, Path], tmp_path: Path
) -> None:
    _, path, folder = fitted
    copy = tmp_path / "units"
    shutil.copytree(folder, copy)
    data = copy / "extract_date.annotated.jsonl"
    data.write_text(data.read_text() + '{"text": "Due 1 May 2025.", "spans": []}\n')
    units = [UnitSpec.from_file(copy / f"{name}.yaml") for name in NAMES]
    with pytest.raises(RouterStale, match=r"changed: extract_date") as error:
        Router.load(path, units=units)
    assert error.value.code == "router_stale"
    assert any("--fit" in note for note in error.value.__notes__)
    with pytest.raises(RouterStale, match="not given: extract_quantity"):
        Router.load(path, units=units[:2])


@needs_embedder
def test_hostile_inputs(fitted: tuple[Router, Path, Path]) -> None:
    router, _, _ = fitted
    with pytest.raises(InputError) as empty:
        router.route("  \n\t ")
    assert empty.value.code == "empty_input"
    with pytest.raises(InputError) as huge:
        router.route("x" * (LIMITS.text_chars + 1))
    assert huge.value.code == "input_too_large"
    with pytest.raises(InputError) as binary:
        router.route("\x00\x01\x02" * 100)
    assert binary.value.code == "binary_input"
    long = router.route("Total due EUR 12.50 for 3 boxes on 1 May 2025. " * 10_000)
    assert long.windows <= MAX_CHUNKS
    assert "extract_price" in long.applies


@needs_embedder
def test_tampered_vectors_are_refused(fitted: tuple[Router, Path, Path], tmp_path: Path) -> None:
    _, path, _ = fitted
    body = json.loads(path.read_text(encoding="utf-8"))
    body["units"][0]["examples"]["vectors"] = encode_vectors(np.ones((2, 7)))
    bad = tmp_path / "router.json"
    bad.write_text(json.dumps(body))
    with pytest.raises(RouterArtifactError, match="shape 2x7"):
        Router.load(bad)
    body = json.loads(path.read_text(encoding="utf-8"))
    body["models"]["terms"]["coef"] = body["models"]["terms"]["coef"][:-1]
    bad.write_text(json.dumps(body))
    with pytest.raises(RouterArtifactError, match="weights do not match"):
        Router.load(bad)
    body = json.loads(path.read_text(encoding="utf-8"))
    body["units"][0]["lexical"] = encode_vectors(np.full((1, 8), np.inf))
    bad.write_text(json.dumps(body))
    with pytest.raises(RouterArtifactError, match="lexical"):
        Router.load(bad)
    body["units"][0]["lexical"] = None
    body["units"][0]["head"] = encode_vectors(np.ones((2, 385)))
    bad.write_text(json.dumps(body))
    with pytest.raises(RouterArtifactError, match="one head row"):
        Router.load(bad)


@needs_embedder
def test_route_command(
    fitted: tuple[Router, Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, path, folder = fitted
    parser = argparse.ArgumentParser()
    add_route_parser(parser.add_subparsers(dest="command"))

    def run(*argv: str) -> int:
        args = parser.parse_args(["route", *argv])
        return int(args.func(args))

    assert run(str(folder), "--router", str(path), "--text", "Total: EUR 99.00", "--json") == 0
    decision = json.loads(capsys.readouterr().out)
    assert decision["applies"][0] == "extract_price"
    assert decision["use_terms"]
    assert run(str(folder), "--router", str(path), "--text", "Total: EUR 99", "--no-terms") == 0
    out = capsys.readouterr().out
    assert "applies: extract_price" in out
    assert "without term hits" in out
    assert run(str(folder), "--router", str(path), "--text", "") == 2
    assert "[empty_input]" in capsys.readouterr().err
    with pytest.raises(RouterStale):
        run(str(folder / "extract_price.yaml"), "--router", str(path), "--text", "x")
