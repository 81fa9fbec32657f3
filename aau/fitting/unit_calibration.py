"""Fitting a unit's own calibrator (``aau calibrate --unit``): ``aau.calibration.unit_calibrator``.

The rows are every path's answer on every labelled text of the unit (the data its trainable
path learns from: a classifier's labelled examples, a records or CRF path's annotated texts),
each judged right or wrong against the text's gold output:

- **Out of fold, whole languages out.** The texts are cut into ``folds`` folds: the texts of the
  unit's main language (the one most texts are in) by a seeded hash, every other language whole,
  into one fold (the largest languages first, round robin). Each fold's trainable paths (CRF,
  classifier, records) are trained on the other folds and answer that fold's texts. A German
  text is thus answered by paths that never saw German, as an unseen language's text would be at
  run time; the vocabulary and language signals are computed against the fold's own training
  texts, so the calibrator learns what being unlike the training data does to each path.
- **The model too**, when an engine is given: it answers a seeded subset of the texts
  (``model_texts``; the model is not trained on them, so no fold is needed), sent as the run
  driver sends them, checked as it checks them.
- **Witnesses**: each answer's agreement is measured against the other paths' answers on the
  same text, as the runner measures it.

A logistic regression (scikit-learn) over the standardised signals is then fitted on the
training texts' rows; its regularisation is chosen among ``C_GRID`` by the log loss of fits that
leave each fold out. The figures in the artifact's report (``cv_*``) are those left-out folds':
rows no fit saw.

The training texts are the unit's own, mostly generated from templates: on them the paths look
surer than on a real document, and a calibrator fitted on them alone is overconfident on real
text (per answer, on the dev held-out texts: ECE 0.34 for extract_penalty_clauses, 0.14 for
extract_revenue_previous; ``apart_raw_ece`` in the report).
Texts written apart from them (``apart``: a unit's ``<name>.heldout.jsonl``, never trained on)
are answered by the shipped paths, and the regression's logit is rescaled on their rows (Platt
scaling: two numbers, ``_rescaling``); ``apart_cv_*`` in the report measure that step by
cross-validation over those texts.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aau.answers import FallbackPath, PathAnswer
from aau.calibration.base import PathEvidence
from aau.calibration.features import output_normalizers
from aau.calibration.report import expected_calibration_error
from aau.calibration.unit_calibrator import (
    UNIT_CALIBRATION_FORMAT,
    Rescale,
    UnitCalibrationData,
    Vocabulary,
    language_of,
    unit_signals,
)
from aau.engines.base import Engine
from aau.errors import AAUError, CalibrationError
from aau.fallbacks.annotated import load_annotated
from aau.fallbacks.classifier import ClassifierFallback
from aau.fallbacks.crf import CrfFallback, sha256_hex
from aau.fallbacks.crf_training import gold_output, train_unit
from aau.fallbacks.labelled import load_labelled
from aau.fallbacks.records import RecordsFallback, RecordsPath, records_equal
from aau.files import write_replacing
from aau.fitting.runs import check_answer, is_correct, model_generations
from aau.runner.runner import UnitRunner, primary_confidence
from aau.spec.model import UnitSpec

__all__ = [
    "C_GRID",
    "GoldCase",
    "answer_correct",
    "fit_unit_calibration",
    "gold_cases",
    "write_unit_calibration",
]

C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
_TRAINABLE = (ClassifierFallback, RecordsFallback, CrfFallback)


@dataclass(frozen=True, slots=True)
class GoldCase:
    """One labelled text: its line in the examples file, its gold output, its language, fold."""

    line: int
    text: str
    gold: Mapping[str, Any]
    language: str
    fold: int = 0
    apart: bool = False
    """Written apart from the training texts (``extra``): answered by the shipped paths."""


@dataclass
class _Row:
    case: int
    path: str
    signals: dict[str, float]
    correct: bool
    answer: PathAnswer = field(repr=False)


def _source(unit: UnitSpec) -> ClassifierFallback | RecordsFallback | CrfFallback:
    source = next((f for f in unit.fallbacks if isinstance(f, _TRAINABLE)), None)
    if source is None:
        raise CalibrationError(
            f"{unit.name}: no trainable path (classifier, records or crf) holds labelled texts "
            "to fit a unit calibration from"
        )
    return source


def gold_cases(unit: UnitSpec) -> tuple[list[GoldCase], str]:
    """The unit's labelled texts with their gold outputs, and the sha256 of their file."""
    source = _source(unit)
    path = unit.base_dir / source.examples
    digest = sha256_hex(path.read_bytes())
    cases: list[GoldCase] = []
    if isinstance(source, ClassifierFallback):
        fields = list(unit.output.get("properties", {}))
        for labelled in load_labelled(path, unit.output, fields, source.max_chars):
            text = labelled.text
            cases.append(GoldCase(labelled.line, text, labelled.output, language_of(text)))
    else:
        records = RecordsPath(source, unit) if isinstance(source, RecordsFallback) else None
        for example in load_annotated(path, source.labels):
            if records is not None:
                gold = records.gold_output(example)
            else:
                assert isinstance(source, CrfFallback)
                gold = gold_output(example, source, unit)
            cases.append(GoldCase(example.line, example.text, gold, language_of(example.text)))
    return cases, digest


