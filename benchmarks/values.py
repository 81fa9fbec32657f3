"""Reading the external benchmark's labelled spans: whole spans, and split as a tagger splits them.

Each single-value case of the DEV part (``benchmarks/external/cases.dev.jsonl``; the test part
is never read here) lists the spans the spec labelled ("c $ 16,4 milioni", "15. Januar 2011",
"20 gradi celsius"). Each span is read

- by ``aau.values``: ``read_money`` (amount and currency), ``read_date``, ``read_quantity``
  (value and canonical unit), with no locale, language or context beyond the span;
- by the field normalizers of ``aau.fallbacks.normalize`` (which read through ``aau.values``)
  on the pieces a tagger hands them: ``normalize_amount`` on the span and
  ``normalize_currency`` on what is left of it once digits and separators are removed;
  ``normalize_date`` on the span; ``normalize_number`` on the span's leading number and
  ``normalize_unit`` on the rest. A naive split loses scale words and markers glued to
  numbers, so this column is lower than the first.

A case is exact when its (first) span reads as ``expected``: amounts and values as floats with
relative tolerance 1e-6, currencies, dates and units as the exact strings. Printed per unit and
language, then one JSON line with the per-unit shares.

Then the numbers of ``benchmarks/external/numbers.dev.jsonl`` (the number specs' texts, none
of them in the test part): a labelled number is read when ``find_numbers`` over the whole text,
in the text's language, finds a number of that value. Recognizers-Text labels fractions in
words, exponents and scale letters of its own ("10G"), so 1.0 is not the aim; the share shows
which forms of the units' languages the layer misses.

Last, the shop prices of ``benchmarks/external/prices.dev.jsonl`` (price-parser's labelled
strings): a price is read when ``find_money`` finds its amount with the currency as written;
and quantulum3's labelled English sentences (``quantities.dev.jsonl``): a quantity is read
when its value is found.

    python benchmarks/values.py            # dev part
    python benchmarks/values.py --misses   # also list the spans and numbers the layer misses
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from aau import values  # noqa: E402
from aau.fallbacks import normalize  # noqa: E402

DEV = REPO / "benchmarks" / "external" / "cases.dev.jsonl"
NUMBERS = REPO / "benchmarks" / "external" / "numbers.dev.jsonl"
PRICES = REPO / "benchmarks" / "external" / "prices.dev.jsonl"
QUANTITIES = REPO / "benchmarks" / "external" / "quantities.dev.jsonl"
UNITS = ("extract_price", "extract_date", "extract_quantity")


def close(a: Any, b: Any) -> bool:
    if not isinstance(a, int | float) or not isinstance(b, int | float) or isinstance(a, bool):
        return False
    return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)


def layer(unit: str, span: str) -> dict[str, Any] | None:
    if unit == "extract_price":
        money = values.read_money(span)
        return None if money is None else {"amount": money.amount, "currency": money.currency}
    if unit == "extract_date":
        date = values.read_date(span)
        return None if date is None else {"date": date}
    quantity = values.read_quantity(span)
    return None if quantity is None else {"value": quantity.value, "unit": quantity.unit}


_NUMBER = re.compile(r"^\s*([-+]?\d[\d.,' \u00a0]*)")


def baseline(unit: str, span: str) -> dict[str, Any] | None:
    if unit == "extract_price":
        marker = re.sub(r"[\d.,' \u00a0]+", " ", span).strip()
        return {"amount": normalize.normalize_amount(span),
                "currency": normalize.normalize_currency(marker) if marker else None}  # fmt: skip
    if unit == "extract_date":
        return {"date": normalize.normalize_date(span)}
    match = _NUMBER.match(span)
    number = normalize.normalize_number(match.group(1)) if match else None
    rest = span[match.end() :] if match else span
    return {"value": number, "unit": normalize.normalize_unit(rest)}


def exact(unit: str, got: dict[str, Any] | None, expected: dict[str, Any]) -> bool:
    if got is None:
        return False
    if unit == "extract_price":
        return close(got["amount"], expected["amount"]) and got["currency"] == expected["currency"]
    if unit == "extract_date":
        return got["date"] == expected["date"]
    return close(got["value"], expected["value"]) and got["unit"] == expected["unit"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list the spans the layer misses")
    args = parser.parse_args()
    cases = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line]
    cases = [c for c in cases if c["kind"] == "single" and c["spans"]]
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    misses: list[str] = []
    started = time.perf_counter()
    for case in cases:
        unit, span, expected = case["unit"], case["spans"][0], case["expected"]
        row = counts[(unit, case["language"])]
        row[0] += 1
        got = layer(unit, span)
        if exact(unit, got, expected):
            row[1] += 1
        else:
            misses.append(f"  {unit} {case['language']}: {span!r} -> {got} (expected {expected})")
        row[2] += exact(unit, baseline(unit, span), expected)
    elapsed = time.perf_counter() - started
    print(
        f"dev part, single-value cases, first labelled span ({len(cases)} spans, {elapsed:.1f} s)"
    )
    print(f"{'unit':<18}{'language':<12}{'n':>5}{'values':>9}{'normalizers':>13}")
    summary: dict[str, float] = {}
    for unit in UNITS:
        total = [0, 0, 0]
        for (name, language), (n, good, old) in sorted(counts.items()):
            if name != unit:
                continue
            print(f"{unit:<18}{language:<12}{n:>5}{good / n:>9.3f}{old / n:>13.3f}")
            total = [total[0] + n, total[1] + good, total[2] + old]
        if total[0]:
            print(f"{unit:<18}{'ALL':<12}{total[0]:>5}{total[1] / total[0]:>9.3f}"
                  f"{total[2] / total[0]:>13.3f}")  # fmt: skip
            short = unit.removeprefix("extract_")
            summary[f"{short}_values"] = round(total[1] / total[0], 3)
            summary[f"{short}_normalizers"] = round(total[2] / total[0], 3)
    if args.misses:
        print("misses of the values layer:")
        print("\n".join(misses))
    summary["numbers_read"] = read_numbers(args.misses)
    summary.update(read_prices(args.misses))
    summary["quantities_read"] = read_quantities(args.misses)
    print(json.dumps(summary))


def read_numbers(show_misses: bool) -> float:
    """Per language, the share of the number specs' labelled numbers ``find_numbers`` finds."""
    records = [json.loads(line) for line in NUMBERS.read_text(encoding="utf-8").splitlines()]
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    for record in records:
        found = [span.value for span in values.find_numbers(record["text"],
                                                             languages=[record["code"]])]  # fmt: skip
        for expected in record["numbers"]:
            row = counts[record["language"]]
            row[0] += 1
            if any(close(value, expected) for value in found):
                row[1] += 1
            else:
                misses.append(f"  {record['language']}: {record['text']!r}: {expected}")
    print(f"numbers.dev.jsonl ({len(records)} texts): labelled numbers read")
    for language, (n, good) in sorted(counts.items()):
        print(f"  {language:<12}{n:>5}{good / n:>9.3f}")
    total = sum(n for n, _ in counts.values())
    share = sum(good for _, good in counts.values()) / total
    print(f"  {'ALL':<12}{total:>5}{share:>9.3f}")
    if show_misses:
        print("numbers the values layer misses:")
        print("\n".join(misses))
    return round(share, 3)


