"""Convert Duckling's hand-written money and measure corpora into dev cases.

Duckling (Facebook, BSD licence, <https://github.com/facebook/duckling>) keeps, per language and
dimension, a corpus of the texts its parser must read and the value each one means
(``Duckling/<Dimension>/<LANG>/Corpus.hs``): "7块", "이만칠천원", "10 bin lira", "$20 en 43c",
"3 kilometers", "37 ° celsius", "tres litros". Nobody in this project wrote them. They are a
dev resource for how the units and ``aau.values`` read money and quantities in languages the
Recognizers-Text dev part lacks (it holds only Italian, Japanese, Portuguese and Swedish
prices); they never enter the test part.

- ``--kind money`` (``duckling_prices.dev.jsonl``, unit ``extract_price``): the
  ``AmountOfMoney`` corpora; ``examples (simple <CODE> <amount>)`` where ``<CODE>`` is an ISO 4217
  code babel knows. Left out: codes that are not ISO 4217 (``PTS``), Duckling's ambiguous
  currencies (``Dollar``, ``Pound``, ``Cent``, ``Dinar``, ``Rial``, ``Riyal``, ``Dirham``,
  ``Unnamed``: the text alone does not say which, by the same rule as ``convert.py``), and the
  regional English corpora (``EN/AU``, ``EN/CA``…), whose labels name the region's currency for a
  bare "$".
- ``--kind quantity`` (``duckling_quantities.dev.jsonl``, unit ``extract_quantity``): the
  ``Distance``, ``Volume`` and ``Temperature`` corpora; ``examples (simple <Unit> <value>)``
  with the unit's usual symbol (``UNIT_SYMBOLS``, as ``convert.py`` writes them). Left out: the
  ambiguous ``M`` (metre or mile) and plain ``Degree`` (an angle or a temperature), and texts
  with two numbers in digits (composite values, "7 feet and 10 inches" labelled 94 inches: not
  the value as written). Duckling's ``Quantity`` corpora are not used: they convert what they
  read ("0.002 kg" is labelled 2 grams).

Each text is a ``single`` case, the value as written in the module ("1e4" is 10000). Left out
everywhere, counted by reason: intervals (``between``, ``under``, ``above``: no one value), the
latent corpora (bare numbers), Haskell comments (examples the corpus turned off), a text listed
under two values, and a text the external benchmark's test part holds (compared after NFKC,
case-folding and whitespace collapse; none does at the commit below). At most ``CAP`` texts
per language and unit, those with the lowest sha256 of their id (the Norwegian money corpus
alone lists 392, each currency in a dozen spellings): one language must not outweigh the
others among the calibrator's runs. The corpora's few negative examples ("grand", "exactly
dollars") hold no digit and are not kept.

Each line is a case in the format of ``cases.dev.jsonl`` (README.md):

    {"id": "duckling/AmountOfMoney/ZH/0003", "unit": "extract_price", "language": "Chinese",
     "source": "Duckling/AmountOfMoney/ZH/Corpus.hs", "part": "dev", "kind": "single",
     "text": "3.14人民币", "expected": {"amount": 3.14, "currency": "CNY"}}

The Haskell modules are read as text, never compiled or run. Rebuild (byte-identical for the
same commit):

    python benchmarks/external/duckling_cases.py --kind money --git-dir <duckling .git> \\
        --commit 2c226585af5b9f4985d9c7151d7191603bb2add7
    python benchmarks/external/duckling_cases.py --kind quantity --git-dir <duckling .git> \\
        --commit 2c226585af5b9f4985d9c7151d7191603bb2add7
"""

from __future__ import annotations

import argparse
import collections
import functools
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # convert.py, beside this file, says when two texts are one

from convert import normalized  # noqa: E402

CAP = 60
KINDS = {
    "money": ("extract_price", ("AmountOfMoney",), "duckling_prices.dev.jsonl"),
    "quantity": ("extract_quantity", ("Distance", "Volume", "Temperature"),
                 "duckling_quantities.dev.jsonl"),
}  # fmt: skip
CORPORA = re.compile(r"^Duckling/(\w+)/([A-Z]{2})/Corpus\.hs$")  # no regional EN/XX
UNIT_SYMBOLS = {
    "Kilometre": "km", "Metre": "m", "Centimetre": "cm", "Millimetre": "mm", "Mile": "mi",
    "Inch": "in", "Foot": "ft", "Yard": "yd", "Litre": "l", "Millilitre": "ml",
    "Centilitre": "cl", "Hectolitre": "hl", "Gallon": "gal", "Celsius": "°C",
    "Fahrenheit": "°F",
}  # fmt: skip
_DIGIT_RUN = re.compile(r"\d+(?:[.,]\d+)*")
LANGUAGES = {
    "AR": "Arabic", "BG": "Bulgarian", "CA": "Catalan", "CS": "Czech", "DE": "German",
    "EN": "English", "ES": "Spanish", "FR": "French", "GA": "Irish", "HE": "Hebrew",
    "HI": "Hindi", "HR": "Croatian", "ID": "Indonesian", "IT": "Italian", "JA": "Japanese",
    "KA": "Georgian", "KM": "Khmer", "KO": "Korean", "MN": "Mongolian", "NB": "Norwegian",
    "NL": "Dutch", "PT": "Portuguese", "RO": "Romanian", "RU": "Russian", "SV": "Swedish",
    "TR": "Turkish", "VI": "Vietnamese", "ZH": "Chinese",
}  # fmt: skip
_STRING = r'"(?:[^"\\]|\\.)*"'
_EXAMPLES = re.compile(
    r"examples\s*\(\s*(\w+)\s+(\w+)\s+(\(?[^()\[\]]*\)?)\s*\)\s*\[((?:\s*" + _STRING
    + r"\s*,?)*)\s*\]"
)  # fmt: skip
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]+|o[0-7]+|[0-9]+|&|.)", re.S)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "&": ""}


