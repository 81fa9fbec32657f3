"""Fitting the calibrator: labelled answers in, a fitted ``MlpCalibrator`` and its thresholds out.

This is the pure part of ``aau calibrate``: it needs the labelled runs as records (built and
cached by ``aau.fitting.runs``) and nothing of the unit runner. ``labelled_answers`` flattens
the records into one labelled answer per path per text, ``split_texts`` splits the texts
deterministically into training and validation texts (a scan goes with the text it was made
from), ``fit_calibrator`` fits the MLP on the training texts and ``evaluate`` scores answers for
``aau.calibration.report``. ``aau.fitting.calibrate`` puts them together.

Fitting (``fit_calibrator``): a share of the training texts is held back; the network is fitted
on the rest with early stopping on the held-back texts, which then also fit a Platt rescaling of
its logit. Copies of some rows with their OCR, coherence or agreement signals masked teach the
network what a missing signal means, since the labelled runs always have them.

The acceptance threshold (``policy.threshold`` of the units) is chosen on the training texts
alone (``choose_thresholds``): k-fold cross-validation fits a calibrator on k-1 folds and scores
the held-out fold, and the threshold at which selection over those out-of-fold confidences is
right most often wins. The validation texts are only ever measured.
"""

from __future__ import annotations

import hashlib
import json as jsonlib
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from aau.calibration.calibrator import Member, MlpCalibrator, encode, network
from aau.calibration.features import (
    FEATURE_SPEC,
    FeatureSpec,
    PathObservation,
    agreement_signals,
    generation_signals,
    output_normalizers,
    span_signals,
    text_signals,
    witness_signals,
)
from aau.calibration.report import EvaluatedAnswer, selection_accuracy, summarize
from aau.engines.base import Generation
from aau.files import write_replacing
from aau.spec.model import UnitSpec

__all__ = [
    "HEADLINE",
    "LabelledAnswer",
    "ThresholdChoice",
    "ThresholdSettings",
    "TrainingSettings",
    "choose_threshold",
    "choose_thresholds",
    "cross_validated",
    "evaluate",
    "fit_calibrator",
    "labelled_answers",
    "print_thresholds",
    "split_texts",
    "threshold_grid",
    "unit_normalizers",
    "write_summary",
]

HEADLINE = ("ece", "ece_raw", "brier", "selection_accuracy", "best_single_path_accuracy")
_MASKABLE = (("ocr_quality", "ocr_document_quality"),
             ("coherence_neighbours", "coherence_description"),
             ("agreement", "witnesses_with_value"))  # fmt: skip


@dataclass(frozen=True, slots=True)
class TrainingSettings:
    """Hyper-parameters of ``fit_calibrator`` (``training:`` in the calibration ``config.yaml``)."""

    seed: int = 13
    hidden: tuple[int, ...] = (32, 16)
    epochs: int = 400
    learning_rate: float = 0.01
    weight_decay: float = 0.001
    dropout: float = 0.1
    early_stopping_share: float = 0.15
    patience: int = 40
    missing_dropout: float = 0.15
    batch_size: int = 128
    members: int = 5

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> TrainingSettings:
        """Settings from a config mapping; unknown keys are refused."""
        values = _known_keys(cls, data, "training")
        if "hidden" in values:
            values["hidden"] = tuple(values["hidden"])
        return cls(**values)


