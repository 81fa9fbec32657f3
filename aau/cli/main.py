"""The ``aau`` command: validate, run and batch units; print the unit file schema.

``aau validate UNIT...``   check unit files (exit 2 with located messages on error)
``aau run UNIT... --text T | --file F [--json]``   one input, a table (or JSON) of results
``aau batch UNIT... --input IN.jsonl --output OUT.jsonl``   one output line per input line
``aau schema``   the JSON Schema of the unit file format
``aau train UNIT...``   train the units' CRF paths, print held-out precision/recall/F1
``aau grammar build [--check]``   regenerate the ANTLR parsers of ``grammars/*.g4``
``aau termdict …``   tenants' term dictionaries (``aau.cli.termdict``)
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aau.cli.batch import run_batch
from aau.cli.new import add_new_parser
from aau.cli.paths import unit_paths
from aau.cli.route import add_route_parser
from aau.cli.serve import add_serve_parsers
from aau.cli.termdict import add_termdict_parser
from aau.cli.unit_test import add_test_parser
from aau.cli.validate import validate_units
from aau.engines.registry import EngineConfig, engine_configs
from aau.errors import AAUError, InputError
from aau.fallbacks.crf_training import format_report, train_unit
from aau.grammars.build import main as build_main
from aau.ingest import Document
from aau.pipeline import Pipeline
from aau.spec.model import UnitSpec
from aau.spec.pipelines import pipeline_file_schema_text
from aau.spec.schema import unit_file_schema_text
from aau.terms import TermStore
from aau.terms.store import default_store_dir

__all__ = ["main"]


def _unit_paths(items: Sequence[str]) -> list[Path]:
    return unit_paths(items)  # folders walked: aau.cli.paths


def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("engine (also AAU_ENGINE, AAU_MODEL, … or a YAML file)")
    group.add_argument("--engine-config", metavar="FILE", help="engine settings (YAML)")
    group.add_argument("--engine", dest="backend", help="engine backend (default transformers)")
    group.add_argument("--model", help="HF model folder or .gguf file (default: embedded)")
    group.add_argument("--device", help="cpu, cuda, auto")
    group.add_argument("--dtype", choices=["float32", "bfloat16", "float16", "auto"])
    group.add_argument("--no-model", action="store_true", help="run fallback paths only")
    group.add_argument(
        "--base-url", action="append", metavar="URL",
        help="an OpenAI-compatible server (engine openai; repeat for replicas)",
    )  # fmt: skip
    group.add_argument("--served-model", help="the model name the server knows (engine openai)")
    group.add_argument(
        "--engines", metavar="FILE",
        help="named engines (YAML: name -> engine settings) for units' `engines` chains",
    )  # fmt: skip
    group.add_argument(
        "--term-merging",
        action="store_true",
        default=None,
        help="read dictionary terms as merged tokens (default: annotate only)",
    )
    parser.add_argument("--tenant", help="whose term dictionaries apply (batch: per line)")
    parser.add_argument("--terms-store", help="term store folder (default: AAU_TERMS_DIR)")


PIPELINES_DIR = Path("units") / "pipelines"
"""Where ``aau run NAME`` looks for a pipeline file called ``NAME.yaml``."""


def pipeline_file(items: Sequence[str]) -> Path | None:
    """The pipeline file ``items`` name, if they name one instead of units.

    One item that is a ``.yaml`` file in a ``pipelines`` folder, or a bare name with a file
    ``units/pipelines/<name>.yaml``.
    """
    if len(items) != 1:
        return None
    path = Path(items[0])
    if path.suffix == ".yaml" and path.parent.name == "pipelines":
        return path
    named = PIPELINES_DIR / f"{items[0]}.yaml"
    if not path.exists() and path.suffix == "" and named.is_file():
        return named
    return None


def _pipeline(args: argparse.Namespace) -> Pipeline:
    terms = TermStore(args.terms_store)
    options: dict[str, Any] = {"terms": terms}
    if args.no_model:
        options["engine"] = False
    else:
        remote = {"base_urls": args.base_url, "served_model": args.served_model}
        options["engine"] = EngineConfig.from_sources(
            args.engine_config, backend=args.backend, model=args.model, device=args.device,
            dtype=args.dtype, term_merging=args.term_merging,
            remote={k: v for k, v in remote.items() if v} or None,
        )  # fmt: skip
        options["engines"] = engine_configs(args.engines) if args.engines else None
    if getattr(args, "route", False):  # aau serve --route
        options["router"] = True
    declared = pipeline_file(args.units)
    if declared is not None:
        return Pipeline.from_file(declared, **options)
    return Pipeline([_load(p) for p in _unit_paths(args.units)], **options)


def _load(path: Path) -> UnitSpec:
    return UnitSpec.from_file(path)


# -- commands ---------------------------------------------------------------------------------


def cmd_validate(args: argparse.Namespace) -> int:
    """Check every unit file; print every problem, located (``aau.cli.validate``)."""
    return validate_units(_unit_paths(args.units))


def cmd_train(args: argparse.Namespace) -> int:
    """Train each unit's trainable paths (CRF, classifier…) and print their held-out scores."""
    for path in _unit_paths(args.units):
        spec = _load(path)
        reports = [format_report(train_unit(spec))] if any(
            f.kind == "crf" for f in spec.fallbacks
        ) else []  # fmt: skip
        reports += [r for f in spec.fallbacks if (r := f.train(spec)) is not None]
        print("\n".join(reports) if reports else f"{spec.name}: nothing to train")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Fit the calibrator from labelled runs of the shipped units; print thresholds and figures.

    The thresholds are those cross-validation on the training texts picks; the figures are
    measured on the validation texts. Exit 2, saying what is needed and where it was looked
    for, when the settings, the unit files or their annotated data are missing.

    Without an engine option the runs are the in-process engine's with the embedded model (the
    ``AAU_*`` engine variables do not change that); with one, the engine is
    ``EngineConfig.from_sources`` of ``--engine-config`` and the options (the variables fill in
    what they leave out, as for ``aau run``).
    """
    # torch: only fitting needs it
    from aau.calibration.calibrator import IN_PROCESS_ENGINE
    from aau.fitting import MissingCalibrationInput, calibrate

    engine: EngineConfig | None = None
    remote = {"base_urls": args.base_url, "served_model": args.served_model}
    if args.engine_config or args.backend or any(remote.values()):
        engine = EngineConfig.from_sources(
            args.engine_config, backend=args.backend,
            remote={k: v for k, v in remote.items() if v} or None,
        )  # fmt: skip
        if engine.backend == IN_PROCESS_ENGINE and any(remote.values()):
            print(f"error: --base-url and --served-model name a server; the {engine.backend} "
                  "engine runs in process (pass --engine openai)", file=sys.stderr)  # fmt: skip
            return 2
    if args.unit:
        return _calibrate_units(args, engine)
    try:
        calibrate(
            Path(args.data) if args.data else None,
            units=Path(args.units) if args.units else None,
            out=Path(args.out) if args.out else None,
            report=args.report,
            json=args.json,
            rebuild=args.rebuild,
            engine=engine,
        )
    except MissingCalibrationInput as exc:  # what it needs and where it looked, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _calibrate_units(args: argparse.Namespace, config: EngineConfig | None) -> int:
    """``aau calibrate --unit``: fit and write each unit's own calibrator; print its figures."""
    from aau.calibration.unit_calibrator import unit_calibration_path
    from aau.engines.registry import build_engine
    from aau.errors import CalibrationError
    from aau.fitting.unit_calibration import fit_unit_calibration, write_unit_calibration

    engine = None if args.no_model else build_engine(config)
    try:
        for path in args.unit:
            spec = _load(Path(path))
            try:
                apart = spec.base_dir / f"{spec.name}.heldout.jsonl"
                data = fit_unit_calibration(spec, engine=engine, log=_progress,
                                            apart=apart if apart.is_file() else None)  # fmt: skip
            except CalibrationError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            out = unit_calibration_path(spec)
            write_unit_calibration(data, out)
            report = data.report
            paths = ", ".join(f"{name} {p['rows']} answers, right {p['accuracy']:.3f}, "
                              f"out-of-fold ECE {p['cv_ece']:.3f}"
                              for name, p in report["paths"].items())  # fmt: skip
            print(
                f"{spec.name}: {report['rows']} answers on {report['texts']} texts, C "
                f"{report['c']}, out-of-fold ECE {report['cv_ece']:.3f} ({paths}); wrote {out}"
            )
            if args.json:
                print(json.dumps({"unit": spec.name, **report}, sort_keys=True))
    finally:
        if engine is not None:
            engine.close()
    return 0


