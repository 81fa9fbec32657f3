"""Convert Duckling's hand-written money corpora into ``duckling_prices.dev.jsonl``.

Duckling (Facebook, BSD licence, <https://github.com/facebook/duckling>) keeps, per language, a
corpus of the texts its parser must read and the value each one means
(``Duckling/AmountOfMoney/<LANG>/Corpus.hs``): "7块", "이만칠천원", "10 bin lira", "$20 en 43c",
"US$3 and fourteen". Nobody in this project wrote them. They are a dev resource for how the
price unit and ``aau.values`` read money in the languages the Recognizers-Text dev part lacks
(it holds only Italian, Japanese, Portuguese and Swedish prices); they never enter the test part.

The Haskell modules are read as text, never compiled or run. Kept:

``examples (simple <CODE> <amount>) [texts]`` where ``<CODE>`` is an ISO 4217 code babel knows:
each text is a ``single`` case, the amount as written in the module ("1e4" is 10000). (The
corpora's few negative examples, "grand" and "exactly dollars", hold no digit and are not kept.)

Left out, counted by reason: codes that are not ISO 4217 (``PTS``), Duckling's ambiguous
currencies (``Dollar``, ``Pound``, ``Cent``,
``Dinar``, ``Rial``, ``Riyal``, ``Dirham``, ``Unnamed``: the text alone does not say which, by
the same rule as ``convert.py``), intervals (``between``, ``under``, ``above``: no one amount),
the latent corpora (bare numbers), and the regional English corpora (``EN/AU``, ``EN/CA``…),
whose labels name the region's currency for a bare "$". One case per (language, text); a text
listed under two values is left out, and so is a text the external benchmark's test part holds
(compared after NFKC, case-folding and whitespace collapse; none does at the commit below). At most ``CAP`` texts per language, those with the lowest
sha256 of their id (the Norwegian corpus alone lists 392, each currency in a dozen spellings):
one language must not outweigh the others among the calibrator's runs.

Each line is a case in the format of ``cases.dev.jsonl`` (README.md):

    {"id": "duckling/AmountOfMoney/ZH/0007", "unit": "extract_price", "language": "Chinese",
     "source": "Duckling/AmountOfMoney/ZH/Corpus.hs", "part": "dev", "kind": "single",
     "text": "3.14人民币", "expected": {"amount": 3.14, "currency": "CNY"}}

Rebuild (byte-identical for the same commit):

    python benchmarks/external/duckling_cases.py --git-dir <duckling .git> \\
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
import unicodedata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CAP = 60
CORPORA = re.compile(r"^Duckling/AmountOfMoney/([A-Z]{2})/Corpus\.hs$")  # no regional EN/XX
LANGUAGES = {
    "AR": "Arabic", "BG": "Bulgarian", "CA": "Catalan", "EN": "English", "ES": "Spanish",
    "FR": "French", "GA": "Irish", "HE": "Hebrew", "HR": "Croatian", "ID": "Indonesian",
    "IT": "Italian", "KA": "Georgian", "KO": "Korean", "MN": "Mongolian", "NB": "Norwegian",
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


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@functools.cache
def _test_texts() -> frozenset[str]:
    lines = (HERE / "cases.test.jsonl").read_text(encoding="utf-8").splitlines()
    return frozenset(_folded(json.loads(line)["text"]) for line in lines if line)


@functools.cache
def _iso_codes() -> set[str]:
    from babel import Locale

    return set(Locale("en").currencies)


def cases(path: str, module: str) -> tuple[list[dict[str, Any]], collections.Counter[str]]:
    """The kept cases of one corpus module's text, and the left-out texts counted by reason."""
    code = CORPORA.match(path)
    assert code is not None
    language = LANGUAGES[code.group(1)]
    skipped: collections.Counter[str] = collections.Counter()
    found: dict[str, list[dict[str, Any]]] = {}
    module = re.sub(r"latentCorpus\s*=.*?(?=\n\S)", "", module, flags=re.S)  # bare numbers
    for kind, currency, amount, listed in _EXAMPLES.findall(module):
        texts = haskell_strings(listed)
        if kind != "simple":
            skipped[f"an interval ({kind})"] += len(texts)
            continue
        if currency not in _iso_codes():
            why = "no ISO 4217 code" if currency.isupper() else "an ambiguous currency"
            skipped[f"{why} ({currency})"] += len(texts)
            continue
        value = float(amount.strip("() ").replace(" ", ""))
        for text in texts:
            found.setdefault(text, []).append({"amount": value, "currency": currency})
    kept: list[dict[str, Any]] = []
    for text, labels in found.items():
        if any(label != labels[0] for label in labels):
            skipped["a text under two labels"] += 1
            continue
        if _folded(text) in _test_texts():
            skipped["a text of the test part"] += 1
            continue
        expected = labels[0]
        kept.append({
            "id": f"duckling/AmountOfMoney/{code.group(1)}/{len(kept):04d}",
            "unit": "extract_price", "language": language, "source": path, "part": "dev",
            "kind": "single", "text": text, "expected": expected,
        })  # fmt: skip
    if len(kept) > CAP:
        skipped["over the cap of its language"] += len(kept) - CAP
        chosen = sorted(kept, key=lambda c: hashlib.sha256(c["id"].encode()).hexdigest())[:CAP]
        kept = [c for c in kept if c in chosen]  # in the corpus's order
    return kept, skipped


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                          capture_output=True, text=True).stdout  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", type=Path, required=True, help="Duckling's git directory")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", type=Path, default=HERE / "duckling_prices.dev.jsonl")
    args = parser.parse_args(argv)
    paths = [p for p in _git(args.git_dir, "ls-tree", "-r", "--name-only", args.commit)
             .splitlines() if CORPORA.match(p)]  # fmt: skip
    kept: list[dict[str, Any]] = []
    skipped: collections.Counter[str] = collections.Counter()
    for path in sorted(paths):
        more, left = cases(path, _git(args.git_dir, "show", f"{args.commit}:{path}"))
        kept += more
        skipped += left
    args.out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in kept),
                        encoding="utf-8")  # fmt: skip
    per = collections.Counter((c["language"], c["kind"]) for c in kept)
    print(f"{len(kept)} cases from {len(paths)} corpora -> {args.out}", file=sys.stderr)
    for (language, kind), count in sorted(per.items()):
        print(f"  {language} {kind}: {count}", file=sys.stderr)
    for reason, count in sorted(skipped.items()):
        print(f"  left out, {reason}: {count}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
