"""How honest the confidences are: calibration error, Brier score, selection accuracy, a diagram.

The figures are computed over evaluated answers: every path's answer on every text of a
validation set, each with its raw (the path's own) and calibrated confidence and whether it was
right. Calibration is measured over the answers a run can deliver (valid ones); accuracy is
measured per text, as a run sees it: the answer ``select`` picks with calibrated confidences,
with raw confidences, and the answer of each single path alone.

``report`` prints the figures per unit and overall and writes a reliability diagram (PNG,
through matplotlib when it is installed); with ``json=True`` its last printed line is one JSON
object with the headline figures.
"""

from __future__ import annotations

import json as jsonlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aau.answers import Candidate, select
from aau.calibration.features import PATHS

__all__ = [
    "SWEEP",
    "Bin",
    "EvaluatedAnswer",
    "Summary",
    "brier_score",
    "expected_calibration_error",
    "reliability_bins",
    "report",
    "selection_accuracy",
    "summarize",
    "write_reliability_diagram",
]


SWEEP = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)
"""Thresholds the report measures selection at, besides the units' own."""


@dataclass(frozen=True, slots=True)
class EvaluatedAnswer:
    """One path's answer on one text, judged.

    Attributes:
        unit: the unit's name.
        text: identity of the text (answers with the same unit and text compete in selection).
        path: the path's name.
        raw: the path's own confidence.
        calibrated: the calibrator's confidence.
        is_correct: whether the answer equals the gold output.
        is_valid: whether it passed the checks (only valid answers can be delivered).
        cases: hard-case tags of the text (``no_value``, ``ocr``…), reported separately.
    """

    unit: str
    text: str
    path: str
    raw: float
    calibrated: float
    is_correct: bool
    is_valid: bool = True
    cases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Bin:
    """One bin of a reliability diagram.

    Attributes:
        low: lower edge of the confidence range.
        high: upper edge.
        count: answers whose confidence falls in it.
        confidence: their mean confidence (None when empty).
        accuracy: the share of them that are right (None when empty).
    """

    low: float
    high: float
    count: int
    confidence: float | None
    accuracy: float | None


def reliability_bins(
    confidences: Sequence[float], correct: Sequence[bool], bins: int = 10
) -> list[Bin]:
    """Equal-width bins over [0, 1]; a confidence of exactly 1 falls in the last bin."""
    if len(confidences) != len(correct):
        raise ValueError(f"{len(confidences)} confidences but {len(correct)} outcomes")
    members: list[list[int]] = [[] for _ in range(bins)]
    for index, value in enumerate(confidences):
        members[min(int(value * bins), bins - 1) if value > 0 else 0].append(index)
    result = []
    for b, indices in enumerate(members):
        if indices:
            mean = sum(confidences[i] for i in indices) / len(indices)
            accuracy = sum(bool(correct[i]) for i in indices) / len(indices)
            result.append(Bin(b / bins, (b + 1) / bins, len(indices), mean, accuracy))
        else:
            result.append(Bin(b / bins, (b + 1) / bins, 0, None, None))
    return result


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool], bins: int = 10
) -> float:
    """Mean |accuracy - confidence| over equal-width bins, weighted by how many answers each has."""
    if not confidences:
        return 0.0
    total = len(confidences)
    return sum(
        b.count / total * abs(b.accuracy - b.confidence)  # type: ignore[operator]  # count > 0
        for b in reliability_bins(confidences, correct, bins)
        if b.count
    )


def brier_score(confidences: Sequence[float], correct: Sequence[bool]) -> float:
    """Mean squared difference between confidence and outcome (1 right, 0 wrong)."""
    if not confidences:
        return 0.0
    pairs = zip(confidences, correct, strict=True)
    return sum((c - float(y)) ** 2 for c, y in pairs) / len(confidences)


@dataclass(frozen=True, slots=True)
class Summary:
    """The figures of one unit, or of all units together.

    Attributes:
        scope: the unit's name, or ``overall``.
        texts: texts judged.
        answers: valid answers the calibration figures are measured over.
        ece: expected calibration error of the calibrated confidences (10 bins).
        ece_raw: the same for the paths' own confidences.
        brier: Brier score of the calibrated confidences.
        brier_raw: the same for the raw ones.
        answer_accuracy: share of valid answers that are right.
        selection_accuracy: share of texts whose selected answer is right (calibrated).
        selection_accuracy_raw: the same when selecting with the raw confidences.
        path_accuracy: per path, the share of texts it alone answers right.
    """

    scope: str
    texts: int
    answers: int
    ece: float
    ece_raw: float
    brier: float
    brier_raw: float
    answer_accuracy: float
    selection_accuracy: float
    selection_accuracy_raw: float
    path_accuracy: dict[str, float]

    @property
    def best_single_path(self) -> tuple[str, float]:
        """The single path with the highest accuracy, and that accuracy."""
        if not self.path_accuracy:
            return ("none", 0.0)
        return max(self.path_accuracy.items(), key=lambda kv: kv[1])


