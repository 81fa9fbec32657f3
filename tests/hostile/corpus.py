"""The hostile corpus: its manifest, the recipes for what cannot be committed, and the harness.

Shared by ``tests/hostile/test_corpus.py`` (one test per case) and ``benchmarks/hostile.py``
(counts). ``cases.yaml`` lists every case (its header says what each key means); this module

* **materializes** each case in a temporary folder: a committed file is copied with ``MARKER``
  replaced by a path that must never come to exist, and a recipe (``RECIPES``) makes what a
  repository cannot hold — FIFOs, symlinks, ``/dev/zero`` paths, files of 10 to 100 MB, PDFs and
  images made with fpdf2 and Pillow then corrupted;
* **runs** the real CLI on it, ``python -m aau.cli.main ...`` in a child process (``--no-model``
  for ``run`` and ``batch``), from a fresh working folder, with ``HOME`` and ``AAU_TERMS_DIR`` in
  the temporary folder and a wall-clock timeout (a child still running is killed: a *hang*).
  Memory: every child's peak RSS (``ru_maxrss`` of the command, reported by a small launcher
  that starts it: a child forked straight from a test process would count that process's
  memory too) must stay under 2 GB, and an address-space limit (``RLIMIT_AS``, set by the
  launcher) stops a runaway: 2 GB for the
  children that do not load torch (validate, termdict, render: ~0.7 GB of address space, ~330 MB
  resident), 6 GB for those that do (batch, run, train: torch and the calibrator's sentence
  embedder reserve ~2.9 GB of address space for ~1 GB resident, so 2 GB aborts them at start
  with "cannot allocate memory for thread-local data"). ``--no-model`` runs never render a
  prompt, so the template cases also go through ``RENDER_SCRIPT`` (load the unit, render its
  messages as a model run would) in the same kind of child;
* **judges** each case: the exit code, never a ``Traceback``, the located error
  (``error: FILE:LINE: ... [S007]``) naming the case's own file, or the coded result of the
  case's line (one output line per input line, in order), no marker file, and the case's own
  checks (a victim file outside a unit's folder unchanged, a term store unchanged).

To stay fast, cases share runs where the CLI reports per file or per line: one ``aau validate``
over every unit file, one ``aau termdict check`` over every dictionary, one ``aau batch`` of
every hostile line and document between good lines. A case whose shared run leaves it
unjudged or failing (the run crashed, hung, or printed nothing about its file) is run again
alone, and that run decides it, so a failure always comes with its own exit code and stderr.
Children are started and reaped from one thread, ``JOBS`` at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MANIFEST = HERE / "cases.yaml"
BATCH_UNITS = (
    REPO / "units" / "extract_price.yaml",
    REPO / "units" / "extract_penalty_clauses.yaml",
    REPO / "units" / "detect_complaint.yaml",
    HERE / "support" / "hostile_total.yaml",
)
"""The units every hostile batch runs: one of each path kind a line meets (CRF, heuristic,
records, classifier, keyword rules) and a heuristic one of the corpus's own."""
BATCH_UNIT_NAMES = ("extract_price", "extract_penalty_clauses", "detect_complaint", "hostile_total")

KINDS = ("unit", "batch", "document", "dictionary")
EXPECTS = ("refused", "coded", "accepted")
UNIT_COMMANDS = ("validate", "render", "run", "train")
DICTIONARY_COMMANDS = ("check", "add")

TIMEOUT_S = float(os.environ.get("AAU_HOSTILE_TIMEOUT_S", "60"))
"""Wall-clock limit of one child; one still running then is killed and counted as a hang."""
MEMORY_BYTES = int(os.environ.get("AAU_HOSTILE_MEMORY_MB", "2048")) * 2**20
"""The bound on every child's peak RSS, and the address-space limit (RLIMIT_AS) of children
that do not load torch (validate, termdict, render)."""
TORCH_ADDRESS_BYTES = int(os.environ.get("AAU_HOSTILE_TORCH_ADDRESS_MB", "6144")) * 2**20
"""The address-space limit of children that load torch (batch, run, train): they reserve ~2.9 GB
of address space for ~1 GB resident, so 2 GB of RLIMIT_AS aborts them at start; this limit only
stops a runaway, the RSS bound is the test."""
JOBS = int(os.environ.get("AAU_HOSTILE_JOBS", str(min(4, max(2, os.cpu_count() or 2)))))
"""Children run at once."""
GOOD_TEXTS = (
    "Invoice 2024-117. Total due: EUR 1,250.00 by 30 April 2024.",
    "Please deliver 12 boxes of A4 paper on 3 June 2024.",
    "Preis: 49,90 EUR inkl. MwSt., Lieferung am 5. Juni 2025.",
    "Thanks for your message, see you next week.",
    "The licence fee is 3,000 USD per year for up to 12 users.",
    "Shipment of 2,500 kg steel coils; total 12,474.00 USD.",
    "Montant total : 830,00 EUR, payable sous 30 jours.",
)
"""Texts of the good lines that surround the hostile ones."""

_TRACEBACK = "Traceback (most recent call last)"
_CHECK_ID = re.compile(r"\[[ST]\d{3}\]\s*$")

# What the render step runs: `--no-model` runs never render a prompt, so this renders each unit's
# template as a model run would (aau.prompts.render_messages), in a child like the CLI's.
RENDER_SCRIPT = """\
import sys
from aau.errors import SpecError
from aau.prompts.render import render_messages
from aau.spec.model import UnitSpec
for path in sys.argv[1:]:
    try:
        spec = UnitSpec.from_file(path)
    except SpecError as exc:
        print(f"refused: {path}: [{exc.check}]", flush=True)
        continue
    try:
        messages = render_messages(spec, "Invoice 7. Total: 120.50 EUR.")
    except Exception as exc:
        print(f"render-error: {path}: {type(exc).__name__}: {str(exc)[:200]!r}", flush=True)
        continue
    print(f"rendered: {path}: {sum(len(m['content']) for m in messages)} characters", flush=True)
"""


