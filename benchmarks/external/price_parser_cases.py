"""Convert the labelled price strings of ``price-parser``'s test suite into ``prices.dev.jsonl``.

``price-parser`` (Scrapinghub, BSD-3-Clause) keeps about a thousand price strings taken from a
random sample of shop pages in many countries, each with the amount and the currency as written
that a person read from it (``tests/test_price_parsing.py`` of its source distribution). They
are a second dev resource for how ``aau.values`` reads money, beside Recognizers-Text's spec
files: bare prices as shops write them ("1.198,- Kr", "RM50", "$15.95/mo", "£94.50 GBP").

The test module is read with ``ast``, never imported or run. Kept: the strings whose currency as
written stands in the string itself (the suite also passes a hint taken from another element of
the page, which a text alone does not have), and the strings labelled with no price. Left out:
the examples given a decimal-separator hint, and strings without a digit (a
list of currencies "to be added" labels "CND" alone as 1).

Each line is a case in the format of ``cases.dev.jsonl`` (README.md), so the calibrator's runs
can take it (``runs: external`` in ``calibration/config.yaml``), with the label as written:

    {"id": "price-parser/PRICE_PARSING_EXAMPLES/0001", "unit": "extract_price",
     "language": "various",
     "source": "price-parser/tests/test_price_parsing.py#PRICE_PARSING_EXAMPLES", "part": "dev", "text": "45,00 zł", "amount": 45.0, "currency_as_written": "zł",
     "kind": "single", "expected": {"amount": 45.0, "currency": "PLN"}}

The ISO code is the one price-parser's own currency table (``price_parser._currencies``, the
installed package, which must be the same version) gives the currency as written, among the
codes babel knows. A marker the table gives several codes ("$", "£", "kr") or none (its "р."
is Transnistria's "PRB", no ISO code) leaves the case ``unlabelled`` (``expected`` null: its
amount still counts in ``benchmarks/values.py``). A string with no price is ``none``. The
source names the suite's list, so the calibrator holds lists out whole.
Rebuild (byte-identical for the same version):

    pip download price-parser==0.5.1 --no-binary :all: --no-deps -d /tmp/pp
    python benchmarks/external/price_parser_cases.py --sdist /tmp/pp/price_parser-0.5.1.tar.gz
"""

from __future__ import annotations

import argparse
import ast
import collections
import functools
import importlib.metadata
import json
import sys
import tarfile
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SUITE = "tests/test_price_parsing.py"
LEFT_OUT_LISTS = {"PRICE_PARSING_DECIMAL_SEPARATOR_EXAMPLES"}  # they need a separator hint


def _value(node: ast.expr) -> Any:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Decimal":
        return float(Decimal(ast.literal_eval(node.args[0])))
    return ast.literal_eval(node)


def cases(source: str) -> tuple[list[dict[str, Any]], collections.Counter[str]]:
    """The kept cases of the test module ``source``, and the left-out ones counted by reason."""
    kept: list[dict[str, Any]] = []
    skipped: collections.Counter[str] = collections.Counter()
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.List)):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name) or not target.id.startswith("PRICE_PARSING_"):
            continue
        if target.id in LEFT_OUT_LISTS:
            skipped["decimal-separator hint"] += len(node.value.elts)
            continue
        for index, call in enumerate(node.value.elts):
            if not isinstance(call, ast.Call) or len(call.args) != 5 or call.keywords:
                skipped["not a plain example"] += 1
                continue
            _hint, text, currency, _amount_text, amount = (_value(a) for a in call.args)
            if not isinstance(text, str) or not text.strip():
                skipped["no text"] += 1
                continue
            if not any(c.isdigit() for c in text):
                skipped["no digit in the text"] += 1  # "CND" labelled 1: a currency alone
                continue
            if amount is not None and (currency is None or currency not in text):
                skipped["currency only in the hint, or none"] += 1
                continue
            kept.append(_case(target.id, index, text, amount, currency))
    return kept, skipped


@functools.cache
def _codes() -> dict[str, set[str]]:
    """Each currency symbol, native symbol and code of price-parser's own table, to its codes."""
    from price_parser._currencies import CURRENCIES  # the table the suite's labels go with

    table: dict[str, set[str]] = collections.defaultdict(set)
    for code, info in CURRENCIES.items():
        for symbol in (code, info["s"], info["sn"], *info.get("sn2", [])):
            table[symbol].add(code)
    return table


@functools.cache
def _iso_codes() -> set[str]:
    from babel import Locale

    return set(Locale("en").currencies)


def _case(name: str, index: int, text: str, amount: Any, currency: str | None) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": f"price-parser/{name}/{index:04d}", "unit": "extract_price", "language": "various",
        "source": f"price-parser/{SUITE}#{name}", "part": "dev", "text": text,
        "amount": None if amount is None else float(amount),
        "currency_as_written": currency if amount is not None else None,
    }  # fmt: skip
    if amount is None:
        return case | {"kind": "none", "expected": {"amount": None, "currency": None}}
    table = _codes()
    codes = table.get(currency) or table.get(currency.rstrip(".")) or set()
    codes &= _iso_codes()  # "р." is Transnistria's PRB there, a code ISO 4217 does not have
    if len(codes) != 1:  # "$", "£", "kr": the string alone does not say which
        return case | {"kind": "unlabelled", "expected": None}
    return case | {"kind": "single", "expected": {"amount": float(amount), "currency": min(codes)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", type=Path, required=True, help="price-parser's .tar.gz")
    parser.add_argument("--out", type=Path, default=HERE / "prices.dev.jsonl")
    args = parser.parse_args(argv)
    installed = importlib.metadata.version("price-parser")
    if f"price_parser-{installed}." not in args.sdist.name:
        raise SystemExit(f"the installed price-parser is {installed}; its table must match the "
                         f"suite of {args.sdist.name}")  # fmt: skip
    with tarfile.open(args.sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/" + SUITE))
        handle = archive.extractfile(member)
        if handle is None:
            raise SystemExit(f"{SUITE} is not a file in {args.sdist}")
        source = handle.read().decode("utf-8")
    kept, skipped = cases(source)
    args.out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in kept),
                        encoding="utf-8")  # fmt: skip
    kinds = collections.Counter(c["kind"] for c in kept)
    print(f"{len(kept)} cases ({dict(sorted(kinds.items()))}) -> {args.out}", file=sys.stderr)
    for reason, count in sorted(skipped.items()):
        print(f"  left out, {reason}: {count}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