def _groups(answers: Sequence[EvaluatedAnswer]) -> dict[tuple[str, str], list[EvaluatedAnswer]]:
    """The answers of each (unit, text), in the order a run tries their paths."""
    order = {p: i for i, p in enumerate(PATHS)}
    groups: dict[tuple[str, str], list[EvaluatedAnswer]] = {}
    for answer in answers:
        groups.setdefault((answer.unit, answer.text), []).append(answer)
    for group in groups.values():
        group.sort(key=lambda a: order.get(a.path, len(order)))
    return groups


def _selection_accuracy(
    groups: Mapping[tuple[str, str], list[EvaluatedAnswer]],
    thresholds: Mapping[str, float],
    confidence: Callable[[EvaluatedAnswer], float],
) -> float:
    right = 0
    for (unit, _), answers in groups.items():
        candidates = [Candidate(a.path, confidence(a), a.is_valid) for a in answers]
        chosen = select(candidates, thresholds.get(unit, 0.5))
        right += chosen is not None and answers[chosen].is_correct
    return right / len(groups) if groups else 0.0


def selection_accuracy(
    answers: Sequence[EvaluatedAnswer], thresholds: Mapping[str, float], *, raw: bool = False
) -> float:
    """Share of texts whose answer ``select`` picks is right.

    Args:
        answers: evaluated answers; those with the same unit and text compete.
        thresholds: unit name -> acceptance threshold (0.5 when absent).
        raw: select with the paths' own confidences instead of the calibrated ones.
    """
    return _selection_accuracy(
        _groups(answers), thresholds, (lambda a: a.raw) if raw else (lambda a: a.calibrated)
    )


def summarize(
    answers: Sequence[EvaluatedAnswer],
    thresholds: Mapping[str, float],
    scope: str = "overall",
    *,
    bins: int = 10,
) -> Summary:
    """The figures of ``answers`` (one scope: a unit, or everything).

    Args:
        answers: the evaluated answers.
        thresholds: unit name -> its ``policy.threshold`` (0.5 when absent).
        scope: the name the summary is reported under.
        bins: bins of the calibration error.
    """
    order = {p: i for i, p in enumerate(PATHS)}
    groups = _groups(answers)
    valid = [a for a in answers if a.is_valid]
    correct = [a.is_correct for a in valid]
    calibrated = [a.calibrated for a in valid]
    raw = [a.raw for a in valid]
    paths = sorted({a.path for a in answers}, key=lambda p: order.get(p, len(order)))
    path_accuracy = {
        path: sum(
            any(a.path == path and a.is_valid and a.is_correct for a in group)
            for group in groups.values()
        )
        / len(groups)
        for path in paths
    }
    return Summary(
        scope=scope,
        texts=len(groups),
        answers=len(valid),
        ece=expected_calibration_error(calibrated, correct, bins),
        ece_raw=expected_calibration_error(raw, correct, bins),
        brier=brier_score(calibrated, correct),
        brier_raw=brier_score(raw, correct),
        answer_accuracy=sum(correct) / len(correct) if correct else 0.0,
        selection_accuracy=_selection_accuracy(groups, thresholds, lambda a: a.calibrated),
        selection_accuracy_raw=_selection_accuracy(groups, thresholds, lambda a: a.raw),
        path_accuracy=path_accuracy,
    )