# -- the manifest ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One entry of ``cases.yaml``."""

    id: str
    kind: str
    file: str
    attacks: str
    expect: str
    check: str | None = None
    code: str | None = None
    recipe: str | None = None
    commands: tuple[str, ...] = ()
    run_text: str | None = None

    @property
    def steps(self) -> tuple[str, ...]:
        """The commands the case runs (the kind's default when the manifest names none)."""
        if self.commands:
            return self.commands
        if self.kind == "unit":
            return ("validate",)
        if self.kind == "dictionary":
            return DICTIONARY_COMMANDS
        return ("batch",)

    @property
    def committed(self) -> Path | None:
        """The committed file under tests/hostile/, if there is one."""
        if Path(self.file).is_absolute():
            return None
        path = HERE / self.file
        return path if path.is_file() else None


def load_cases(path: Path = MANIFEST) -> list[Case]:
    """Every case of the manifest, in its order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    cases = []
    for entry in data["cases"]:
        entry = dict(entry)
        entry["commands"] = tuple(entry.get("commands") or ())
        cases.append(Case(**entry))
    return cases


def manifest_problems(cases: Sequence[Case]) -> list[str]:
    """What is wrong with the manifest itself (unknown kinds, missing files and recipes…)."""
    problems = []
    ids = Counter(case.id for case in cases)
    problems += [f"{case_id}: listed {n} times" for case_id, n in ids.items() if n > 1]
    for case in cases:
        if case.kind not in KINDS:
            problems.append(f"{case.id}: unknown kind {case.kind!r}")
        if case.expect not in EXPECTS:
            problems.append(f"{case.id}: unknown expect {case.expect!r}")
        if not case.id.startswith(f"{case.kind}-"):
            problems.append(f"{case.id}: the id does not start with its kind")
        allowed = {"unit": UNIT_COMMANDS, "dictionary": DICTIONARY_COMMANDS}.get(case.kind, ())
        unknown = [c for c in case.commands if c not in allowed]
        if unknown:
            problems.append(f"{case.id}: unknown commands {unknown}")
        if case.recipe is not None and case.recipe not in RECIPES:
            problems.append(f"{case.id}: unknown recipe {case.recipe!r}")
        if case.committed is None and case.recipe is None and not Path(case.file).is_absolute():
            problems.append(f"{case.id}: {case.file} is neither committed nor made by a recipe")
        if "run" in case.steps and case.run_text is None:
            problems.append(f"{case.id}: runs `aau run` without a run_text")
        expected = "coded" if case.kind in ("batch", "document") else "refused"
        if case.expect not in (expected, "accepted"):
            problems.append(f"{case.id}: a {case.kind} case is {expected} or accepted")
    return problems


# -- materializing cases ---------------------------------------------------------------------


@dataclass
class Place:
    """Where one run of the corpus puts its cases.

    ``root/cases/<id>/`` holds each case's files, ``batch/`` the shared batch input with its
    documents under ``batch/docs/``, ``markers/`` the paths ``MARKER`` stands for.
    """

    root: Path
    checks: dict[str, list[Callable[[], str | None]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        for folder in (self.markers, self.docs, self.home, self.terms, self.runs):
            folder.mkdir(parents=True, exist_ok=True)

    @property
    def markers(self) -> Path:
        return self.root / "markers"

    @property
    def batch(self) -> Path:
        return self.root / "batch"

    @property
    def docs(self) -> Path:
        return self.batch / "docs"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def terms(self) -> Path:
        return self.root / "terms"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    def case_dir(self, case: Case) -> Path:
        folder = self.root / "cases" / case.id
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def outside(self, case: Case) -> Path:
        """A folder beside the case's unit folder (outside it)."""
        folder = self.case_dir(case) / "outside"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def marker(self, case: Case) -> Path:
        return self.markers / case.id

    def add_check(self, case: Case, check: Callable[[], str | None]) -> None:
        """A check run after every run: it returns what is wrong, or None."""
        self.checks.setdefault(case.id, []).append(check)

    def target(self, case: Case) -> Path:
        """Where the case's file is made: documents in the batch's docs folder."""
        if Path(case.file).is_absolute():
            return Path(case.file)
        if case.kind == "document":
            return self.docs / Path(case.file).name
        path = self.case_dir(case) / case.file
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


def materialize(case: Case, place: Place) -> Path:
    """Make the case's file (and what it needs beside it); return the path the CLI is given."""
    target = place.target(case)
    source = case.committed
    if source is not None:
        data = source.read_bytes()
        data = data.replace(b"MARKER", os.fsencode(place.marker(case)))
        data = data.replace(b"OUTSIDE_DIR", os.fsencode(place.outside(case)))
        target.write_bytes(data)
    if case.recipe is not None:
        RECIPES[case.recipe](case, target, place)
    return target


def batch_line(case: Case, place: Place) -> bytes:
    """The input line of a batch or document case (materialized)."""
    path = materialize(case, place)
    if case.kind == "document":
        return json.dumps({"id": case.id, "path": f"docs/{path.name}"}).encode()
    data = path.read_bytes()
    return data[:-1] if data.endswith(b"\n") else data


def good_line(number: int) -> bytes:
    """A legitimate line (``good-<number>``)."""
    text = f"{GOOD_TEXTS[number % len(GOOD_TEXTS)]} Ref {number}."
    return json.dumps({"id": f"good-{number}", "text": text}).encode()


# -- recipes -----------------------------------------------------------------------------------


def _copy_examples(target: Path) -> None:
    shutil.copyfile(REPO / "units" / "extract_price.annotated.jsonl", target)


def _crf_folder(case: Case, target: Path, place: Place) -> None:
    """The unit's folder holds valid annotated examples (so only the attack can fail it)."""
    _copy_examples(target.parent / "examples.jsonl")


def _crf_folder_with_victim(case: Case, target: Path, place: Place) -> None:
    _crf_folder(case, target, place)
    victim = target.parent.parent / "victim"
    victim.mkdir(exist_ok=True)
    (victim / "target.txt").write_text("the victim's own content\n")
    before = sorted((p.name, p.read_bytes()) for p in victim.iterdir())

    def unchanged() -> str | None:
        after = sorted((p.name, p.read_bytes()) for p in victim.iterdir())
        if after != before:
            return f"the victim folder outside the unit's changed: {[n for n, _ in after]}"
        return None

    place.add_check(case, unchanged)