def _folded(cases: Sequence[GoldCase], folds: int, seed: int) -> list[GoldCase]:
    counts: dict[str, int] = {}
    for case in cases:
        counts[case.language] = counts.get(case.language, 0) + 1
    main = max(counts, key=lambda language: (counts[language], language))
    others = sorted((lang for lang in counts if lang != main), key=lambda g: (-counts[g], g))
    fold_of_language = {language: i % folds for i, language in enumerate(others)}
    out = []
    for case in cases:
        if case.language == main:
            digest = hashlib.sha256(f"{seed}:{case.text}".encode()).hexdigest()
            fold = int(digest, 16) % folds
        else:
            fold = fold_of_language[case.language]
        out.append(GoldCase(case.line, case.text, case.gold, case.language, fold))
    return out


def apart_cases(unit: UnitSpec, path: Path, fold: int) -> list[GoldCase]:
    """Labelled texts written apart from the unit's training data (``{"text", "output"}`` lines)."""
    fields = list(unit.output.get("properties", {}))
    return [
        GoldCase(e.line, e.text, e.output, language_of(e.text), fold, apart=True)
        for e in load_labelled(path, unit.output, fields, max_chars=1_000_000)
    ]


def answer_correct(unit: UnitSpec, output: Mapping[str, Any], gold: Mapping[str, Any]) -> bool:
    """Whether ``output`` says what ``gold`` says.

    A records path's list is compared as records (any order, its values compared as the kind
    compares them: ``aau.fallbacks.records.records_equal``); fields of a CRF path through its
    normalizers; anything else as JSON values (true is not 1).
    """
    records = next((f for f in unit.fallbacks if isinstance(f, RecordsFallback)), None)
    crf = next((f for f in unit.fallbacks if isinstance(f, CrfFallback)), None)
    for name, wanted in gold.items():
        got = output.get(name)
        if records is not None and name == records.list_name:
            item = unit.output["properties"][name].get("items", {}).get("properties", {})
            if not records_equal(wanted, got, item):
                return False
        elif crf is not None and name in crf.fields:
            if not is_correct({name: got}, {name: wanted}, crf):
                return False
        elif json.dumps(got, sort_keys=True) != json.dumps(wanted, sort_keys=True):
            return False
    return True