def haskell_strings(listed: str) -> list[str]:
    """The string literals of a Haskell list's body, their escapes decoded."""
    return [_ESCAPE.sub(_unescape, m.group(0)[1:-1]) for m in re.finditer(_STRING, listed)]


def _unescape(match: re.Match[str]) -> str:
    body = match.group(1)
    if body[0] == "x":
        return chr(int(body[1:], 16))
    if body[0] == "o":
        return chr(int(body[1:], 8))
    if body.isdigit():
        return chr(int(body))
    if body in _SIMPLE:
        return _SIMPLE[body]
    raise ValueError(f"an escape this converter does not read: \\{body}")


@functools.cache
def _test_texts() -> frozenset[str]:
    lines = (HERE / "cases.test.jsonl").read_text(encoding="utf-8").splitlines()
    return frozenset(normalized(json.loads(line)["text"]) for line in lines if line)


@functools.cache
def _iso_codes() -> set[str]:
    from babel import Locale

    return set(Locale("en").currencies)


def cases(path: str, module: str) -> tuple[list[dict[str, Any]], collections.Counter[str]]:
    """The kept cases of one corpus module's text, and the left-out texts counted by reason."""
    match = CORPORA.match(path)
    assert match is not None
    dimension, code = match.groups()
    unit = next(u for u, dimensions, _ in KINDS.values() if dimension in dimensions)
    language = LANGUAGES[code]
    skipped: collections.Counter[str] = collections.Counter()
    found: dict[str, list[dict[str, Any]]] = {}
    module = re.sub(r"latentCorpus\s*=.*?(?=\n\S)", "", module, flags=re.S)  # bare numbers
    module = re.sub(r"--[^\n]*", "", module)  # comments: examples turned off, notes
    for kind, name, amount, listed in _EXAMPLES.findall(module):
        texts = haskell_strings(listed)
        if kind != "simple":
            skipped[f"an interval ({kind})"] += len(texts)
            continue
        value = float(amount.strip("() ").replace(" ", ""))
        label, why = _label(unit, name, value)
        if label is None:
            skipped[why] += len(texts)
            continue
        for text in texts:
            if unit == "extract_quantity" and len(_DIGIT_RUN.findall(text)) > 1:
                skipped["two numbers (a composite value)"] += 1
                continue
            found.setdefault(text, []).append(label)
    kept: list[dict[str, Any]] = []
    for text, labels in found.items():
        if any(label != labels[0] for label in labels):
            skipped["a text under two labels"] += 1
            continue
        if normalized(text) in _test_texts():
            skipped["a text of the test part"] += 1
            continue
        kept.append({
            "id": f"duckling/{dimension}/{code}/{len(kept):04d}",
            "unit": unit, "language": language, "source": path, "part": "dev",
            "kind": "single", "text": text, "expected": labels[0],
        })  # fmt: skip
    return kept, skipped


def _label(unit: str, name: str, value: float) -> tuple[dict[str, Any] | None, str]:
    """The unit's output for Duckling's ``simple <name> <value>``, or None and why not."""
    if unit == "extract_price":
        if name in _iso_codes():
            return {"amount": value, "currency": name}, ""
        why = "no ISO 4217 code" if name.isupper() else "an ambiguous currency"
        return None, f"{why} ({name})"
    symbol = UNIT_SYMBOLS.get(name)
    if symbol is None:
        return None, f"an ambiguous unit ({name})"
    return {"value": value, "unit": symbol}, ""


def capped(kept: list[dict[str, Any]], skipped: collections.Counter[str]) -> list[dict[str, Any]]:
    """At most ``CAP`` cases per (unit, language), the lowest sha256 of their id, in order."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = collections.defaultdict(list)
    for case in kept:
        groups[(case["unit"], case["language"])].append(case)
    chosen: set[str] = set()
    for group in groups.values():
        ranked = sorted(group, key=lambda c: hashlib.sha256(c["id"].encode()).hexdigest())
        chosen.update(c["id"] for c in ranked[:CAP])
        if len(group) > CAP:
            skipped["over the cap of its language"] += len(group) - CAP
    return [c for c in kept if c["id"] in chosen]


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                          capture_output=True, text=True).stdout  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=sorted(KINDS), required=True)
    parser.add_argument("--git-dir", type=Path, required=True, help="Duckling's git directory")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    _, dimensions, name = KINDS[args.kind]
    out = args.out or HERE / name
    paths = [p for p in _git(args.git_dir, "ls-tree", "-r", "--name-only", args.commit)
             .splitlines()
             if (m := CORPORA.match(p)) and m.group(1) in dimensions]  # fmt: skip
    kept: list[dict[str, Any]] = []
    skipped: collections.Counter[str] = collections.Counter()
    for path in sorted(paths):
        more, left = cases(path, _git(args.git_dir, "show", f"{args.commit}:{path}"))
        kept += more
        skipped += left
    kept = capped(kept, skipped)
    out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in kept),
                   encoding="utf-8")  # fmt: skip
    per = collections.Counter(c["language"] for c in kept)
    print(f"{len(kept)} cases from {len(paths)} corpora -> {out}", file=sys.stderr)
    for language, count in sorted(per.items()):
        print(f"  {language}: {count}", file=sys.stderr)
    for reason, count in sorted(skipped.items()):
        print(f"  left out, {reason}: {count}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