def write_reliability_diagram(
    answers: Sequence[EvaluatedAnswer], path: str | Path, *, bins: int = 10
) -> Path | None:
    """Draw raw and calibrated reliability curves (overall, then per unit) into a PNG.

    Returns:
        The file written, or None when matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display is needed or wanted
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    valid = [a for a in answers if a.is_valid]
    units = sorted({a.unit for a in valid})
    scopes = [("all units", valid)] + [(u, [a for a in valid if a.unit == u]) for u in units]
    figure, axes = plt.subplots(2, len(scopes), figsize=(4.2 * len(scopes), 7.4),
                                gridspec_kw={"height_ratios": [3, 1]}, squeeze=False)  # fmt: skip
    for column, (title, items) in enumerate(scopes):
        top, bottom = axes[0][column], axes[1][column]
        top.plot([0, 1], [0, 1], color="0.6", linestyle=":", label="perfect")
        correct = [a.is_correct for a in items]
        for label, values, colour in (
            ("raw", [a.raw for a in items], "tab:orange"),
            ("calibrated", [a.calibrated for a in items], "tab:blue"),
        ):
            found = [b for b in reliability_bins(values, correct, bins) if b.count]
            ece = expected_calibration_error(values, correct, bins)
            top.plot([b.confidence for b in found], [b.accuracy for b in found], color=colour,
                     label=f"{label} (ECE {ece:.3f})")  # fmt: skip
            # Marker area follows the bin's share: a bin of three answers is noise, not a trend.
            sizes = [12 + 400 * b.count / max(len(items), 1) for b in found]
            top.scatter([b.confidence for b in found], [b.accuracy for b in found], color=colour,
                        s=sizes, zorder=3)  # fmt: skip
            bottom.hist(values, bins=bins, range=(0, 1), alpha=0.5, color=colour, label=label)
        top.set(title=f"{title} ({len(items)} answers)", xlim=(0, 1), ylim=(0, 1),
                xlabel="confidence", ylabel="accuracy")  # fmt: skip
        top.legend(loc="upper left", fontsize="small")
        bottom.set(xlim=(0, 1), xlabel="confidence", ylabel="answers")
    figure.suptitle("Reliability of path confidences on the validation texts")
    figure.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target


def _row(summary: Summary) -> str:
    best_path, best = summary.best_single_path
    return (
        f"{summary.scope:<18} {summary.texts:>5} {summary.answers:>7} "
        f"{summary.ece_raw:>7.3f} {summary.ece:>7.3f} {summary.brier_raw:>7.3f} "
        f"{summary.brier:>7.3f} {summary.selection_accuracy_raw:>7.3f} "
        f"{summary.selection_accuracy:>7.3f} {best:>7.3f} {best_path}"
    )


def report(
    answers: Sequence[EvaluatedAnswer],
    thresholds: Mapping[str, float],
    *,
    png: str | Path | None = None,
    json: bool = False,
    print_fn: Callable[[str], None] = print,
    bins: int = 10,
) -> dict[str, Any]:
    """Print the calibration report of ``answers`` and write the reliability diagram.

    Args:
        answers: evaluated answers (a validation set the calibrator was not fitted on).
        thresholds: unit name -> its ``policy.threshold``, for selection.
        png: where to write the reliability diagram; None writes none.
        json: end with one line holding the headline figures as a JSON object.
        print_fn: where lines go.
        bins: bins of the calibration error.

    Returns:
        The headline figures: ``ece``, ``ece_raw``, ``brier``, ``selection_accuracy``,
        ``best_single_path_accuracy`` (overall), plus ``brier_raw``,
        ``selection_accuracy_raw``, ``best_single_path`` and ``units`` (the same per unit).
    """
    units = sorted({a.unit for a in answers})
    summaries = [summarize([a for a in answers if a.unit == u], thresholds, u, bins=bins)
                 for u in units]  # fmt: skip
    overall = summarize(answers, thresholds, bins=bins)
    print_fn(f"calibration report ({bins}-bin ECE over valid answers; accuracy per text)")
    print_fn(
        f"{'scope':<18} {'texts':>5} {'answers':>7} {'ECE raw':>7} {'ECE':>7} {'Brier r':>7} "
        f"{'Brier':>7} {'sel raw':>7} {'sel cal':>7} {'best 1':>7} best path"
    )
    for summary in [*summaries, overall]:
        print_fn(_row(summary))
    print_fn("selection at the units' thresholds: "
             + ", ".join(f"{u} {thresholds.get(u, 0.5):.2f}" for u in units))  # fmt: skip
    cases = sorted({c for a in answers for c in a.cases})
    for case in cases:
        print_fn(_row(summarize([a for a in answers if case in a.cases], thresholds,
                                f"case {case}", bins=bins)))  # fmt: skip
    accuracies = ", ".join(f"{p} {v:.3f}" for p, v in overall.path_accuracy.items())
    print_fn(f"single paths overall: {accuracies}; answers right: {overall.answer_accuracy:.3f}")
    # What the units' thresholds cost: a path accepted early at P(correct) = t loses to a later
    # path that is right more often than t, so a threshold below the best path's accuracy
    # trades accuracy for speed.
    sweep = [(t, summarize(answers, dict.fromkeys(units, t), bins=bins).selection_accuracy)
             for t in SWEEP]  # fmt: skip
    print_fn("selection accuracy if every unit's threshold were t: "
             + ", ".join(f"{t:.2f}: {acc:.3f}" for t, acc in sweep))  # fmt: skip
    if png is not None:
        written = write_reliability_diagram(answers, png, bins=bins)
        print_fn(
            f"reliability diagram: {written}"
            if written
            else "reliability diagram skipped: pip install matplotlib"
        )
    figures = _figures(overall)
    figures["units"] = {s.scope: _figures(s) for s in summaries}
    if json:
        headline = {k: figures[k] for k in ("ece", "ece_raw", "brier", "selection_accuracy",
                                            "best_single_path_accuracy")}  # fmt: skip
        print_fn(jsonlib.dumps(headline))
    return figures


def _figures(summary: Summary) -> dict[str, Any]:
    best_path, best = summary.best_single_path
    return {
        "ece": round(summary.ece, 4),
        "ece_raw": round(summary.ece_raw, 4),
        "brier": round(summary.brier, 4),
        "brier_raw": round(summary.brier_raw, 4),
        "selection_accuracy": round(summary.selection_accuracy, 4),
        "selection_accuracy_raw": round(summary.selection_accuracy_raw, 4),
        "best_single_path_accuracy": round(best, 4),
        "best_single_path": best_path,
        "texts": summary.texts,
        "answers": summary.answers,
    }