def _fold_paths(
    unit: UnitSpec, cases: Sequence[GoldCase], fold: int, work: Path
) -> list[FallbackPath]:
    """The unit's paths with every trainable one trained on the texts outside ``fold``."""
    kept_lines = {c.line for c in cases if c.fold != fold and not c.apart}
    fallbacks = []
    for index, spec in enumerate(unit.fallbacks):
        if not isinstance(spec, _TRAINABLE):
            fallbacks.append(spec)
            continue
        lines = (unit.base_dir / spec.examples).read_text(encoding="utf-8").splitlines()
        kept = [line for number, line in enumerate(lines, start=1)
                if number in kept_lines and line.strip()]  # fmt: skip
        name = f"{unit.name}.fold{fold}.{index}"
        suffix = ".json" if isinstance(spec, ClassifierFallback) else ".crf"
        (work / f"{name}.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
        fallbacks.append(spec.model_copy(update={"examples": f"{name}.jsonl",
                                                 "model": f"{name}{suffix}"}))  # fmt: skip
    fold_unit = unit.model_copy(
        update={"fallbacks": fallbacks, "source": work / f"{unit.name}.yaml"}
    )
    for spec in fold_unit.fallbacks:
        if isinstance(spec, CrfFallback):
            train_unit(fold_unit, spec=spec)
        elif isinstance(spec, _TRAINABLE):
            spec.train(fold_unit)
    return [spec.build(fold_unit) for spec in fold_unit.fallbacks]


def _model_answers(
    runner: UnitRunner, cases: Sequence[GoldCase], chunk: int = 16
) -> dict[int, tuple[PathAnswer, Any]]:
    """The model's valid answers to ``cases`` (by index), with their generations."""

    async def run() -> list[Any]:
        out: list[Any] = []
        for first in range(0, len(cases), chunk):
            out += await model_generations(runner, [c.text for c in cases[first : first + chunk]])
        return out

    answers: dict[int, tuple[PathAnswer, Any]] = {}
    for index, generation in enumerate(asyncio.run(run())):
        if isinstance(generation, AAUError) or generation.finish_reason != "stop":
            continue
        try:
            output = json.loads(generation.text)
        except json.JSONDecodeError:
            continue
        if not isinstance(output, dict):
            continue
        answer = PathAnswer(output=runner.model_output(output),
                            confidence=primary_confidence(generation))  # fmt: skip
        answers[index] = (answer, generation)
    return answers


def _sampled(cases: Sequence[GoldCase], count: int, seed: int) -> list[int]:
    ranked = sorted(range(len(cases)), key=lambda i: hashlib.sha256(
        f"{seed}:model:{cases[i].text}".encode()).hexdigest())  # fmt: skip
    return sorted(ranked[:count])


def _rows(
    unit: UnitSpec,
    cases: Sequence[GoldCase],
    folds: int,
    engine: Engine | None,
    model_texts: int,
    seed: int,
) -> tuple[list[_Row], list[str], list[str]]:
    """Every path's checked answer on every case, with its signals (see the module docstring)."""
    runner = UnitRunner(unit, engine)
    normalizers = output_normalizers(unit)
    paths = (["primary"] if engine is not None else []) + [p.name for p in runner.fallbacks]
    answers: dict[int, list[tuple[str, PathAnswer, Any]]] = {i: [] for i in range(len(cases))}
    vocabularies: dict[int, Vocabulary] = {}
    trained = [c for c in cases if not c.apart]
    with tempfile.TemporaryDirectory(prefix="aau-unit-calibration-") as work:
        for fold in range(folds + 1):
            members = [i for i, c in enumerate(cases) if c.fold == fold]
            if not members:
                continue
            if fold == folds:  # the texts written apart: the shipped paths, every training text
                vocabularies[fold] = Vocabulary.of(c.text for c in trained)
                fold_paths = runner.fallbacks
            else:
                vocabularies[fold] = Vocabulary.of(c.text for c in trained if c.fold != fold)
                fold_paths = _fold_paths(unit, cases, fold, Path(work))
            for fold_path in fold_paths:
                for i in members:
                    try:
                        answer = fold_path.extract(cases[i].text, runner.context)
                    except AAUError:
                        continue
                    answers[i].append((fold_path.name, answer, None))
    if engine is not None:
        apart = [i for i, c in enumerate(cases) if c.apart]
        chosen = sorted(set(_sampled(cases, model_texts, seed)) | set(apart))
        for index, (answer, generation) in _model_answers(
            runner, [cases[i] for i in chosen]
        ).items():
            answers[chosen[index]].append(("primary", answer, generation))
    signal_names = sorted({name for given in answers.values() for _, a, _ in given
                           for name in a.signals})  # fmt: skip
    rows: list[_Row] = []
    for i, given in answers.items():
        case = cases[i]
        for slot, (path, answer, generation) in enumerate(given):
            outcome, checked = check_answer(runner, path, answer, case.text)
            if outcome != "valid":
                continue  # the runner scores only valid answers; the rest fall back
            witnesses = [a.output for other, (_, a, _) in enumerate(given) if other != slot]
            evidence = PathEvidence(
                path, checked, outcome="valid", text=case.text, description=unit.description,
                generation=generation, witnesses=witnesses, normalizers=normalizers,
            )  # fmt: skip
            signals = unit_signals(evidence, paths, signal_names, vocabularies[case.fold])
            correct = answer_correct(unit, checked.output, case.gold)
            rows.append(_Row(i, path, signals, correct, checked))
    return rows, paths, signal_names


def _fit(x: np.ndarray, y: np.ndarray, c: float) -> Any:
    from sklearn.linear_model import LogisticRegression

    if len(set(y.tolist())) < 2:  # every answer right (or wrong): only the intercept is known
        model = LogisticRegression(C=1e-6, max_iter=1000)
        flip = np.zeros_like(y)
        flip[0] = 1 - y[0]
        return model.fit(np.vstack([x, x[:1]]), np.concatenate([y, flip[:1]]))
    return LogisticRegression(C=c, max_iter=2000).fit(x, y)


def _log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def _ece(p: np.ndarray, y: np.ndarray) -> float:
    return expected_calibration_error(p.tolist(), y.astype(bool).tolist())


def _left_out(x: np.ndarray, y: np.ndarray, groups: np.ndarray, c: float) -> np.ndarray:
    """Each row's probability from a fit that left its fold out."""
    p = np.full(len(y), float(y.mean()))
    for group in np.unique(groups):
        held = groups == group
        if held.all() or (~held).sum() < 2:
            continue
        p[held] = _fit(x[~held], y[~held], c).predict_proba(x[held])[:, 1]
    return p


def fit_unit_calibration(
    unit: UnitSpec,
    *,
    engine: Engine | None = None,
    folds: int = 5,
    model_texts: int = 160,
    seed: int = 20261203,
    apart: Path | None = None,
    log: Any = None,
) -> UnitCalibrationData:
    """Fit ``unit``'s own calibrator (see the module docstring); its artifact's data.

    Args:
        unit: a unit with a trainable path (classifier, records or CRF) and its labelled texts.
        engine: the engine whose model answers too; None fits the fallbacks' answers alone (the
            model's answers are then scored as a path never seen: its own confidence only).
        folds: folds of the out-of-fold runs (each at least one language or main-language share).
        model_texts: how many training texts the model answers (it answers every ``apart`` one).
        apart: labelled texts written apart from the training data (``{"text", "output"}``
            lines: a unit's ``<name>.heldout.jsonl``), answered by the shipped paths, which never
            saw them: real wording, where generated training texts would teach the calibrator
            that every text is easy. They form a group of their own in the choice of ``C``.
        seed: the folds' and the model sample's seed.
        log: where progress lines go (a callable taking a string), or None.

    Raises:
        CalibrationError: the unit has no labelled texts to fit from, or too few.
    """
    say = log or (lambda _: None)
    started = time.perf_counter()
    raw_cases, digest = gold_cases(unit)
    if len(raw_cases) < 2 * folds:
        raise CalibrationError(f"{unit.name}: {len(raw_cases)} labelled texts; "
                               f"at least {2 * folds} are needed for {folds} folds")  # fmt: skip
    cases = _folded(raw_cases, folds, seed)
    if apart is not None:
        cases += apart_cases(unit, apart, folds)
    written_apart = sum(c.apart for c in cases)
    languages = sorted(_count(c.language for c in cases).items(), key=lambda kv: -kv[1])
    say(f"{unit.name}: {len(cases) - written_apart} labelled texts, {written_apart} written "
        f"apart; languages {', '.join(f'{g} {n}' for g, n in languages)}")  # fmt: skip
    rows, paths, signal_names = _rows(unit, cases, folds, engine, model_texts, seed)
    if not rows:
        raise CalibrationError(f"{unit.name}: no path gave a valid answer on its labelled texts")
    features = list(rows[0].signals)
    x_raw = np.asarray([[r.signals[f] for f in features] for r in rows], dtype=np.float64)
    y = np.asarray([float(r.correct) for r in rows])
    groups = np.asarray([cases[r.case].fold for r in rows])
    is_apart = np.asarray([cases[r.case].apart for r in rows])
    trained = ~is_apart
    if not trained.any():
        raise CalibrationError(f"{unit.name}: no path gave a valid answer on its training texts")
    mean = x_raw[trained].mean(axis=0)
    scale = x_raw[trained].std(axis=0)
    scale[scale < 1e-9] = 1.0
    x = (x_raw - mean) / scale
    # Stage 1, on the training texts' out-of-fold rows; its C by leaving each fold out.
    xt, yt, gt = x[trained], y[trained], groups[trained]
    losses = {c: _log_loss(_left_out(xt, yt, gt, c), yt) for c in C_GRID}
    chosen = min(C_GRID, key=lambda c: (round(losses[c], 6), -c))
    held = np.zeros(len(y))
    held[trained] = _left_out(xt, yt, gt, chosen)
    model = _fit(xt, yt, chosen)
    logits = model.decision_function(x)
    held[is_apart] = _sigmoid(logits[is_apart])
    # Stage 2: the scale of the logit, fitted on the texts written apart.
    rescale, apart_report = _rescaling(
        logits, y, is_apart, [r.case for r in rows], [r.path for r in rows]
    )
    own = np.asarray([r.answer.confidence for r in rows])
    by_path: dict[str, dict[str, float]] = {}
    for path in paths:
        mask = np.asarray([r.path == path for r in rows]) & trained
        if mask.any():
            by_path[path] = {
                "rows": int(mask.sum()),
                "accuracy": round(float(y[mask].mean()), 4),
                "own_confidence": round(float(own[mask].mean()), 4),
                "cv_mean_confidence": round(float(held[mask].mean()), 4),
                "cv_ece": round(_ece(held[mask], y[mask]), 4),
            }
    report = {
        "texts": sum(not c.apart for c in cases),
        "rows": int(trained.sum()),
        "folds": folds,
        "model_texts": model_texts if engine is not None else 0,
        "engine": engine.name if engine is not None else None,
        "c": chosen,
        "cv_log_loss": {str(c): round(v, 4) for c, v in losses.items()},
        "cv_ece": round(_ece(held[trained], yt), 4),
        "paths": by_path,
        **apart_report,
        "seconds": round(time.perf_counter() - started, 1),
    }
    vocabulary = Vocabulary.of(c.text for c in cases if not c.apart)
    return UnitCalibrationData(
        format=UNIT_CALIBRATION_FORMAT, unit=unit.name, paths=paths, signal_names=signal_names,
        features=features, mean=[float(f"{v:.8g}") for v in mean],
        scale=[float(f"{v:.8g}") for v in scale],
        coef=[float(f"{v:.8g}") for v in model.coef_[0]],
        intercept=float(f"{model.intercept_[0]:.8g}"),
        rescale=rescale.rounded(),
        words=sorted(vocabulary.words), pairs=sorted(vocabulary.pairs),
        languages=dict(sorted(vocabulary.languages.items())),
        data_sha256=digest, report=report,
    )  # fmt: skip


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -60.0, 60.0))))