def read_prices(show_misses: bool) -> dict[str, float]:
    """Of price-parser's labelled shop prices, the share ``find_money`` reads, and its false finds.

    A price is read when one amount ``find_money`` finds has the labelled value and its span,
    or the words just before it ("AU $59.95"), hold the currency as written (a closing dot
    aside: "руб."); a string labelled with no price is right when nothing is found.
    """
    records = [json.loads(line) for line in PRICES.read_text(encoding="utf-8").splitlines()]
    priced = [r for r in records if r["amount"] is not None]
    read, false_finds, misses = 0, 0, []
    for record in records:
        found = values.find_money(record["text"])
        if record["amount"] is None:
            false_finds += bool(found)
            continue
        marker = record["currency_as_written"].rstrip(".")
        if any(close(m.amount, record["amount"])
               and marker in record["text"][max(0, m.start - len(marker) - 1) : m.end]
               for m in found):  # fmt: skip
            read += 1
        else:
            shown = [(m.text, float(m.amount), m.currency) for m in found]
            misses.append(f"  {record['text']!r}: {record['amount']} -> {shown}")
    share = read / len(priced)
    empty = len(records) - len(priced)
    print(f"prices.dev.jsonl ({len(records)} shop prices): read {share:.3f} of {len(priced)}, "
          f"found a price in {false_finds} of {empty} without one")  # fmt: skip
    if show_misses:
        print("prices the values layer misses:")
        print("\n".join(misses))
    return {"prices_read": round(share, 3), "prices_false_finds": false_finds}


def read_quantities(show_misses: bool) -> float:
    """Of quantulum3's labelled quantities, the share whose value the values layer finds.

    A quantity is read when ``find_quantities`` (or, for money, ``find_money``) finds its value
    in the sentence; the unit is not compared (quantulum3 names units its own way).
    """
    records = [json.loads(line) for line in QUANTITIES.read_text(encoding="utf-8").splitlines()]
    total, read, misses = 0, 0, []
    for record in records:
        found = [q.value for q in values.find_quantities(record["text"])]
        found += [m.amount for m in values.find_money(record["text"])]
        for quantity in record["quantities"]:
            total += 1
            if any(close(value, quantity["value"]) for value in found):
                read += 1
            else:
                misses.append(f"  {quantity['surface']!r}: {quantity['value']} "
                              f"{quantity['unit_name']}")  # fmt: skip
    print(f"quantities.dev.jsonl ({len(records)} sentences): read {read / total:.3f} of {total}")
    if show_misses:
        print("quantities the values layer misses:")
        print("\n".join(misses))
    return round(read / total, 3)


if __name__ == "__main__":
    main()
