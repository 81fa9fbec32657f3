"""Labelled runs: every answer path on every labelled text, with its signals and its verdict.

Each row holds one path's answer on one text, the signals the calibrator reads and whether the
answer was right.

The calibrator learns from what the framework itself does on the project's own labelled data
(``units/<unit>.annotated.jsonl``). Those texts already hold most of the hard cases: texts with no
value, texts with several candidate values (subtotals, VAT, order dates), German, French and
Spanish texts. OCR noise is added here: a seeded share of the texts is rendered as a scan with
``aau.ingest.samples``, degraded at a seeded noise level and read back by tesseract, and those
scans are run as texts of their own, judged against the gold output of the clean text.

The project's own texts are all the calibrator would know of the world, and they are easy: a
calibrator fitted on them alone says 0.99 on text unlike them. ``runs: external`` names one or
more files of labelled texts nobody here wrote (the dev parts of ``benchmarks/external``, one
JSON object per line with ``unit``, ``kind``, ``text``, ``expected``, ``language`` and
``source``); their texts with one value or none run like the unit's own, with the expected
output as gold, and each record keeps its source group (language and source file), so that
the validation split holds out whole groups.

Every path runs on every text, not only until one is accepted, so each path's signals are known
everywhere: the model through the engine directly (the unit's prompt, bounded schema and token
budget, as the run driver sends them), the CRF and heuristic paths through their ``extract``.
Each answer then meets the driver's checks (schema, field grammars and, for the model, grounding
in the text), whose outcome is a signal too. The CRF path answers each text with a model trained
on the other folds of the data: the shipped model saw every labelled text and would look far
surer here than on a new document.

An answer is correct when it equals the gold output: numbers compared as floats, strings
compared case-sensitively after the unit's field normalizer (the one its CRF path declares).

``aau calibrate`` builds the runs that are missing or stale (``--rebuild``: all of them) and
caches them in ``runs/<unit>.jsonl.gz`` of its data folder, with a fingerprint of what they were
made from: the unit file (less what changes no run: its threshold, its fallback triggers, its
engine chain), its annotated data and the ``runs:`` settings.
Every function here takes its folders as arguments: the data folder (``config.yaml``, ``runs/``)
and the folder of the unit files (``<unit>.yaml`` and the annotated data they name).

The model's answers depend on the engine, and so do their log-probabilities' kind (raw, or taken
after the constraint mask: ``EngineCapabilities.logprobs_after_mask``). The runs are made with
the in-process engine and its embedded model unless an ``EngineKind`` says otherwise
(``aau calibrate --engine``); another engine's runs are cached apart, in
``runs/<engine>/<unit>.jsonl.gz``, and their fingerprint holds what identifies the engine: its
backend, its model or served model and, for a server, its dialect (never where the servers are
or a key).
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import hashlib
import io
import json
import math
import random
import re
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema

from aau.answers import FallbackPath, PathAnswer
from aau.calibration.base import Outcome, PathEvidence
from aau.calibration.calibrator import IN_PROCESS_ENGINE
from aau.calibration.features import SentenceEmbedder, observe
from aau.engines.base import Engine, Generation, GenerationRequest
from aau.engines.registry import EngineConfig, build_engine
from aau.errors import AAUError, InputError, UngroundedOutput
from aau.fallbacks.annotated import load_annotated
from aau.fallbacks.crf import CrfFallback
from aau.fallbacks.crf_training import crf_spec_of, gold_output, train_unit
from aau.fallbacks.normalize import NORMALIZERS
from aau.files import replacing
from aau.ingest import Document, OcrOptions
from aau.ingest.samples import add_scan_noise, render_page
from aau.prompts.render import render_messages
from aau.runner.grounding import ground_output
from aau.runner.runner import UnitRunner, primary_confidence
from aau.spec.model import UnitSpec

__all__ = [
    "RUNS_FORMAT",
    "EngineKind",
    "TextCase",
    "abuild_runs",
    "build_runs",
    "check_answer",
    "engine_kind",
    "external_cases",
    "external_paths",
    "is_correct",
    "is_current",
    "load_config",
    "load_runs",
    "load_unit",
    "model_generations",
    "runs_fingerprint",
    "runs_folder",
    "runs_path",
    "text_cases",
    "unit_runs",
]

RUNS_FORMAT = 1

# Words that mark a text as German, French or Spanish (for the per-case report only).
_FOREIGN = re.compile(
    r"\b(?:und|bitte|sie|wir|der|die|das|rechnung|für|betrag|menge|nous|votre|pour|est|les|"
    r"une|facture|merci|montant|el|los|las|por|su|del|factura|importe|cantidad|usted)\b",
    re.IGNORECASE,
)


def load_config(path: Path) -> dict[str, Any]:
    """The settings of the labelled runs and of the fitting (the data folder's ``config.yaml``).

    Args:
        path: the settings file.

    Returns:
        Its mapping.
    """
    import yaml

    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    # Where relative paths of the settings (``runs: external``) start; not a setting itself,
    # so it stays out of the runs' fingerprint and a clone elsewhere keeps its runs.
    config["folder"] = path.parent
    return config


def external_paths(config: Mapping[str, Any]) -> list[Path]:
    """The files of external labelled texts the runs also use (``runs: external``, one or more)."""
    external = config["runs"].get("external") or []
    names = [external] if isinstance(external, str) else list(external)
    return [Path(config.get("folder", ".")) / name for name in names]


def external_cases(config: Mapping[str, Any], unit_name: str) -> list[dict[str, Any]]:
    """The external labelled texts of ``unit_name`` whose expected output is one value or none.

    A text with several acceptable answers (or, ``unlabelled``, none known) has no one gold
    output, so it is left out.
    """
    cases = []
    for path in external_paths(config):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            if case.get("unit") == unit_name and case.get("kind") in ("single", "none"):
                cases.append(case)
    return cases


def load_unit(units: Path, name: str) -> UnitSpec:
    """The unit ``name`` from its file ``units/<name>.yaml``.

    Args:
        units: the folder of the unit files.
        name: the unit's name.
    """
    return UnitSpec.from_file(units / f"{name}.yaml")


def _hash(*parts: object) -> str:
    return hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()


# -- the engine ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class EngineKind:
    """The engine the model path's runs are made with, and what the calibrator records of it.

    Attributes:
        config: its settings; a server's ``remote.served_model`` is filled in (``engine_kind``
            asks the server when it is not given), since the runs depend on it.
        logprobs_after_mask: the engine's ``EngineCapabilities.logprobs_after_mask``.
    """

    config: EngineConfig
    logprobs_after_mask: bool = False

    @property
    def name(self) -> str:
        """The registered engine name (the backend)."""
        return self.config.backend

    @property
    def in_process(self) -> bool:
        """Whether it is the in-process engine, whose runs are the data folder's ``runs/``."""
        return self.config.backend == IN_PROCESS_ENGINE

    @property
    def served_model(self) -> str | None:
        """The model it runs: a server's served model, the in-process engine's ``model``."""
        return self.config.model if self.in_process else self.config.remote.served_model

    def identity(self) -> dict[str, Any]:
        """What identifies the model's answers: backend, model and, for a server, its dialect.

        Where the servers are, their timeouts and the API key (never held here anyway: only
        the name of its environment variable is a setting) are left out.
        """
        identity: dict[str, Any] = {"backend": self.name, "model": self.config.model}
        if not self.in_process:
            identity["served_model"] = self.config.remote.served_model
            identity["dialect"] = self.config.remote.dialect
        return identity

    @property
    def default(self) -> bool:
        """Whether it is the default engine: in-process, with the embedded model.

        Its runs' fingerprint has no engine part: the runs cached before engine kinds existed
        were made with it, and stay current.
        """
        return self.in_process and self.config.model is None

    def metadata(self) -> dict[str, Any]:
        """``metadata["engine"]`` of a calibrator fitted on its runs."""
        return {"name": self.name, "logprobs_after_mask": self.logprobs_after_mask,
                "served_model": self.served_model}  # fmt: skip