def _rescaling(
    logits: np.ndarray,
    y: np.ndarray,
    is_apart: np.ndarray,
    case_of: Sequence[int],
    path_of: Sequence[str],
    folds: int = 5,
) -> tuple[Rescale, dict[str, Any]]:
    """Platt scaling of stage 1's logit on the rows of texts written apart; its report.

    A few numbers learnt from a few dozen real texts: the training texts teach which signals
    matter, these how sure a right-looking answer really is on real text. Two forms, the one
    with the lower cross-validated log loss kept: ``a * logit + b``, or the same with one ``b``
    per path (a model that is right on a tenth of real texts and a classifier right on two
    thirds need not share an offset). Its figures (``apart_cv_*``) come from ``folds``-fold
    cross-validation over those texts; ``apart_raw_*`` are stage 1's alone. Without enough such
    rows the logit is kept as it is.
    """
    rows = np.where(is_apart)[0]
    if len(rows) < 2 * folds or len(set(y[rows].tolist())) < 2:
        return Rescale(), ({"apart_rows": int(len(rows))} if len(rows) else {})
    from sklearn.linear_model import LogisticRegression

    texts = sorted({case_of[i] for i in rows})
    fold_of = {text: k % folds for k, text in enumerate(texts)}
    fold = np.asarray([fold_of[case_of[i]] for i in rows])
    paths = sorted({path_of[i] for i in rows})
    z, t = logits[rows].reshape(-1, 1), y[rows]
    forms = {
        "shared": z,
        "per_path": np.hstack([z, [[float(path_of[i] == p) for p in paths] for i in rows]]),
    }

    def fitted(x: np.ndarray, target: np.ndarray) -> Any:
        return LogisticRegression(C=1.0, max_iter=1000).fit(x, target)

    held: dict[str, np.ndarray] = {}
    for name, x in forms.items():
        p = np.zeros(len(rows))
        for k in range(folds):
            train = fold != k
            if len(set(t[train].tolist())) < 2:
                p[~train] = t[train].mean()
                continue
            p[~train] = fitted(x[train], t[train]).predict_proba(x[~train])[:, 1]
        held[name] = p
    losses = {name: _log_loss(p, t) for name, p in held.items()}
    form = min(losses, key=lambda name: (round(losses[name], 6), name != "shared"))
    final = fitted(forms[form], t)
    intercept = float(final.intercept_[0])
    offsets = ({path: intercept + float(c) for path, c in zip(paths, final.coef_[0][1:],
                                                              strict=True)}
               if form == "per_path" else {})  # fmt: skip
    raw = _sigmoid(logits[rows])
    p = held[form]
    rescale = Rescale(slope=float(final.coef_[0][0]), offset=intercept, offsets=offsets)
    return rescale, {
        "apart_texts": len(texts),
        "apart_rows": int(len(rows)),
        "apart_accuracy": round(float(t.mean()), 4),
        "apart_raw_mean_confidence": round(float(raw.mean()), 4),
        "apart_raw_ece": round(_ece(raw, t), 4),
        "apart_rescale": form,
        "apart_cv_log_loss": {name: round(v, 4) for name, v in losses.items()},
        "apart_cv_mean_confidence": round(float(p.mean()), 4),
        "apart_cv_ece": round(_ece(p, t), 4),
    }


def _count(items: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts


def write_unit_calibration(data: UnitCalibrationData, path: Path) -> None:
    """Write the artifact whole (a reader never sees half a file)."""
    text = json.dumps(data.model_dump(), ensure_ascii=False, separators=(",", ":"))
    write_replacing(path, text + "\n")