def _crf_folder_with_outside(case: Case, target: Path, place: Place) -> None:
    _crf_folder(case, target, place)
    _copy_examples(place.outside(case) / "secret.annotated.jsonl")


def _crf_folder_symlink_outside(case: Case, target: Path, place: Place) -> None:
    secret = place.outside(case) / "secret.annotated.jsonl"
    _copy_examples(secret)
    (target.parent / "examples.jsonl").symlink_to(secret)


def _crf_folder_fifo_examples(case: Case, target: Path, place: Place) -> None:
    os.mkfifo(target.parent / "examples.jsonl")


def _unit_text(stem: str) -> str:
    support = (HERE / "support" / "hostile_total.yaml").read_text(encoding="utf-8")
    return support.replace("name: hostile_total", f"name: {stem}")


def _unit_brackets(case: Case, target: Path, place: Place) -> None:
    target.write_text("[" * 100_000)


def _unit_nested_mappings(case: Case, target: Path, place: Place) -> None:
    target.write_text("{a: " * 100_000 + "1" + "}" * 100_000 + "\n")


def _unit_50mb(case: Case, target: Path, place: Place) -> None:
    padding = ("# " + "padding " * 12 + "\n").encode() * 1000
    with target.open("wb") as file:
        file.write(_unit_text(target.stem).encode())
        while file.tell() < 50 * 2**20:
            file.write(padding)


def _fifo(case: Case, target: Path, place: Place) -> None:
    os.mkfifo(target)


def _batch_json_deep(case: Case, target: Path, place: Place) -> None:
    nested = "[" * 100_000 + "]" * 100_000
    target.write_text(f'{{"id": "deep", "text": "Total: 5 EUR", "extra": {nested}}}\n')


def _batch_line_10mb(case: Case, target: Path, place: Place) -> None:
    target.write_text('{"id": "ten-mb", "text": "' + "Total 5 EUR. " * 806_600 + '"}\n')


def _batch_sentences_at_limit(case: Case, target: Path, place: Place) -> None:
    # 1,000,000 characters, a full stop every 13: whatever looks back from each sentence end
    # must stay bounded, or this line alone outlasts the timeout.
    target.write_text('{"id": "sentences", "text": "' + "Fee 5 EUR. Ok" * 76_923 + '"}\n')


def _batch_text_over_limit(case: Case, target: Path, place: Place) -> None:
    target.write_text('{"id": "over-limit", "text": "' + "a" * 1_000_001 + '"}\n')


def _batch_fifo(case: Case, target: Path, place: Place) -> None:
    pipe = place.docs / "pipe.txt"
    if not pipe.exists():
        os.mkfifo(pipe)


def _outside_text(place: Place) -> Path:
    outside = place.batch.parent / "outside.txt"
    outside.write_text("Invoice 99. Total due: EUR 4,200.00 (a file outside the batch).\n")
    return outside


def _batch_outside_file(case: Case, target: Path, place: Place) -> None:
    _outside_text(place)


def _batch_symlink_escape(case: Case, target: Path, place: Place) -> None:
    link = place.docs / "escape.txt"
    if not link.is_symlink():
        link.symlink_to(_outside_text(place))


def make_pdf(pages: int = 2, *, text: bool = True) -> bytes:
    """A valid, uncompressed PDF made with fpdf2 (so its objects can be edited in place)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_compression(False)
    pdf.set_font("helvetica", size=12)
    for number in range(1, pages + 1):
        pdf.add_page()
        if text:
            pdf.cell(text=f"Invoice {number}. Total due: EUR {number},250.00")
    return bytes(pdf.output())


def _replace_all(data: bytes, old: bytes, new: bytes) -> bytes:
    """``data`` with ``old`` replaced by ``new`` of the same length (the xref offsets hold)."""
    if len(old) != len(new) or old not in data:
        raise ValueError(f"cannot replace {old!r} by {new!r} in place")
    return data.replace(old, new)


def pdf_pages_fail() -> bytes:
    """A PDF that opens but whose every page fails to load: its page objects are no pages."""
    return _replace_all(make_pdf(), b"/Type /Page\n", b"/Type /Xage\n")


def _pdf_pages_fail(case: Case, target: Path, place: Place) -> None:
    target.write_bytes(pdf_pages_fail())


def _pdf_page_tree_cycle(case: Case, target: Path, place: Place) -> None:
    # Object 1 is the Pages node, object 3 the first page: the tree now holds itself.
    target.write_bytes(_replace_all(make_pdf(), b"/Kids [3 0 R", b"/Kids [1 0 R"))


def _pdf_garbage_content(case: Case, target: Path, place: Place) -> None:
    data = make_pdf()
    start = data.index(b"stream\n") + len(b"stream\n")
    end = data.index(b"\nendstream", start)
    garbage = bytes(0x80 + (7 * i) % 128 for i in range(end - start))  # no operator
    target.write_bytes(data[:start] + garbage + data[end:])


def _pdf_truncated(case: Case, target: Path, place: Place) -> None:
    data = make_pdf(3)
    target.write_bytes(data[: len(data) // 2])


def _pdf_10000_pages(case: Case, target: Path, place: Place) -> None:
    target.write_bytes(make_pdf(10_000, text=False))


def _pdf_encrypted(case: Case, target: Path, place: Place) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_encryption(owner_password="owner-secret", user_password="user-secret")
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.cell(text="Total due: EUR 1,250.00")
    target.write_bytes(bytes(pdf.output()))


def _pdf_header_only(case: Case, target: Path, place: Place) -> None:
    target.write_bytes(b"%PDF-1.7\n%%EOF\n")


def _empty(case: Case, target: Path, place: Place) -> None:
    target.write_bytes(b"")


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, idat: bytes) -> bytes:
    """A greyscale PNG of the given header size around the given IDAT bytes."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )


def _png_corrupt_idat(case: Case, target: Path, place: Place) -> None:
    garbage = bytes((31 * i + 17) % 256 for i in range(2000))  # not a zlib stream
    target.write_bytes(png(200, 100, garbage))


def png_bomb() -> bytes:
    """100,000 x 100,000 pixels (10 gigapixels) declared in a file of a few hundred bytes."""
    return png(100_000, 100_000, zlib.compress(b"\x00" * 100_001 * 4))