def engine_kind(config: EngineConfig | None = None) -> EngineKind:
    """What the engine ``config`` builds is: its capability, and a server's served model.

    The engine is built only to be looked at (an in-process engine loads no weights for it);
    a server is asked for its model (``Engine.ready``) when ``remote.served_model`` is not set.

    Args:
        config: the engine's settings; None: the default engine.

    Raises:
        EngineUnavailable: the engine cannot be built, or its server did not answer.
    """
    config = config if config is not None else EngineConfig()
    engine = build_engine(config)
    try:
        if config.backend != IN_PROCESS_ENGINE and config.remote.served_model is None:
            asyncio.run(engine.ready())
            served = getattr(engine, "served_model", None)
            if served:
                remote = config.remote.model_copy(update={"served_model": str(served)})
                config = config.model_copy(update={"remote": remote})
        return EngineKind(config, bool(engine.capabilities.logprobs_after_mask))
    finally:
        engine.close()


@dataclasses.dataclass(frozen=True, slots=True)
class TextCase:
    """One text the paths run on: a labelled text as written, or its OCR'd scan.

    Attributes:
        key: identity of the labelled text (its scan shares it, so both land in one split).
        variant: ``clean`` or ``ocr``.
        text: what the paths read.
        document: the document ``text`` came from (native text or the OCR'd scan).
        gold: the gold output.
        fold: the CRF cross-fitting fold of the labelled text.
        noise: the scan's noise level (None for clean text).
        cases: hard-case tags (``no_value``, ``other_language``, ``ocr``, ``external``…).
        group: for an external text, its source group (``<language>|<spec file>``): the
            validation split holds out whole groups; None for the unit's own texts.
    """

    key: str
    variant: str
    text: str
    document: Document
    gold: dict[str, Any]
    fold: int
    noise: float | None
    cases: tuple[str, ...]
    group: str | None = None