def cmd_grammar(args: argparse.Namespace) -> int:
    """Regenerate (or with --check, verify) the generated grammar parsers."""
    return build_main(["--check"] if args.check else [])


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the unit file JSON Schema (or, with ``--pipeline``, the pipeline file's)."""
    sys.stdout.write(pipeline_file_schema_text() if args.pipeline else unit_file_schema_text())
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Run units over one text and print a table, or JSON with ``--json``."""
    from aau.cli.render import print_table  # rich: only the table needs it

    pipeline = _pipeline(args)
    try:
        if args.text is not None:
            source: str | Document = args.text
        else:
            source = Document.from_path(args.file, languages=args.lang)
    except InputError as exc:  # the results still say why, per unit, with the code
        result, unreadable = pipeline.failed(exc), True
        print(f"error: {exc} [{exc.code}]", file=sys.stderr)
    else:
        unreadable = False
        result = pipeline.run(source, tenant=args.tenant)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        print_table([result])
    return 1 if unreadable else 0


def cmd_batch(args: argparse.Namespace) -> int:
    """Run units over a JSONL file; write one line per input line, in order."""
    if args.ray is not None:
        return _ray_batch(args)
    pipeline = _pipeline(args)
    count = asyncio.run(
        run_batch(pipeline, Path(args.input), Path(args.output),
                  concurrency=args.concurrency, languages=args.lang, tenant=args.tenant,
                  documents_root=Path(args.documents_root) if args.documents_root else None)
    )  # fmt: skip
    print(f"wrote {count} lines to {args.output}", file=sys.stderr)
    return 0


def _ray_batch(args: argparse.Namespace) -> int:
    """``aau batch --ray``: each Ray worker builds its pipeline from the command's options."""
    try:
        from aau.cli.ray_batch import run_ray_batch  # Ray is an optional extra
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in _unit_paths(args.units):  # a bad unit file stops the batch before Ray starts
        _load(path)
    count = run_ray_batch(
        functools.partial(_pipeline, _worker_options(args)), Path(args.input), Path(args.output),
        address=args.ray or None, workers=args.ray_workers, concurrency=args.concurrency,
        languages=args.lang, tenant=args.tenant,
        documents_root=Path(args.documents_root) if args.documents_root else None,
    )  # fmt: skip
    print(f"wrote {count} lines to {args.output}", file=sys.stderr)
    return 0


def _worker_options(args: argparse.Namespace) -> argparse.Namespace:
    """The options as a worker in another process reads them: plain values, absolute paths.

    A worker's working folder and home are not the driver's, so the unit, engine and term
    store paths are resolved here.
    """
    options = {key: value for key, value in vars(args).items() if key != "func"}
    options["units"] = [str(Path(item).resolve()) for item in args.units]
    options["terms_store"] = str(Path(args.terms_store or default_store_dir()).resolve())
    for key in ("engine_config", "engines"):
        if options[key]:
            options[key] = str(Path(options[key]).resolve())
    if args.model and Path(args.model).exists():  # else a name the engine resolves itself
        options["model"] = str(Path(args.model).resolve())
    return argparse.Namespace(**options)


def build_parser() -> argparse.ArgumentParser:
    """The ``aau`` argument parser."""
    parser = argparse.ArgumentParser(prog="aau", description="Atomic analysis units.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="check unit files")
    p.add_argument("units", nargs="+", help="unit files or folders")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="print the unit file JSON Schema")
    p.add_argument("--pipeline", action="store_true", help="the pipeline file's schema instead")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser(
        "train",
        help="train the units' CRF, classifier and record paths",
        description="Train every trainable fallback of each unit from the examples its unit "
        "file names, write the model where its `model:` key says (relative to the unit file) "
        "and print its scores on examples held out of that training.",
        epilog="Each fallback reads its own `examples:` file: annotated texts with their spans "
        "for `crf` (JSONL; `aau train` names any span that cuts a token), labelled texts for "
        "`classifier`. Train again after changing the examples, the labels, the features or "
        "the training settings: `aau validate` reports a model that is missing or older than "
        "them. Example: aau train units/extract_notice_period.yaml",
    )
    p.add_argument("units", nargs="+", help="unit files or folders (each unit file in a folder)")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser(
        "calibrate", help="fit the confidence calibrator and choose thresholds from labelled runs"
    )
    p.add_argument(
        "--data",
        metavar="DIR",
        help="the folder holding config.yaml and the cached runs runs/ (default: ./calibration)",
    )
    p.add_argument(
        "--units",
        metavar="DIR",
        help="the unit files and their annotated data (default: ./units, else the units folder "
        "beside --data)",
    )
    p.add_argument(
        "--out",
        metavar="PATH",
        help="the calibrator artifact; its .json summary and reliability.png go beside it "
        "(default: <data>/calibrator.pt; with another engine <data>/calibrator-<engine>.pt)",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="print the full report and write reliability.png beside the artifact",
    )
    p.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    p.add_argument(
        "--rebuild", action="store_true", help="run every path on every labelled text again (slow)"
    )
    engine = p.add_argument_group(
        "engine of the model path's runs",
        "default: transformers with the embedded model; another engine's runs are cached in "
        "<data>/runs/<engine>/, its calibrator is <data>/calibrator-<engine>.pt",
    )
    engine.add_argument("--engine", dest="backend", metavar="NAME",
                        help="a registered engine backend (transformers, openai…)")  # fmt: skip
    engine.add_argument("--engine-config", metavar="FILE", help="engine settings (YAML)")
    engine.add_argument(
        "--base-url", action="append", metavar="URL",
        help="an OpenAI-compatible server (engine openai; repeat for replicas)",
    )  # fmt: skip
    engine.add_argument(
        "--served-model",
        metavar="NAME",
        help="the model name the server knows (engine openai; default: asked from the server)",
    )
    p.add_argument(
        "--unit", action="append", metavar="FILE",
        help="fit this unit's own calibrator instead (<name>.calibration.json beside it) from "
        "out-of-fold runs on its labelled texts, rescaled on <name>.heldout.jsonl where the unit "
        "has one; repeatable",
    )  # fmt: skip
    p.add_argument(
        "--no-model", action="store_true",
        help="with --unit: fit on the fallbacks' answers alone (no engine)",
    )  # fmt: skip
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("grammar", help="field-format grammars")
    p.add_argument("action", choices=["build"], help="regenerate the ANTLR parsers")
    p.add_argument("--check", action="store_true", help="fail when a parser is stale")
    p.set_defaults(func=cmd_grammar)

    p = sub.add_parser("run", help="run units, or a pipeline, over one text or document")
    p.add_argument(
        "units", nargs="+", metavar="UNIT_OR_PIPELINE",
        help="unit files or folders, or one pipeline (units/pipelines/NAME.yaml, or NAME)",
    )  # fmt: skip
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the text to analyse")
    source.add_argument("--file", help="a document: UTF-8 text, PDF, PNG, JPEG or TIFF")
    p.add_argument("--lang", default="eng", help="tesseract languages for scans (eng+deu…)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _add_engine_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("batch", help="run units over a JSONL file")
    p.add_argument("units", nargs="+", help="unit files or folders")
    p.add_argument("--input", required=True, help='JSONL lines {"id", "text"}')
    p.add_argument("--output", required=True, help="JSONL results, one line per input line")
    p.add_argument("--concurrency", type=int, default=8, help="inputs in flight (default 8)")
    p.add_argument("--lang", default="eng", help="tesseract languages for scans (eng+deu…)")
    p.add_argument(
        "--documents-root",
        metavar="DIR",
        help="the folder line paths must resolve inside (default: the input file's folder)",
    )
    p.add_argument(
        "--ray", nargs="?", const="", metavar="ADDRESS",
        help="spread the lines over Ray workers: a local cluster, or the one at ADDRESS "
        "(needs aau[ray]; --concurrency is then per worker)",
    )  # fmt: skip
    p.add_argument(
        "--ray-workers", type=int, metavar="N",
        help="Ray workers, each with its own pipeline (default: the cluster's CPUs)",
    )  # fmt: skip
    _add_engine_options(p)
    p.set_defaults(func=cmd_batch)

    add_termdict_parser(sub)
    add_route_parser(sub)
    add_test_parser(sub)
    add_new_parser(sub)
    add_serve_parsers(sub, _add_engine_options, _pipeline)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aau`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except AAUError as exc:
        print(f"error: {exc}", file=sys.stderr)
        for note in getattr(exc, "__notes__", []):
            print(f"  {note}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