def _png_bomb(case: Case, target: Path, place: Place) -> None:
    target.write_bytes(png_bomb())


def _gif_bomb(case: Case, target: Path, place: Place) -> None:
    screen = struct.pack("<HHBBB", 65535, 65535, 0, 0, 0)
    image = b"," + struct.pack("<HHHHB", 0, 0, 65535, 65535, 0)
    target.write_bytes(b"GIF89a" + screen + image + b"\x02\x02\x4c\x01\x00;")


def _tiff_many_pages(case: Case, target: Path, place: Place) -> None:
    from PIL import Image

    frames = [Image.new("L", (16, 16), 255 - n % 200) for n in range(300)]
    frames[0].save(target, format="TIFF", save_all=True, append_images=frames[1:])


def _jpeg_truncated(case: Case, target: Path, place: Place) -> None:
    import io

    from PIL import Image, ImageDraw

    image = Image.new("RGB", (400, 200), "white")
    ImageDraw.Draw(image).text((10, 80), "Total due: EUR 1,250.00", fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=90)
    data = buffer.getvalue()
    target.write_bytes(data[: len(data) // 2])


def _text_over_limit(case: Case, target: Path, place: Place) -> None:
    target.write_text("a " * 500_001)


def _dictionary_brackets(case: Case, target: Path, place: Place) -> None:
    target.write_text("[" * 100_000)


def _dictionary_dev_zero_symlink(case: Case, target: Path, place: Place) -> None:
    target.symlink_to("/dev/zero")


def _dictionary_100mb(case: Case, target: Path, place: Place) -> None:
    block = "".join(f"term {n}\tcanonical_{n}\tclause\n" for n in range(40_000)).encode()
    with target.open("wb") as file:
        file.write(b"term\tcanonical\tcategory\n")
        while file.tell() < 100 * 2**20:
            file.write(block)


def _dictionary_csv_1mb_field(case: Case, target: Path, place: Place) -> None:
    target.write_text('term,canonical,category\n"' + "x" * 2**20 + '",x,clause\n')


def _dictionary_many_columns(case: Case, target: Path, place: Place) -> None:
    target.write_text("term\tcanonical\tcategory\n" + "a\t" * 100_000 + "\n")


RECIPES: dict[str, Callable[[Case, Path, Place], None]] = {
    "crf_folder": _crf_folder,
    "crf_folder_with_victim": _crf_folder_with_victim,
    "crf_folder_with_outside": _crf_folder_with_outside,
    "crf_folder_symlink_outside": _crf_folder_symlink_outside,
    "crf_folder_dotdot": _crf_folder_with_outside,
    "crf_folder_fifo_examples": _crf_folder_fifo_examples,
    "unit_brackets_100k": _unit_brackets,
    "unit_nested_mappings_100k": _unit_nested_mappings,
    "unit_50mb": _unit_50mb,
    "unit_fifo": _fifo,
    "batch_json_deep": _batch_json_deep,
    "batch_line_10mb": _batch_line_10mb,
    "batch_text_over_limit": _batch_text_over_limit,
    "batch_sentences_at_limit": _batch_sentences_at_limit,
    "batch_fifo": _batch_fifo,
    "batch_outside_file": _batch_outside_file,
    "batch_symlink_escape": _batch_symlink_escape,
    "pdf_pages_fail": _pdf_pages_fail,
    "pdf_page_tree_cycle": _pdf_page_tree_cycle,
    "pdf_garbage_content": _pdf_garbage_content,
    "pdf_truncated": _pdf_truncated,
    "pdf_10000_pages": _pdf_10000_pages,
    "pdf_encrypted": _pdf_encrypted,
    "pdf_header_only": _pdf_header_only,
    "png_zero": _empty,
    "png_corrupt_idat": _png_corrupt_idat,
    "png_bomb": _png_bomb,
    "gif_bomb": _gif_bomb,
    "tiff_many_pages": _tiff_many_pages,
    "jpeg_truncated": _jpeg_truncated,
    "text_over_limit": _text_over_limit,
    "dictionary_brackets": _dictionary_brackets,
    "dictionary_fifo": _fifo,
    "dictionary_dev_zero_symlink": _dictionary_dev_zero_symlink,
    "dictionary_100mb": _dictionary_100mb,
    "dictionary_csv_1mb_field": _dictionary_csv_1mb_field,
    "dictionary_many_columns": _dictionary_many_columns,
}
"""Recipe name (``recipe:`` in the manifest) -> the function making the case's file(s)."""


# -- running children ----------------------------------------------------------------------


@dataclass
class Run:
    """One finished child: how it ended and what it printed."""

    argv: list[str]
    label: str
    rc: int | None
    stdout: str
    stderr: str
    timed_out: bool
    wall_s: float
    max_rss_mb: float

    def failure(self) -> str | None:
        """Why the run as a whole went wrong (a hang, a traceback, too much memory), or None."""
        if self.timed_out:
            return f"hang: still running after {self.wall_s:.0f} s (killed)"
        if _TRACEBACK in self.stderr:
            return f"crash: a Traceback (exit {self.rc})"
        if self.max_rss_mb * 2**20 > MEMORY_BYTES:
            return f"memory: peak RSS {self.max_rss_mb:.0f} MB"
        return None

    def evidence(self, lines: int = 12) -> str:
        """The exit code and the end of stderr, for failure messages."""
        tail = "\n".join(self.stderr.rstrip().splitlines()[-lines:])
        return f"[{self.label}] exit {self.rc}, {self.wall_s:.1f} s, stderr:\n{tail}"


@dataclass
class Job:
    """A child to run and what to do with its result (which may ask for more children)."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    done: Callable[[Run], Iterable[Job] | None]
    timeout_s: float = TIMEOUT_S
    label: str = ""

    @property
    def address_space(self) -> int:
        """RLIMIT_AS of the child: 2 GB, more for commands that load torch (see above)."""
        torch = len(self.argv) > 3 and self.argv[3] in ("batch", "run", "train")
        return TORCH_ADDRESS_BYTES if torch else MEMORY_BYTES


# Each child runs under this small launcher. A child forked straight from the test process
# would count that process's memory in its ru_maxrss (Linux folds the pre-exec image's peak into
# it; a full test session holds 2 GB of models), so the launcher, small itself, sets the
# address-space limit, starts the command, and writes the command's own peak RSS to a file.
_LAUNCHER = """
import os, resource, signal, subprocess, sys
rss_file, limit = sys.argv[1], int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
child = subprocess.Popen(sys.argv[3:])
_, status, usage = os.wait4(child.pid, 0)
with open(rss_file, "w") as out:
    out.write(str(usage.ru_maxrss))
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def cli(*args: str) -> list[str]:
    """The argv of the real ``aau`` command."""
    return [sys.executable, "-m", "aau.cli.main", *args]


def child_env(place: Place, **extra: str) -> dict[str, str]:
    """The environment of every child: HOME and the term store inside the place."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AAU_")}
    env.update(
        HOME=str(place.home),
        AAU_TERMS_DIR=str(place.terms),
        PYTHONUNBUFFERED="1",  # a killed child still leaves every line it printed
        PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
        OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
    )
    env.update(extra)
    return env


class Runner:
    """Runs jobs, ``jobs`` children at a time, from this one thread; collects every Run."""

    def __init__(self, place: Place, jobs: int = JOBS) -> None:
        self.place, self.jobs = place, jobs
        self.runs: list[Run] = []
        self._count = 0

    def fresh_cwd(self) -> Path:
        self._count += 1
        folder = self.place.runs / f"cwd-{self._count}"
        folder.mkdir(parents=True)
        return folder

    def run(self, jobs: Iterable[Job]) -> None:
        """Run ``jobs`` and every job their results ask for, until none is left."""
        pending = deque(jobs)
        running: dict[int, tuple[Job, subprocess.Popen[bytes], float, Path, Path]] = {}
        while pending or running:
            while pending and len(running) < self.jobs:
                job = pending.popleft()
                self._count += 1
                out = self.place.runs / f"{self._count}.out"
                err = self.place.runs / f"{self._count}.err"
                rss = self.place.runs / f"{self._count}.rss"
                launched = [sys.executable, "-c", _LAUNCHER, str(rss), str(job.address_space)]
                with out.open("wb") as stdout, err.open("wb") as stderr:
                    process = subprocess.Popen(
                        [*launched, *job.argv], cwd=job.cwd, env=job.env,
                        stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                        start_new_session=True,
                    )  # fmt: skip
                running[process.pid] = (job, process, time.monotonic(), out, err)
            finished = False
            for pid, (job, process, started, out, err) in list(running.items()):
                reaped, status, usage = os.wait4(pid, os.WNOHANG)
                timed_out = False
                if reaped == 0:
                    if time.monotonic() - started < job.timeout_s:
                        continue
                    timed_out = True
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pid, signal.SIGKILL)
                    reaped, status, usage = os.wait4(pid, 0)
                process.returncode = os.waitstatus_to_exitcode(status)
                del running[pid]
                finished = True
                run = Run(
                    argv=job.argv,
                    label=job.label or " ".join(job.argv[3:5]),
                    rc=None if timed_out else process.returncode,
                    stdout=out.read_text(encoding="utf-8", errors="replace"),
                    stderr=err.read_text(encoding="utf-8", errors="replace"),
                    timed_out=timed_out,
                    wall_s=time.monotonic() - started,
                    max_rss_mb=_peak_rss_kib(out.with_suffix(".rss"), usage) / 1024,
                )
                self.runs.append(run)
                pending.extend(job.done(run) or ())
            if not finished:
                time.sleep(0.02)


def _peak_rss_kib(rss_file: Path, launcher: Any) -> float:
    """The command's peak RSS (KiB) as its launcher wrote it; the launcher's own if it could not."""
    try:
        return float(rss_file.read_text())
    except (OSError, ValueError):  # killed before writing (a timeout): the launcher's figure
        return float(launcher.ru_maxrss)


# -- verdicts ----------------------------------------------------------------------------------


@dataclass
class Verdict:
    """What became of one case: empty ``problems`` is a pass."""

    case: Case
    problems: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    crashed: bool = False
    hung: bool = False
    code_executed: bool = False
    max_rss_mb: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def fail(self, step: str, problems: Sequence[str], run: Run | None) -> None:
        self.problems += [f"{step}: {p}" for p in problems]
        if run is not None:
            self.evidence.append(run.evidence())

    def describe(self) -> str:
        """The case, what it attacks, each problem and the runs' evidence."""
        lines = [f"{self.case.id} ({self.case.kind}, {self.case.file}): {self.case.attacks}"]
        lines += [f"  expected {self.case.expect}; got:"]
        lines += [f"  - {p}" for p in self.problems]
        lines += ["  " + e.replace("\n", "\n    ") for e in self.evidence]
        return "\n".join(lines)


def _common(run: Run, verdict: Verdict) -> list[str]:
    """Problems every run of a case is judged by (and the case's crash/hang/RSS counts)."""
    verdict.max_rss_mb = max(verdict.max_rss_mb, run.max_rss_mb)
    failure = run.failure()
    if failure is None:
        return []
    if run.timed_out:
        verdict.hung = True
    else:
        verdict.crashed = True
    return [failure]


def _entries(stderr: str) -> list[str]:
    """The ``error: …`` messages of stderr, each with the indented lines continuing it."""
    entries: list[str] = []
    for line in stderr.splitlines():
        if line.startswith("error: ") or not entries:
            entries.append(line)
        elif line.startswith(" "):
            entries[-1] += "\n" + line
    return entries


def _located(stderr: str, path: Path) -> list[str]:
    """The ``error: FILE:[LINE:] ... [Sxxx]`` messages of stderr that name ``path``.

    The check id ends the message (on its first line, or on the line continuing it: PyYAML's
    reader puts a newline inside its own message).
    """
    name = str(path)
    return [
        entry
        for entry in _entries(stderr)
        if entry.startswith(f"error: {name}:")
        and any(_CHECK_ID.search(line) for line in entry.splitlines()[:2])
    ]


def _mentions(run: Run, path: Path) -> bool:
    name = str(path)
    for line in (*run.stdout.splitlines(), *run.stderr.splitlines()):
        if line.startswith((f"ok: {name} ", f"error: {name}:")):
            return True
        if line.startswith((f"refused: {name}:", f"render-error: {name}:", f"rendered: {name}:")):
            return True
    return False


def judge_file_report(case: Case, path: Path, run: Run, *, alone: bool) -> list[str]:
    """``aau validate`` / ``aau termdict check``: the case's file refused (located) or ok."""
    problems = []
    located = _located(run.stderr, path)
    ok = any(line.startswith(f"ok: {path} ") for line in run.stdout.splitlines())
    if case.expect == "refused":
        if alone and run.rc != 2:
            problems.append(f"exit {run.rc}, expected 2")
        if ok:
            problems.append("the file was accepted (ok)")
        elif not located:
            problems.append(
                "no located error naming the file (error: FILE:LINE: ... [Sxxx]/[Txxx])"
            )
        elif case.check and not any(f"[{case.check}]" in line for line in located):
            problems.append(f"refused, but not by check {case.check}: {located[0]}")
    else:
        if alone and run.rc != 0:
            problems.append(f"exit {run.rc}, expected 0")
        if not ok:
            problems.append("no ok line for the file")
        if located:
            problems.append(f"refused: {located[0]}")
    return problems


def judge_render(case: Case, path: Path, run: Run, *, alone: bool) -> list[str]:
    """The render step: an attack is refused at load or stopped at render; benign renders."""
    status = None
    for line in run.stdout.splitlines():
        for word in ("refused", "render-error", "rendered"):
            if line.startswith(f"{word}: {path}:"):
                status = (word, line)
    if alone and run.rc != 0:
        return [f"exit {run.rc}, expected 0"]
    if status is None:
        return ["the render step printed nothing about the file"]
    if case.expect == "refused" and status[0] == "rendered":
        return [f"the template rendered: {status[1]}"]
    if case.expect == "accepted" and status[0] != "rendered":
        return [f"the template did not render: {status[1]}"]
    return []


def judge_run(case: Case, path: Path, run: Run) -> list[str]:
    """``aau run --no-model --json``: a result for the unit, its error no internal one."""
    if case.expect == "refused":
        if run.rc != 2:
            return [f"exit {run.rc}, expected 2"]
        return [] if _located(run.stderr, path) else ["no located error naming the file"]
    if run.rc != 0:
        return [f"exit {run.rc}, expected 0"]
    try:
        result = json.loads(run.stdout.strip().splitlines()[-1])
        unit = result["units"][path.stem]
    except (ValueError, IndexError, KeyError, TypeError):
        return ["no JSON result for the unit on stdout"]
    error = unit.get("error") or {}
    if error.get("code") == "internal_error":
        return [f"the run failed inside: {error.get('message')}"]
    return []


def judge_add(case: Case, path: Path, run: Run, store_before: Any, store_after: Any) -> list[str]:
    """``aau termdict add``: refused (located, the store unchanged) or added."""
    if case.expect == "refused":
        problems = []
        if run.rc != 2:
            problems.append(f"exit {run.rc}, expected 2")
        if not _located(run.stderr, path):
            problems.append("no located error naming the file")
        if store_after != store_before:
            problems.append("the term store changed although the upload was refused")
        return problems
    if run.rc != 0 or "added " not in run.stdout:
        return [f"exit {run.rc}, expected 0 with 'added …'"]
    return []


def expected_id(raw: bytes) -> Any:
    """The id a line's output must echo, when the line plainly has one (else ``...``)."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except Exception:  # not JSON, too deep, an integer too long: no plain id
        return ...
    if isinstance(record, dict):
        value = record.get("id")
        if isinstance(value, str | int) and not isinstance(value, bool):
            return value
    return ...


def judge_line(expect: str, code: str | None, raw: bytes, output: dict[str, Any]) -> list[str]:
    """One batch line's output: every unit coded (``coded``) or analysed (``accepted``)."""
    problems = []
    want = expected_id(raw)
    if want is not ... and output.get("id") != want:
        problems.append(f"output id {output.get('id')!r}, expected {want!r} (out of order?)")
    units = output.get("units")
    if not isinstance(units, dict) or sorted(units) != sorted(BATCH_UNIT_NAMES):
        return [*problems, f"units {sorted(units) if isinstance(units, dict) else units!r}"]
    for name, result in units.items():
        error = result.get("error") or {}
        got = error.get("code")
        if expect == "coded":
            if not got:
                problems.append(f"{name}: no error code (path {result.get('path')!r})")
            elif code is not None and got != code:
                problems.append(f"{name}: code {got!r}, expected {code!r}: {error.get('message')}")
        else:
            if not result.get("trace") or got == "internal_error":
                problems.append(f"{name}: not analysed: {got!r} {error.get('message')!r}")
    return problems


# -- the whole corpus ------------------------------------------------------------------------


@dataclass
class CorpusReport:
    """Every case's verdict and the counts the benchmark prints."""

    verdicts: dict[str, Verdict]
    good_line_problems: list[str]
    lost_lines: int
    max_rss_mb: float
    runs: list[Run]
    wall_s: float

    def summary(self) -> dict[str, Any]:
        """The benchmark's JSON line."""
        verdicts = self.verdicts.values()
        return {
            "cases": len(self.verdicts),
            "failed": sum(not v.ok for v in verdicts),
            "crashes": sum(v.crashed for v in verdicts),
            "hangs": sum(v.hung for v in verdicts),
            "lost_lines": self.lost_lines,
            "code_executed": sum(v.code_executed for v in verdicts),
            "max_rss_mb": round(self.max_rss_mb, 1),
        }

    def by_kind(self) -> dict[str, dict[str, float]]:
        """Per kind: cases, passed, failed, crashes, hangs, code executed, peak RSS (MB)."""
        table: dict[str, dict[str, float]] = {}
        for verdict in self.verdicts.values():
            row = table.setdefault(
                verdict.case.kind,
                dict.fromkeys(
                    ("cases", "passed", "failed", "crashes", "hangs", "code_executed",
                     "max_rss_mb"), 0,
                ),
            )  # fmt: skip
            row["cases"] += 1
            row["passed"] += verdict.ok
            row["failed"] += not verdict.ok
            row["crashes"] += verdict.crashed
            row["hangs"] += verdict.hung
            row["code_executed"] += verdict.code_executed
            row["max_rss_mb"] = max(row["max_rss_mb"], round(verdict.max_rss_mb, 1))
        return table


class _FileGroup:
    """Cases one command reports per file (validate, termdict check, render): run together.

    A file the shared run judged well is done. A failing one runs again alone, and that run
    decides. When the shared run died before some files (a crash, a hang), the first of them
    runs alone (it is the likely cause) and the rest together again.
    """

    def __init__(
        self,
        step: str,
        argv: Callable[[list[Path]], list[str]],
        judge: Callable[..., list[str]],
        items: list[tuple[Case, Path]],
        verdicts: dict[str, Verdict],
        runner: Runner,
        env: dict[str, str],
    ) -> None:
        self.step, self.argv, self.judge = step, argv, judge
        self.items, self.verdicts, self.runner, self.env = items, verdicts, runner, env

    def jobs(self) -> list[Job]:
        return [self._job(self.items)] if self.items else []

    def _job(self, items: list[tuple[Case, Path]]) -> Job:
        alone = len(items) == 1

        def done(run: Run) -> list[Job]:
            if alone:
                case, path = items[0]
                verdict = self.verdicts[case.id]
                problems = _common(run, verdict) + self.judge(case, path, run, alone=True)
                if problems:
                    verdict.fail(self.step, problems, run)
                return []
            failing, unreached = [], []
            for case, path in items:
                self.verdicts[case.id].max_rss_mb = max(
                    self.verdicts[case.id].max_rss_mb, run.max_rss_mb
                )
                if not _mentions(run, path):
                    unreached.append((case, path))
                elif self.judge(case, path, run, alone=False):
                    failing.append((case, path))
            again = [self._job([item]) for item in failing]
            if len(unreached) > 1 and (run.failure() or run.rc not in (0, 2)):
                again += [self._job(unreached[:1]), self._job(unreached[1:])]
            else:
                again += [self._job([item]) for item in unreached]
            return again

        paths = [path for _, path in items]
        label = f"{self.step} {paths[0].name}" if alone else f"{self.step} of {len(paths)} files"
        return Job(self.argv(paths), self.runner.fresh_cwd(), self.env, done, label=label)


def _snapshot(folder: Path) -> list[tuple[str, bytes]]:
    return sorted(
        (str(p.relative_to(folder)), p.read_bytes()) for p in folder.rglob("*") if p.is_file()
    )


def run_corpus(cases: Sequence[Case], root: Path, *, jobs: int = JOBS) -> CorpusReport:
    """Materialize and run every case under ``root``; judge each."""
    started = time.monotonic()
    place = Place(root)
    runner = Runner(place, jobs)
    env = child_env(place)
    verdicts = {case.id: Verdict(case) for case in cases}
    paths = {c.id: materialize(c, place) for c in cases if c.kind in ("unit", "dictionary")}
    # Cases whose files are likely to end a shared run (special files, huge ones) go last.
    order = sorted(cases, key=lambda c: c.recipe is not None or Path(c.file).is_absolute())

    def items(kind: str, step: str) -> list[tuple[Case, Path]]:
        return [(c, paths[c.id]) for c in order if c.kind == kind and step in c.steps]

    all_jobs: list[Job] = []
    lines_state: dict[str, Any] = {}
    batch_cases = [c for c in cases if c.kind in ("batch", "document")]
    all_jobs += _batch_jobs(batch_cases, place, runner, env, verdicts, lines_state)
    all_jobs += _FileGroup(
        "validate", lambda ps: cli("validate", *map(str, ps)), judge_file_report,
        items("unit", "validate"), verdicts, runner, env,
    ).jobs()  # fmt: skip
    all_jobs += _FileGroup(
        "render", lambda ps: [sys.executable, "-c", RENDER_SCRIPT, *map(str, ps)], judge_render,
        items("unit", "render"), verdicts, runner, env,
    ).jobs()  # fmt: skip
    all_jobs += _FileGroup(
        "termdict check", lambda ps: cli("termdict", "check", *map(str, ps)), judge_file_report,
        items("dictionary", "check"), verdicts, runner, env,
    ).jobs()  # fmt: skip
    for case, path in items("unit", "run"):
        all_jobs.append(_single(
            "run", cli("run", str(path), "--text", case.run_text or "", "--no-model", "--json"),
            case, path, verdicts, runner, env, judge_run,
        ))  # fmt: skip
    for case, path in items("unit", "train"):
        all_jobs.append(_single(
            "train", cli("train", str(path)), case, path, verdicts, runner, env,
            lambda c, p, r: judge_file_report(c, p, r, alone=True),
        ))  # fmt: skip
    all_jobs += _add_jobs(items("dictionary", "add"), place, runner, env, verdicts)

    runner.run(all_jobs)

    for case in cases:  # what no single run can see: markers, victims
        verdict = verdicts[case.id]
        if place.marker(case).exists():
            verdict.code_executed = True
            verdict.problems.append(f"code executed: {place.marker(case)} was created")
        for check in place.checks.get(case.id, []):
            problem = check()
            if problem:
                verdict.problems.append(problem)
    stray = sorted(p.name for p in place.markers.iterdir() if p.name not in verdicts)
    if stray:  # a marker of no case: count it against the first case (cannot happen by design)
        first = verdicts[cases[0].id]
        first.code_executed = True
        first.problems.append(f"code executed: stray markers {stray}")
    return CorpusReport(
        verdicts=verdicts,
        good_line_problems=lines_state.get("good", []),
        lost_lines=lines_state.get("lost", 0),
        max_rss_mb=max((run.max_rss_mb for run in runner.runs), default=0.0),
        runs=runner.runs,
        wall_s=time.monotonic() - started,
    )


def _single(
    step: str, argv: list[str], case: Case, path: Path, verdicts: dict[str, Verdict],
    runner: Runner, env: dict[str, str], judge: Callable[[Case, Path, Run], list[str]],
) -> Job:  # fmt: skip
    def done(run: Run) -> None:
        verdict = verdicts[case.id]
        problems = _common(run, verdict) + judge(case, path, run)
        if problems:
            verdict.fail(step, problems, run)

    return Job(argv, runner.fresh_cwd(), env, done, label=f"{step} {path.name}")


def _add_jobs(
    items: list[tuple[Case, Path]], place: Place, runner: Runner, env: dict[str, str],
    verdicts: dict[str, Verdict],
) -> list[Job]:  # fmt: skip
    """``aau termdict add --tenant t FILE`` per case, each in a copy of a store holding ``t``."""
    if not items:
        return []
    template = place.root / "stores" / "template"

    def tenant_made(run: Run) -> list[Job]:
        jobs = []
        for number, (case, path) in enumerate(items):
            store = place.root / "stores" / f"{number}-{case.id}"
            if run.rc == 0:
                shutil.copytree(template, store)
            else:  # nothing to upload to: the case says so with the setup's own output
                verdicts[case.id].fail("termdict add", ["setup: tenant add failed"], run)
                continue
            before = _snapshot(store)

            def done(add: Run, case: Case = case, path: Path = path, store: Path = store,
                     before: Any = before) -> None:  # fmt: skip
                verdict = verdicts[case.id]
                problems = _common(add, verdict)
                problems += judge_add(case, path, add, before, _snapshot(store))
                if problems:
                    verdict.fail("termdict add", problems, add)

            add_env = {**env, "AAU_TERMS_DIR": str(store)}
            argv = cli("termdict", "add", "--tenant", "t", str(path))
            label = f"termdict add {path.name}"
            jobs.append(Job(argv, runner.fresh_cwd(), add_env, done, label=label))
        return jobs

    setup_env = {**env, "AAU_TERMS_DIR": str(template)}
    return [Job(cli("termdict", "tenant", "add", "t"), runner.fresh_cwd(), setup_env, tenant_made)]


# -- batches -------------------------------------------------------------------------------


def interleave(hostile: Sequence[bytes], good_every: int = 1) -> list[tuple[str | None, bytes]]:
    """Good lines around and between the hostile ones: ``(index or None, raw)`` in order."""
    out: list[tuple[str | None, bytes]] = []
    number = 0
    for index, raw in enumerate(hostile):
        for _ in range(good_every):
            out.append((None, good_line(number)))
            number += 1
        out.append((str(index), raw))
    out.append((None, good_line(number)))
    return out


def write_batch(path: Path, lines: Sequence[bytes]) -> None:
    """The input file: the lines joined by newlines (a final newline ends it)."""
    path.write_bytes(b"\n".join(lines) + b"\n")


def read_output(path: Path) -> list[dict[str, Any] | None]:
    """The output lines, each parsed (None for a line that is not a JSON object)."""
    if not path.is_file():
        return []
    parsed: list[dict[str, Any] | None] = []
    for raw in path.read_bytes().splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        parsed.append(value if isinstance(value, dict) else None)
    return parsed


def batch_argv(source: Path, target: Path) -> list[str]:
    """``aau batch`` of the batch units over ``source``, with no model."""
    units = [str(u) for u in BATCH_UNITS]
    return cli("batch", *units, "--input", str(source), "--output", str(target), "--no-model")


def _batch_jobs(
    cases: Sequence[Case], place: Place, runner: Runner, env: dict[str, str],
    verdicts: dict[str, Verdict], state: dict[str, Any],
) -> list[Job]:  # fmt: skip
    """One batch of every hostile line and document, between good lines.

    Output is written in input order, so each line with an output line is judged by it. When a
    batch dies (a crash, a hang, a bad exit), a line is only blamed by a batch of its own: the
    first hostile line without output runs alone and the ones after it as a new batch; when
    every line was written but the batch still ended badly, its hostile lines are halved until
    the one that does it runs alone.
    """
    if not cases:
        return []
    raws = [batch_line(case, place) for case in cases]
    state["good"], state["lost"] = [], 0
    attempts = iter(range(10**6))

    def job(indices: list[int]) -> Job:
        attempt = next(attempts)
        part = interleave([raws[i] for i in indices])
        where = [None if i is None else indices[int(i)] for i, _ in part]
        source = place.batch / f"in-{attempt}.jsonl"
        target = place.batch / f"out-{attempt}.jsonl"
        write_batch(source, [raw for _, raw in part])
        alone = len(indices) == 1

        def done(run: Run) -> list[Job]:
            outputs = read_output(target)
            if attempt == 0:
                state["lost"] = max(0, len(part) - len(outputs))
            failure = run.failure() or (f"exit {run.rc}, expected 0" if run.rc != 0 else None)
            if len(outputs) > len(part):
                failure = f"{len(outputs)} output lines for {len(part)} input lines"
            for position, ((_, raw), index) in enumerate(zip(part, where, strict=True)):
                output = outputs[position] if position < len(outputs) else None
                if index is None:
                    if position < len(outputs):
                        problems = judge_line("accepted", None, raw, output or {})
                        state["good"] += [f"good line {position + 1}: {p}" for p in problems]
                    elif not failure:
                        state["good"].append(f"good line {position + 1}: no output line")
                    continue
                case = cases[index]
                verdict = verdicts[case.id]
                verdict.max_rss_mb = max(verdict.max_rss_mb, run.max_rss_mb)
                if position < len(outputs):
                    problems = judge_line(case.expect, case.code, raw, output or {})
                elif not failure:
                    problems = ["no output line, though the batch exited 0"]
                else:
                    continue  # decided by a batch of its own below
                if problems:
                    verdict.fail("batch", problems, run)
            if not failure:
                return []
            if alone:
                verdict = verdicts[cases[indices[0]].id]
                _common(run, verdict)
                verdict.fail("batch", [f"the batch of this line alone: {failure}"], run)
                return []
            unwritten = [index for index in where[len(outputs) :] if index is not None]
            if unwritten:
                return [job(unwritten[:1])] + ([job(unwritten[1:])] if unwritten[1:] else [])
            half = len(indices) // 2
            return [job(indices[:half]), job(indices[half:])]

        label = f"batch {attempt} of {len(indices)} hostile lines"
        return Job(batch_argv(source, target), runner.fresh_cwd(), env, done, label=label)

    return [job(list(range(len(cases))))]
