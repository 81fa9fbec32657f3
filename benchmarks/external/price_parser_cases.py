"""Convert the labelled price strings of ``price-parser``'s test suite into ``prices.dev.jsonl``.

``price-parser`` (Scrapinghub, BSD-3-Clause) keeps about a thousand price strings taken from a
random sample of shop pages in many countries, each with the amount and the currency as written
that a person read from it (``tests/test_price_parsing.py`` of its source distribution). They
are a second dev resource for how ``aau.values`` reads money, beside Recognizers-Text's spec
files: bare prices as shops write them ("1.198,- Kr", "RM50", "$15.95/mo", "£94.50 GBP").

The test module is read with ``ast``, never imported or run. Kept: the strings whose currency as
written stands in the string itself (the suite also passes a hint taken from another element of
the page, which a text alone does not have), and the strings labelled with no price. Left out:
the examples given a decimal-separator hint. Each line:

    {"id": "price-parser/PRICE_PARSING_EXAMPLES/0001", "text": "45,00 zł",
     "amount": 45.0, "currency_as_written": "zł"}

``amount`` is null for a string with no price. Rebuild (byte-identical for the same version):

    pip download price-parser==0.5.1 --no-binary :all: --no-deps -d /tmp/pp
    python benchmarks/external/price_parser_cases.py --sdist /tmp/pp/price_parser-0.5.1.tar.gz
"""

from __future__ import annotations

import argparse
import ast
import collections
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
            if amount is not None and (currency is None or currency not in text):
                skipped["currency only in the hint, or none"] += 1
                continue
            kept.append({"id": f"price-parser/{target.id}/{index:04d}", "text": text,
                         "amount": None if amount is None else float(amount),
                         "currency_as_written": currency if amount is not None else None})  # fmt: skip
    return kept, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", type=Path, required=True, help="price-parser's .tar.gz")
    parser.add_argument("--out", type=Path, default=HERE / "prices.dev.jsonl")
    args = parser.parse_args(argv)
    with tarfile.open(args.sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/" + SUITE))
        handle = archive.extractfile(member)
        if handle is None:
            raise SystemExit(f"{SUITE} is not a file in {args.sdist}")
        source = handle.read().decode("utf-8")
    kept, skipped = cases(source)
    args.out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in kept),
                        encoding="utf-8")  # fmt: skip
    priced = sum(c["amount"] is not None for c in kept)
    print(f"{len(kept)} cases ({priced} with a price) -> {args.out}", file=sys.stderr)
    for reason, count in sorted(skipped.items()):
        print(f"  left out, {reason}: {count}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