def _known_keys(settings: type, data: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``data`` as a dict, after refusing keys that are not fields of ``settings``."""
    known = {f.name for f in fields(settings)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown {what} settings {unknown}. Available: {sorted(known)}")
    return dict(data)


@dataclass(frozen=True, slots=True)
class ThresholdSettings:
    """How the threshold is chosen (``threshold:`` in the calibration ``config.yaml``).

    Attributes:
        folds: cross-validation folds of the training texts.
        seed: seeds the assignment of texts to folds.
        low: the lowest threshold tried (below 0.5 an answer is accepted that is more likely
            wrong than right).
        high: the highest (1.0: never accept early; the most confident answer wins).
        step: the spacing of the thresholds tried.
    """

    folds: int = 5
    seed: int = 29
    low: float = 0.5
    high: float = 1.0
    step: float = 0.01

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ThresholdSettings:
        """Settings from a config mapping; unknown keys are refused."""
        settings = cls(**_known_keys(cls, data, "threshold"))
        if settings.folds < 2 or not 0 <= settings.low <= settings.high <= 1 or settings.step <= 0:
            raise ValueError(f"threshold settings need folds >= 2, 0 <= low <= high <= 1 and "
                             f"step > 0; got {settings}")  # fmt: skip
        return settings


@dataclass(frozen=True, slots=True)
class LabelledAnswer:
    """One path's answer from the labelled runs.

    Attributes:
        unit: the unit's name.
        text: the text case (labelled text and variant).
        key: the labelled text it came from (the unit of splitting).
        observation: its signals.
        raw: the path's own confidence.
        is_correct: whether it equals the gold output.
        cases: the text's hard-case tags.
    """

    unit: str
    text: str
    key: str
    observation: PathObservation
    raw: float
    is_correct: bool
    cases: tuple[str, ...] = ()


def unit_normalizers(units: Path, names: Iterable[str]) -> dict[str, dict[str, str]]:
    """Unit name -> output field -> normalizer name, read from ``units/<name>.yaml``.

    Args:
        units: the folder of the unit files.
        names: the units' names.

    Returns:
        Each unit's ``output_normalizers``.
    """
    return {n: output_normalizers(UnitSpec.from_file(units / f"{n}.yaml")) for n in sorted(names)}


def labelled_answers(
    records: Sequence[Mapping[str, Any]],
    normalizers: Mapping[str, Mapping[str, str]] | None = None,
    *,
    units: Path | None = None,
) -> list[LabelledAnswer]:
    """Flatten the run records into one labelled answer per path per text case.

    The model's token signals, the span signals, agreement, the witnesses' values and the text
    signals are recomputed from the stored tokens, spans, outputs and text, so a change to
    ``generation_signals``, ``span_signals``, ``agreement_signals``, ``witness_signals`` or
    ``text_signals`` needs no new runs (a record without its text leaves the text signals
    missing). Every path ran on every text, so each
    answer's witnesses are the other paths that produced an output, as a calibrated unit run
    has them.

    Args:
        records: the labelled runs (``aau.fitting.runs.load_runs``).
        normalizers: unit name -> output field -> normalizer name; a unit missing from it has
            its outputs compared as written.
        units: without ``normalizers``, the folder of the unit files to read them from
            (``unit_normalizers``).

    Returns:
        One answer per row of every record, in order.

    Raises:
        ValueError: neither ``normalizers`` nor ``units`` was given.
    """
    if normalizers is None:
        if units is None:
            raise ValueError(
                "labelled_answers needs the units' normalizers or the folder of their unit files"
            )
        normalizers = unit_normalizers(units, {record["unit"] for record in records})
    answers = []
    for record in records:
        outputs = [row["output"] for row in record["rows"]]
        fields = normalizers.get(record["unit"])
        for index, row in enumerate(record["rows"]):
            signals = dict(row["signals"])
            spans = {k: (v[0], v[1]) for k, v in row.get("spans", {}).items()}
            signals |= span_signals(spans)
            witnesses = outputs[:index] + outputs[index + 1 :]
            signals |= agreement_signals(row["output"], witnesses, fields)
            signals |= witness_signals(witnesses)
            if isinstance(record.get("text"), str):
                signals |= text_signals(record["text"], row["output"], spans, fields)
            if "generation" in row:
                tokens = row["generation"]
                generation = Generation(
                    text="", finish_reason="stop", token_logprobs=tuple(tokens["logprobs"]),
                    token_entropies=tuple(tokens["entropies"]),
                    forced=tuple(bool(x) for x in tokens["forced"]),
                )  # fmt: skip
                signals |= generation_signals(generation)
            answers.append(LabelledAnswer(
                unit=record["unit"], text=f"{record['key']}:{record['variant']}",
                key=record["key"],
                observation=PathObservation(row["path"], row["outcome"], signals),
                raw=float(row["confidence"]), is_correct=bool(row["correct"]),
                cases=tuple(record["cases"]),
            ))  # fmt: skip
    return answers


def _fraction(seed: object, key: str) -> float:
    return int(hashlib.sha256(f"{seed}\0{key}".encode()).hexdigest(), 16) / 16**64


def split_texts(keys: Sequence[str], *, seed: object, share: float) -> set[str]:
    """The keys held out: each key independently, by a seeded hash (stable as data grows)."""
    return {k for k in set(keys) if _fraction(seed, k) < share}


def _masked(observation: PathObservation, names: Sequence[str]) -> PathObservation:
    kept = {k: v for k, v in observation.signals.items() if k not in names}
    return PathObservation(observation.path, observation.outcome, kept)


def _statistics(
    observations: Sequence[PathObservation], spec: FeatureSpec
) -> tuple[list[float], list[float]]:
    sums = [0.0] * len(spec.features)
    squares = [0.0] * len(spec.features)
    counts = [0] * len(spec.features)
    for observation in observations:
        values, present = spec.raw_vector(observation)
        for i, (value, ok) in enumerate(zip(values, present, strict=True)):
            if ok:
                sums[i] += value
                squares[i] += value * value
                counts[i] += 1
    mean = [s / c if c else 0.0 for s, c in zip(sums, counts, strict=True)]
    std = [max(q / c - m * m, 0.0) ** 0.5 if c else 1.0
           for q, c, m in zip(squares, counts, mean, strict=True)]  # fmt: skip
    return mean, std


def _platt(logits: torch.Tensor, labels: torch.Tensor) -> tuple[float, float]:
    """Slope and intercept that make ``sigmoid(a * logit + b)`` fit the labels best."""
    scale = torch.ones(1, requires_grad=True)
    shift = torch.zeros(1, requires_grad=True)
    optimiser = torch.optim.LBFGS([scale, shift], lr=0.1, max_iter=200)
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def closure() -> torch.Tensor:
        optimiser.zero_grad()
        loss = loss_fn(scale * logits + shift, labels)
        loss.backward()
        return loss

    optimiser.step(closure)
    return float(scale.detach()), float(shift.detach())


def fit_calibrator(
    observations: Sequence[PathObservation],
    labels: Sequence[bool],
    groups: Sequence[str],
    settings: TrainingSettings | None = None,
    *,
    spec: FeatureSpec = FEATURE_SPEC,
    version: str = "1",
    metadata: Mapping[str, Any] | None = None,
) -> MlpCalibrator:
    """Fit a calibrator: ``settings.members`` networks, each from its own seed and held-back texts.

    Args:
        observations: one per answer.
        labels: whether each answer was right.
        groups: the text each answer came from; held-back rows are chosen by text.
        settings: hyper-parameters.
        spec: the feature spec.
        version: the calibrator's version.
        metadata: stored in the artifact.

    Returns:
        The fitted calibrator.
    """
    settings = settings or TrainingSettings()
    if not observations or len(observations) != len(labels) or len(labels) != len(groups):
        raise ValueError(
            f"need one label and one group per observation; got {len(observations)} "
            f"observations, {len(labels)} labels, {len(groups)} groups"
        )
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny network: more threads only contend with other work
    try:
        mean, std = _statistics(observations, spec)
        fitted = [
            _fit_member(observations, labels, groups, settings, spec, mean, std, seed)
            for seed in range(settings.seed, settings.seed + settings.members)
        ]
    finally:
        torch.set_num_threads(threads)
    return MlpCalibrator(
        [member for member, _ in fitted], spec, mean, std, version=version,
        metadata={**(metadata or {}), "fit": [details for _, details in fitted]},
    )  # fmt: skip


def _fit_member(
    observations: Sequence[PathObservation],
    labels: Sequence[bool],
    groups: Sequence[str],
    settings: TrainingSettings,
    spec: FeatureSpec,
    mean: Sequence[float],
    std: Sequence[float],
    seed: int,
) -> tuple[Member, dict[str, Any]]:
    torch.manual_seed(seed)
    rng = random.Random(seed)
    held = split_texts(groups, seed=seed, share=settings.early_stopping_share)
    if len(held) == len(set(groups)):  # a tiny set: keep at least one group to fit on
        held.discard(sorted(held)[0])
    fit_rows = [i for i, g in enumerate(groups) if g not in held]
    held_rows = [i for i, g in enumerate(groups) if g in held]
    fit_obs = [observations[i] for i in fit_rows]
    fit_labels = [labels[i] for i in fit_rows]
    for i in fit_rows:  # teach "missing": copies with a signal group masked
        for names in _MASKABLE:
            if rng.random() < settings.missing_dropout:
                fit_obs.append(_masked(observations[i], names))
                fit_labels.append(labels[i])

    def tensor(rows: Sequence[PathObservation]) -> torch.Tensor:
        vectors = [encode(o, spec, mean, std) for o in rows]
        return torch.tensor(vectors, dtype=torch.float32).reshape(-1, spec.width)

    x, y = tensor(fit_obs), torch.tensor(fit_labels, dtype=torch.float32)
    x_held = tensor([observations[i] for i in held_rows])
    y_held = torch.tensor([labels[i] for i in held_rows], dtype=torch.float32)

    model = network(spec.width, settings.hidden, settings.dropout)
    optimiser = torch.optim.AdamW(
        model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    generator = torch.Generator().manual_seed(seed)
    best_loss, best_state, best_epoch, waited = float("inf"), None, 0, 0
    for epoch in range(settings.epochs):
        model.train()
        for batch in torch.randperm(len(x), generator=generator).split(settings.batch_size):
            optimiser.zero_grad()
            loss_fn(model(x[batch]).squeeze(-1), y[batch]).backward()
            optimiser.step()
        if not held_rows:
            continue
        model.eval()
        with torch.no_grad():
            loss = float(loss_fn(model(x_held).squeeze(-1), y_held))
        if loss < best_loss - 1e-5:
            best_loss, best_epoch, waited = loss, epoch, 0
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        else:
            waited += 1
            if waited >= settings.patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    scale, shift = 1.0, 0.0
    if held_rows and 0 < float(y_held.sum()) < len(y_held):  # Platt needs both outcomes
        with torch.no_grad():
            held_logits = model(x_held).squeeze(-1)
        scale, shift = _platt(held_logits, y_held)
    details = {"seed": seed, "rows": len(fit_rows), "augmented_rows": len(fit_obs),
               "held_rows": len(held_rows), "best_epoch": best_epoch,
               "held_loss": round(best_loss, 5), "scale": round(scale, 4),
               "shift": round(shift, 4)}  # fmt: skip
    return Member(model, scale, shift), details


def evaluate(calibrator: MlpCalibrator, answers: Sequence[LabelledAnswer]) -> list[EvaluatedAnswer]:
    """Score ``answers`` with ``calibrator``, ready for ``aau.calibration.report``."""
    scores = calibrator.score_many([a.observation for a in answers])
    return [
        EvaluatedAnswer(
            unit=a.unit,
            text=a.text,
            path=a.observation.path,
            raw=a.raw,
            calibrated=score,
            is_correct=a.is_correct,
            is_valid=a.observation.outcome == "valid",
            cases=a.cases,
        )
        for a, score in zip(answers, scores, strict=True)
    ]


def threshold_grid(low: float, high: float, step: float) -> tuple[float, ...]:
    """The thresholds tried: ``low`` to ``high`` inclusive, ``step`` apart (rounded)."""
    count = int(round((high - low) / step, 9))
    return tuple(round(min(low + i * step, high), 6) for i in range(count + 1))


def cross_validated(
    answers: Sequence[LabelledAnswer],
    settings: TrainingSettings,
    *,
    folds: int,
    seed: object,
    spec: FeatureSpec = FEATURE_SPEC,
) -> list[EvaluatedAnswer]:
    """Out-of-fold confidences: each text scored by a calibrator fitted on the other folds.

    Texts go to folds by a seeded hash of their key (a scan with the text it was made from), so
    no answer is scored by a calibrator that saw its text.
    """
    fold_of = {key: min(int(_fraction(seed, key) * folds), folds - 1)
               for key in {a.key for a in answers}}  # fmt: skip
    evaluated: list[EvaluatedAnswer] = []
    for fold in range(folds):
        fit = [a for a in answers if fold_of[a.key] != fold]
        held = [a for a in answers if fold_of[a.key] == fold]
        if not fit or not held:
            continue
        calibrator = fit_calibrator(
            [a.observation for a in fit], [a.is_correct for a in fit], [a.text for a in fit],
            settings, spec=spec,
        )  # fmt: skip
        evaluated += evaluate(calibrator, held)
    return evaluated


@dataclass(frozen=True, slots=True)
class ThresholdChoice:
    """The threshold cross-validation picked for one unit, or for all units together.

    Attributes:
        scope: the unit's name, or ``overall``.
        threshold: the chosen threshold.
        accuracy: out-of-fold selection accuracy at it.
        tied: lowest and highest threshold of the run of equally accurate ones it lies in.
        best_single_path: the best single path out of fold, and its accuracy.
        texts: the texts measured.
    """

    scope: str
    threshold: float
    accuracy: float
    tied: tuple[float, float]
    best_single_path: tuple[str, float]
    texts: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, stored in the calibrator's metadata."""
        return {"threshold": self.threshold, "accuracy": round(self.accuracy, 4),
                "tied": list(self.tied), "best_single_path": self.best_single_path[0],
                "best_single_path_accuracy": round(self.best_single_path[1], 4),
                "texts": self.texts}  # fmt: skip


def choose_threshold(
    evaluated: Sequence[EvaluatedAnswer], grid: Sequence[float], scope: str = "overall"
) -> ThresholdChoice:
    """The threshold of ``grid`` at which selection over ``evaluated`` is right most often.

    Ties are common (selection changes only where a confidence crosses the threshold); the
    choice is the middle of the longest run of consecutive tied thresholds (the lower middle
    for an even run, the lowest run when two are as long): the point farthest from where
    accuracy drops, so the least sensitive to how the folds fell.
    """
    if not grid:
        raise ValueError("no thresholds to choose from")
    units = {a.unit for a in evaluated}
    # Compared as counts of right texts: equal accuracies are then exactly equal.
    texts = len({(a.unit, a.text) for a in evaluated})
    right = [round(selection_accuracy(evaluated, dict.fromkeys(units, t)) * texts) for t in grid]
    best = max(right)
    runs: list[list[int]] = []
    for index, count in enumerate(right):
        if count != best:
            continue
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    longest = max(runs, key=len)  # max keeps the first (lowest) of equally long runs
    chosen = longest[(len(longest) - 1) // 2]
    summary = summarize(evaluated, dict.fromkeys(units, grid[chosen]))
    return ThresholdChoice(
        scope=scope, threshold=grid[chosen], accuracy=best / texts if texts else 0.0,
        tied=(grid[longest[0]], grid[longest[-1]]), best_single_path=summary.best_single_path,
        texts=texts,
    )  # fmt: skip


def choose_thresholds(
    answers: Sequence[LabelledAnswer],
    settings: TrainingSettings,
    choice: ThresholdSettings,
    *,
    spec: FeatureSpec = FEATURE_SPEC,
) -> dict[str, ThresholdChoice]:
    """Per unit and ``overall``, the threshold cross-validation on ``answers`` picks.

    ``answers`` are the training texts only: the validation texts never take part in a choice
    they are later used to measure.
    """
    evaluated = cross_validated(answers, settings, folds=choice.folds, seed=choice.seed, spec=spec)
    grid = threshold_grid(choice.low, choice.high, choice.step)
    units = sorted({a.unit for a in evaluated})
    choices = {u: choose_threshold([a for a in evaluated if a.unit == u], grid, u) for u in units}
    choices["overall"] = choose_threshold(evaluated, grid)
    return choices


def print_thresholds(
    choices: Mapping[str, ThresholdChoice],
    thresholds: Mapping[str, float],
    settings: ThresholdSettings,
    print_fn: Callable[[str], None] = print,
) -> None:
    """Print the cross-validated choices and the thresholds the units' files declare.

    Args:
        choices: ``choose_thresholds``'s result.
        thresholds: unit name -> its ``policy.threshold``.
        settings: how the choices were made.
        print_fn: where lines go.
    """
    print_fn(
        f"policy.threshold by {settings.folds}-fold cross-validation on the training texts "
        f"(scans counted as texts; thresholds {settings.low:.2f}-{settings.high:.2f} by "
        f"{settings.step:g}; the most right selections out of fold, ties: the middle of the "
        "longest tied run):"
    )
    for scope, choice in choices.items():
        path, accuracy = choice.best_single_path
        print_fn(
            f"  {scope:<18} {choice.threshold:.2f}  (selection {choice.accuracy:.4f} on "
            f"{choice.texts} texts, tied {choice.tied[0]:.2f}-{choice.tied[1]:.2f}; best single "
            f"path {path} {accuracy:.4f})"
        )
    differ = [u for u, t in thresholds.items() if u in choices and t != choices[u].threshold]
    print_fn(
        "selection on the validation texts uses each unit's policy.threshold (units/*.yaml): "
        + ", ".join(f"{u} {t:.2f}" for u, t in thresholds.items())
        + ("; each the cross-validated choice" if not differ else "")
    )
    for unit in differ:
        print_fn(f"warning: units/{unit}.yaml has policy.threshold {thresholds[unit]:.2f}; "
                 f"cross-validation picks {choices[unit].threshold:.2f}")  # fmt: skip


def write_summary(path: Path, calibrator: MlpCalibrator, figures: Mapping[str, Any]) -> None:
    """Write the readable summary of a fitted calibrator (``calibrator.json`` beside its artifact).

    Args:
        path: the JSON file to write.
        calibrator: the fitted calibrator.
        figures: its validation figures (``aau.calibration.report.report``).
    """
    summary = {
        "version": calibrator.version,
        "feature_spec": calibrator.spec.to_dict(),
        "feature_digest": calibrator.spec.digest,
        "columns": calibrator.spec.names,
        "metadata": {k: v for k, v in calibrator.metadata.items() if k != "validation"},
        "validation": figures,
    }
    write_replacing(path, jsonlib.dumps(summary, indent=2, sort_keys=True) + "\n")