def _same(value: Any, wanted: Any, normalizer: str | None) -> bool:
    if value is None or wanted is None:
        return value is None and wanted is None
    if isinstance(value, bool) or isinstance(wanted, bool):
        return value is wanted
    if isinstance(value, int | float) and isinstance(wanted, int | float):
        return math.isclose(float(value), float(wanted), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(value, str) and normalizer is not None:
        value = NORMALIZERS[normalizer](value) or value
        if isinstance(wanted, str):  # a gold written in another form of the same value
            wanted = NORMALIZERS[normalizer](wanted) or wanted
    return value == wanted


def is_correct(output: Mapping[str, Any], gold: Mapping[str, Any], crf: CrfFallback) -> bool:
    """Whether ``output`` equals ``gold`` field by field (see the module docstring)."""
    fields = set(output) | set(gold)
    return all(
        _same(output.get(f), gold.get(f), crf.fields[f].normalize if f in crf.fields else None)
        for f in fields
    )


# -- texts -----------------------------------------------------------------------------------


def _fold(key: str, settings: Mapping[str, Any]) -> int:
    return int(_hash(settings["seed"], "fold", key), 16) % settings["crf_folds"]


def _scan(text: str, level: float, seed: int) -> Document | None:
    """``text`` rendered as a noisy scan and OCR'd; None when tesseract finds no text."""
    lines = [line for para in text.split("\n") for line in (textwrap.wrap(para, 60) or [""])]
    page = render_page(lines, size=(1700, 120 + 70 * len(lines)), font_size=40, margin=60)
    buffer = io.BytesIO()
    add_scan_noise(page, level=level, seed=seed).save(buffer, format="PNG")
    try:
        return Document.from_bytes(
            buffer.getvalue(), filename="scan.png", ocr=OcrOptions(workers=1)
        )
    except InputError:  # a page too noisy to read has no text to run a unit on
        return None


def text_cases(unit: UnitSpec, config: Mapping[str, Any]) -> list[TextCase]:
    """The labelled texts of ``unit`` and the OCR'd scans of a seeded share of them."""
    settings = config["runs"]
    crf = crf_spec_of(unit)
    examples = load_annotated(crf.examples_path(unit), crf.labels)
    low, high = settings["noise"]
    cases: list[TextCase] = []
    for example in examples:
        key = _hash(unit.name, example.text)
        gold = gold_output(example, crf, unit)
        fold = _fold(key, settings)
        tags = []
        if all(v is None for v in gold.values()):
            tags.append("no_value")
        if len(_FOREIGN.findall(example.text)) >= 2:
            tags.append("other_language")
        document = Document.from_text(example.text)
        cases.append(TextCase(key, "clean", example.text, document, gold, fold, None, tuple(tags)))
        rank = int(_hash(settings["seed"], "ocr", key), 16) / 16**64
        if rank < settings["ocr_share"]:
            rng = random.Random(_hash(settings["seed"], "noise", key))
            level = round(rng.uniform(low, high), 3)
            scanned = _scan(example.text, level, rng.randrange(2**31))
            if scanned is not None:
                cases.append(TextCase(key, "ocr", scanned.text, scanned, gold, fold, level,
                                      (*tags, "ocr")))  # fmt: skip
    for external in external_cases(config, unit.name):
        key = _hash(unit.name, "external", external["id"])
        tags = ["external", f"language:{external['language']}"]
        if external["kind"] == "none":
            tags.append("no_value")
        group = f"{external['language']}|{external['source']}"
        cases.append(TextCase(key, "clean", external["text"], Document.from_text(external["text"]),
                              dict(external["expected"]), _fold(key, settings), None,
                              tuple(tags), group))  # fmt: skip
    return cases


# -- the paths -------------------------------------------------------------------------------


def _fold_paths(unit: UnitSpec, settings: Mapping[str, Any], work: Path) -> dict[int, FallbackPath]:
    """One CRF path per fold, trained on the labelled texts of the other folds."""
    crf = crf_spec_of(unit)
    examples = load_annotated(crf.examples_path(unit), crf.labels)
    raw = crf.examples_path(unit).read_text(encoding="utf-8").splitlines()
    paths: dict[int, FallbackPath] = {}
    for fold in range(settings["crf_folds"]):
        kept = [raw[e.line - 1] for e in examples
                if _fold(_hash(unit.name, e.text), settings) != fold]  # fmt: skip
        examples_name = f"{unit.name}.fold{fold}.jsonl"
        (work / examples_name).write_text("\n".join(kept) + "\n", encoding="utf-8")
        # The fold's unit lives in `work`: its files are named inside it, as a unit's must be
        # (an absolute path or one out of the unit's folder is refused, S061).
        fold_crf = crf.model_copy(
            update={"examples": examples_name, "model": f"{unit.name}.fold{fold}.crf"}
        )
        fallbacks = [fold_crf if f is crf else f for f in unit.fallbacks]
        fold_unit = unit.model_copy(
            update={"fallbacks": fallbacks, "source": work / f"{unit.name}.yaml"}
        )
        train_unit(fold_unit)
        paths[fold] = fold_crf.build(fold_unit)
    return paths


def check_answer(
    runner: UnitRunner, path: str, answer: PathAnswer, text: str
) -> tuple[Outcome, PathAnswer]:
    """The run driver's checks of one answer, in its order: schema, field grammars, grounding."""
    if jsonschema.exceptions.best_match(runner.validator.iter_errors(answer.output)) is not None:
        return "invalid", answer
    for name, grammar in runner.grammars.items():
        value = answer.output.get(name)
        if isinstance(value, str) and not grammar.parse(value).ok:
            return "invalid", answer
    policy = runner.spec.policy
    if path == "primary" and policy.require_grounding:
        try:
            spans = ground_output(
                runner.spec.name, text, answer.output, max_distance=policy.max_field_distance
            )
        except UngroundedOutput:
            return "ungrounded", answer
        answer = dataclasses.replace(answer, spans=spans)
    return "valid", answer


async def model_generations(
    runner: UnitRunner, texts: Sequence[str]
) -> list[Generation | AAUError]:
    """The model's generations for ``texts``, sent as the run driver sends them."""
    assert runner.engine is not None
    policy = runner.spec.policy

    def request(text: str) -> GenerationRequest:
        return GenerationRequest(
            messages=render_messages(runner.spec, text, runner.layout),
            schema=runner.schema,
            max_new_tokens=policy.max_new_tokens,
            deadline=time.monotonic() + policy.timeout_s,
            key=runner.spec.key,
        )

    # One request per call, gathered: the engine batches concurrent requests itself.
    results = await asyncio.gather(*(runner.engine.generate([request(t)]) for t in texts))
    return [r[0] for r in results]


def _row(
    case: TextCase,
    runner: UnitRunner,
    path: str,
    answer: PathAnswer,
    generation: Generation | None,
    crf: CrfFallback,
    embedder: SentenceEmbedder,
) -> dict[str, Any]:
    outcome, checked = check_answer(runner, path, answer, case.text)
    evidence = PathEvidence(
        path, checked, outcome=outcome, text=case.text, description=runner.spec.description,
        generation=generation, document=case.document,
    )  # fmt: skip
    observation = observe(evidence, embedder)
    row = {
        "path": path,
        "outcome": outcome,
        "output": checked.output,
        "confidence": round(float(checked.confidence), 6),
        "signals": {k: round(v, 6) for k, v in observation.signals.items()},
        "correct": is_correct(checked.output, case.gold, crf),
        # Kept so that signal definitions can change without running the paths again.
        "spans": {k: list(v) for k, v in checked.spans.items()},
    }
    if generation is not None:
        row["generation"] = {
            "logprobs": [round(x, 5) for x in generation.token_logprobs],
            "entropies": [round(x, 5) for x in generation.token_entropies],
            "forced": [int(x) for x in generation.forced],
        }
    return row


async def unit_runs(
    unit: UnitSpec, engine: Engine, config: Mapping[str, Any], embedder: SentenceEmbedder
) -> list[dict[str, Any]]:
    """One record per text case of ``unit``: the text, its gold output and every path's row."""
    settings = config["runs"]
    crf = crf_spec_of(unit)
    cases = text_cases(unit, config)
    print(f"{unit.name}: {len(cases)} texts ({sum(c.variant == 'ocr' for c in cases)} scans)",
          file=sys.stderr)  # fmt: skip
    runner = UnitRunner(unit, engine)
    heuristic = next(p for p in runner.fallbacks if p.name == "heuristic")
    with tempfile.TemporaryDirectory(prefix="aau-calibration-") as work:
        crf_paths = _fold_paths(unit, settings, Path(work))
        records: list[dict[str, Any]] = []
        began = time.perf_counter()
        for first in range(0, len(cases), settings["chunk"]):
            chunk = cases[first : first + settings["chunk"]]
            generations = await model_generations(runner, [c.text for c in chunk])
            for case, generation in zip(chunk, generations, strict=True):
                records.append(_record(case, runner, generation, crf_paths[case.fold],
                                       heuristic, crf, embedder))  # fmt: skip
            done = first + len(chunk)
            if done % (settings["chunk"] * 8) == 0 or done == len(cases):
                print(f"  {done}/{len(cases)} ({time.perf_counter() - began:.0f} s)",
                      file=sys.stderr)  # fmt: skip
    return records


def _record(
    case: TextCase,
    runner: UnitRunner,
    generation: Generation | AAUError,
    crf_path: FallbackPath,
    heuristic: FallbackPath,
    crf: CrfFallback,
    embedder: SentenceEmbedder,
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    if isinstance(generation, AAUError):
        errors["primary"] = generation.code
    elif generation.finish_reason == "length":
        errors["primary"] = "invalid_output"
    else:
        try:
            output = json.loads(generation.text)
        except json.JSONDecodeError:
            errors["primary"] = "invalid_output"
        else:
            if isinstance(output, dict):  # as the run driver reads it, in the unit's forms
                output = runner.model_output(output)
            answer = PathAnswer(output=output, confidence=primary_confidence(generation))
            rows.append(_row(case, runner, "primary", answer, generation, crf, embedder))
    for path in (crf_path, heuristic):
        try:
            answer = path.extract(case.text, runner.context)
        except AAUError as exc:
            errors[path.name] = exc.code
            continue
        rows.append(_row(case, runner, path.name, answer, None, crf, embedder))
    cases = list(case.cases)
    if any(r["signals"].get("competing_matches", 0) >= 1 for r in rows):
        cases.append("several_candidates")
    return {
        "unit": runner.spec.name,
        "key": case.key,
        "variant": case.variant,
        "noise": case.noise,
        "fold": case.fold,
        "text": case.text,
        "gold": case.gold,
        "cases": cases,
        "rows": rows,
        "errors": errors,
        **({"group": case.group} if case.group is not None else {}),
    }


# -- cache -----------------------------------------------------------------------------------


# What a unit file held when the shipped runs were made (``RUNS_FORMAT`` 1): its sections, and
# the policy's settings and fallback triggers. A setting added since is in the fingerprint only
# where a unit sets it to something else than its default: at its default a unit means what it
# meant before the setting existed, so its runs are the same, and the cached runs stay current.
# No trigger changes a run (every path runs on every text): the triggers stay in only as they
# were then.
_FORMAT_1_SECTIONS = frozenset({"name", "version", "description", "output", "prompt",
                                "fallbacks", "policy", "fields", "locale", "flow"})  # fmt: skip
_FORMAT_1_POLICY = frozenset({"threshold", "timeout_s", "max_new_tokens", "max_field_distance",
                              "max_string_length", "require_grounding", "fallback_on"})  # fmt: skip
_NEWER_TRIGGERS = frozenset({"engine_overloaded"})


def _newer_at_default(model: Any, known: frozenset[str]) -> set[str]:
    """The fields of ``model`` added since ``known`` that hold their default."""
    fields = type(model).model_fields
    return {name for name, field in fields.items() if name not in known and not field.exclude
            and getattr(model, name) == field.get_default(call_default_factory=True)}  # fmt: skip


def _declared(unit: UnitSpec) -> dict[str, Any]:
    """The unit as its runs depend on it.

    Left out: the acceptance threshold (every path runs whatever it is, so tuning it needs no
    new runs), the engine chain (the runs' engine is the calibration's own, ``EngineKind``),
    ``routing`` (it says which requests a unit is for, never what a run answers), the settings
    added since the shipped runs where they hold their default, and the fallback triggers added
    since (see ``_FORMAT_1_SECTIONS``).
    """
    unread = _newer_at_default(unit, _FORMAT_1_SECTIONS) | {"engines", "routing"}
    top: dict[str, Any] = dict.fromkeys(unread, True)
    top["policy"] = {"threshold"} | _newer_at_default(unit.policy, _FORMAT_1_POLICY)
    declared = unit.model_dump(mode="json", exclude=top)
    policy = declared["policy"]
    policy["fallback_on"] = [t for t in policy["fallback_on"] if t not in _NEWER_TRIGGERS]
    return declared


def runs_fingerprint(
    unit: UnitSpec, config: Mapping[str, Any], engine: EngineKind | None = None
) -> str:
    """What the runs of ``unit`` depend on: the unit, its data, the run settings, the engine.

    Args:
        unit: the unit.
        config: the settings (``load_config``).
        engine: the engine the runs are made with; None, or the default engine, adds nothing
            (the runs cached before engine kinds were made with it), any other its
            ``EngineKind.identity``.
    """
    crf = crf_spec_of(unit)
    parts = [json.dumps(_declared(unit), sort_keys=True).encode(),
             crf.examples_path(unit).read_bytes(),
             json.dumps(config["runs"], sort_keys=True).encode()]  # fmt: skip
    external = external_cases(config, unit.name)
    if external:
        parts.append(json.dumps(external, sort_keys=True).encode())
    if engine is not None and not engine.default:
        parts.append(json.dumps(engine.identity(), sort_keys=True).encode())
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


def runs_folder(runs: Path, engine: EngineKind | None = None) -> Path:
    """Where the runs made with ``engine`` are cached.

    ``runs`` (the data folder's ``runs/``) for the in-process engine and for None,
    ``runs/<engine name>`` for any other.
    """
    return runs if engine is None or engine.in_process else runs / engine.name


def runs_path(unit_name: str, folder: Path) -> Path:
    """Where the runs of a unit are cached in ``folder`` (``runs/`` or an engine's folder in it)."""
    return folder / f"{unit_name}.jsonl.gz"


def _rebuild(engine: EngineKind | None) -> str:
    """The command that builds the runs again, with the engine they are for."""
    if engine is None or engine.default:
        return "`aau calibrate --rebuild`"
    return f"`aau calibrate --rebuild --engine {engine.name} …`"


def _write(path: Path, header: dict[str, Any], records: Iterable[dict[str, Any]]) -> None:
    # mtime=0: the same runs give the same bytes, so an unchanged cache is an unchanged file.
    with (replacing(path) as written, open(written, "wb") as raw,
          gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out):  # fmt: skip
        out.write((json.dumps(header) + "\n").encode())
        for record in records:
            out.write((json.dumps(record, ensure_ascii=False) + "\n").encode())


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        header = json.loads(next(lines))
        return header, [json.loads(line) for line in lines]


def load_runs(
    config: Mapping[str, Any],
    folder: Path,
    units: Path | None = None,
    *,
    engine: EngineKind | None = None,
) -> list[dict[str, Any]]:
    """Every cached record of the configured units.

    Args:
        config: the settings (``load_config``).
        folder: where the runs are cached (the data folder's ``runs/``, or ``runs_folder``).
        units: the folder of the unit files; with it, runs made from another unit file, other
            data, other settings or with another engine are refused. None loads the runs
            unchecked.
        engine: the engine the runs must have been made with (None: the default engine).

    Returns:
        The records, unit by unit in the configured order.

    Raises:
        FileNotFoundError: a unit's runs are not cached, or were made from another unit file,
            other data or other settings; the message names the command.
    """
    records: list[dict[str, Any]] = []
    for name in config["runs"]["units"]:
        path = runs_path(name, folder)
        if not path.is_file():
            raise FileNotFoundError(
                f"no labelled runs for {name} at {path}; build them with {_rebuild(engine)}"
            )
        header, unit_records = _read(path)
        if units is not None and header.get("fingerprint") != runs_fingerprint(
            load_unit(units, name), config, engine
        ):
            raise FileNotFoundError(
                f"the labelled runs in {path} were made from another version of units/{name}.yaml,"
                " its data, the calibration config.yaml or with another engine; rebuild them with"
                f" {_rebuild(engine)}"
            )
        records.extend(unit_records)
    return records


def is_current(
    unit: UnitSpec, config: Mapping[str, Any], folder: Path, engine: EngineKind | None = None
) -> bool:
    """Whether the cached runs of ``unit`` in ``folder`` are of it, its data, config and engine.

    ``engine``: the engine they must have been made with (None: the default engine).
    """
    path = runs_path(unit.name, folder)
    return path.is_file() and _read(path)[0].get("fingerprint") == runs_fingerprint(
        unit, config, engine
    )


async def abuild_runs(
    config: Mapping[str, Any],
    folder: Path,
    units: Path,
    *,
    force: bool = False,
    engine: EngineKind | None = None,
) -> None:
    """Build (or keep, when current) the cached runs of every configured unit.

    Args:
        config: the settings (``load_config``).
        folder: where the runs are cached (the data folder's ``runs/``, or ``runs_folder``).
        units: the folder of the unit files and their annotated data.
        force: run every path on every text again, even where the cache is current.
        engine: the engine the model path runs on (``engine_kind``); None: the default one.
            The ``runs: threads`` setting applies unless its config sets ``threads``.
    """
    import torch  # only building runs needs it: loading cached ones must not

    threads = config["runs"]["threads"]
    torch.set_num_threads(threads)
    settings = engine.config if engine is not None else EngineConfig()
    if settings.threads is None:
        settings = settings.model_copy(update={"threads": threads})
    built: Engine | None = None
    embedder = SentenceEmbedder()
    try:
        for name in config["runs"]["units"]:
            unit = load_unit(units, name)
            path = runs_path(name, folder)
            if not force and is_current(unit, config, folder, engine):
                print(f"{name}: cached runs are current ({path})", file=sys.stderr)
                continue
            fingerprint = runs_fingerprint(unit, config, engine)
            if built is None:
                built = build_engine(settings)
                # Weights loaded, or a server healthy, before the first texts' deadlines start.
                await built.ready()
            began = time.perf_counter()
            records = await unit_runs(unit, built, config, embedder)
            header = {"format": RUNS_FORMAT, "unit": unit.key, "fingerprint": fingerprint,
                      "seconds": round(time.perf_counter() - began, 1),
                      "embedder": embedder.available}  # fmt: skip
            if engine is not None and not engine.default:
                header["engine"] = engine.identity()
            _write(path, header, records)
            print(f"{name}: {len(records)} texts in {header['seconds']} s -> {path}",
                  file=sys.stderr)  # fmt: skip
    finally:
        if built is not None:
            built.close()


def build_runs(
    config: Mapping[str, Any],
    folder: Path,
    units: Path,
    *,
    force: bool = False,
    engine: EngineKind | None = None,
) -> None:
    """Synchronous ``abuild_runs``."""
    asyncio.run(abuild_runs(config, folder, units, force=force, engine=engine))
