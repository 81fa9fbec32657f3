"""Convert Microsoft Recognizers-Text spec files into cases for the shipped units.

Reads the spec files straight out of a git directory of ``microsoft/Recognizers-Text`` (a bare
clone is enough) at one commit, turns every case whose expected value the text fully determines
into the output of ``extract_price``, ``extract_date`` or ``extract_quantity``, splits the cases
into a dev part and a test part by whole (language, source file) groups, and writes
``cases.dev.jsonl`` and ``cases.test.jsonl`` next to this file. It also writes
``numbers.dev.jsonl``: the number specs' texts and values, for measuring how the values layer
reads numbers (dev only: no unit's figure reads them). The rules are in README.md;
every skipped case is counted by reason on stderr.

    python benchmarks/external/convert.py --git-dir /path/to/Recognizers-Text.git \
        --commit 90e968ea44dc8fda3f2e1c3e4b20aa233817488d

The conversion is deterministic: the same commit gives byte-identical files.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import re
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEV_SHARE = 0.3
"""Groups go to dev, in hash order, while dev holds less than this share of a unit's cases."""
CAP = 300
"""At most this many cases per (unit, language, part), chosen by the hash of their id."""
NONE_CAP = 60
"""Of them at most this many without a value (DateTimeModel has hundreds of time-only texts)."""

NUMBER_WITH_UNIT = "Specs/NumberWithUnit"
DATETIME = "Specs/DateTime"

# -- shared ------------------------------------------------------------------------------------


@dataclass
class Case:
    unit: str
    language: str
    source: str
    index: int
    text: str
    kind: str  # single | multi | none
    expected: Any
    spans: list[str] = field(default_factory=list)
    markers: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        model = Path(self.source).stem
        return f"{self.unit.removeprefix('extract_')}/{self.language}/{model}/{self.index:04d}"

    def record(self, part: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "unit": self.unit,
            "language": self.language,
            "source": self.source,
            "part": part,
            "kind": self.kind,
            "text": self.text,
            "expected": self.expected,
            "spans": self.spans,
            **({"markers": self.markers} if self.markers else {}),
        }


class Skip(Exception):
    """A case left out; the message is the reason (counted on stderr)."""


def git(git_dir: str, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True
    ).stdout


def read_spec(git_dir: str, commit: str, path: str) -> list[dict[str, Any]]:
    return json.loads(git(git_dir, "show", f"{commit}:{path}").decode("utf-8-sig"))


def list_paths(git_dir: str, commit: str, folder: str) -> list[str]:
    return git(git_dir, "ls-tree", "-r", "--name-only", commit, folder).decode().split()


def markers_of(case: dict[str, Any]) -> dict[str, str]:
    """The platform markers of a spec case; Skip when the reference (.NET) build fails it.

    ``NotSupported`` / ``NotSupportedByDesign`` list the ports (javascript, python, java,
    dotnet) whose test run skips the case. The label is the hand-written truth either way, and
    the C# port is the reference: a case only the other ports skip is kept (its markers are
    recorded), a case that names dotnet is unverified by any port and left out, and so is a
    case marked ``IgnoreResolution`` (its resolved value is not checked by anyone).
    """
    found = {k: str(case[k]) for k in ("NotSupported", "NotSupportedByDesign") if k in case}
    if any("dotnet" in v.lower() for v in found.values()):
        raise Skip("marked NotSupported by dotnet (reference port)")
    if case.get("IgnoreResolution"):
        raise Skip("IgnoreResolution")
    return found


def number(text: Any) -> int | float:
    """A resolution value (``"75000000"``, ``"10.5"``, ``"15,15"``) as a JSON number."""
    if not isinstance(text, str) or not text.strip():
        raise Skip("no resolved value")
    raw = text.strip()
    if "," in raw and "." not in raw:  # the Romance specs resolve with a decimal comma
        raw = raw.replace(",", ".")
    try:
        value = float(raw)
    except ValueError:
        raise Skip("resolved value is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise Skip("resolved value is not finite")
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def valueless(resolution: dict[str, Any]) -> bool:
    """A unit or currency named without an amount ("convert 10 C to fahrenheit": fahrenheit):
    not a price or quantity of its own, so the result is passed over (the text is kept)."""
    value = resolution.get("value")
    return value is None or (isinstance(value, str) and not value.strip())


def outputs_case(
    unit: str, language: str, source: str, index: int, spec_case: dict[str, Any],
    outputs: list[dict[str, Any]], spans: list[str], none: dict[str, Any],
) -> Case:  # fmt: skip
    """single / multi / none from the distinct outputs of one text."""
    markers = markers_of(spec_case)
    text = spec_case["Input"]
    if not text.strip():
        raise Skip("empty input")
    distinct: list[dict[str, Any]] = []
    for output in outputs:
        if output not in distinct:
            distinct.append(output)
    if not distinct:
        return Case(unit, language, source, index, text, "none", none, [], markers)
    if len(distinct) == 1:
        return Case(unit, language, source, index, text, "single", distinct[0], spans, markers)
    return Case(unit, language, source, index, text, "multi", distinct, spans, markers)


# -- prices --------------------------------------------------------------------------------------

CURRENCY_NAMES = {
    # Recognizers' unit names that name one ISO-4217 currency, where the spec leaves out
    # ``isoCurrency``. "Dollar", "Pound", "Franc", "Krone", "Rupee", "Cent"… name several
    # currencies (or a fraction of one) and stay unresolved: such a case is left out.
    "euro": "EUR", "yen": "JPY", "japanese yen": "JPY", "yen japonais": "JPY",
    "united states dollar": "USD", "dólar estadounidense": "USD", "dólar estadunidense": "USD",
    "dollar états-unis": "USD", "canadian dollar": "CAD", "dollar canadien": "CAD",
    "dólar canadense": "CAD", "dólar canadiense": "CAD", "australian dollar": "AUD",
    "dollar australien": "AUD", "dólar australiano": "AUD", "hong kong dollar": "HKD",
    "dollar de hong kong": "HKD", "dólar de hong kong": "HKD", "chinese yuan": "CNY",
    "yuan chinois": "CNY", "yuan chinês": "CNY", "yuan chino": "CNY", "swiss franc": "CHF",
    "franc suisse": "CHF", "franco suíço": "CHF", "franco suizo": "CHF", "british pound": "GBP",
    "indian rupee": "INR", "roupie indienne": "INR", "cambodian riel": "KHR",
    "finnish markka": "FIM", "mark finlandais": "FIM", "marco finlandês": "FIM",
    "marco finlandés": "FIM", "netherlands guilder": "NLG", "florins néerlandais": "NLG",
    "florim holandês": "NLG", "florín neerlandés": "NLG",
}  # fmt: skip


def iso_codes() -> frozenset[str]:
    from babel.numbers import list_currencies

    return frozenset(list_currencies())


def price_cases(git_dir: str, commit: str, language: str, path: str) -> Iterator[Case | Skip]:
    codes = iso_codes()
    for index, spec_case in enumerate(read_spec(git_dir, commit, path)):
        try:
            markers_of(spec_case)
            outputs, spans = [], []
            for result in spec_case.get("Results") or []:
                resolution = result.get("Resolution") or {}
                if valueless(resolution):
                    continue
                code = resolution.get("isoCurrency") or CURRENCY_NAMES.get(
                    str(resolution.get("unit", "")).strip().lower()
                )
                if not code:
                    raise Skip(f"currency not resolvable: {resolution.get('unit')!r}")
                if code not in codes:
                    raise Skip(f"not an ISO-4217 code: {code!r}")
                outputs.append({"amount": number(resolution.get("value")), "currency": code})
                spans.append(result.get("Text", ""))
            none = {"amount": None, "currency": None}
            yield outputs_case("extract_price", language, path, index, spec_case, outputs, spans,
                               none)  # fmt: skip
        except Skip as skip:
            yield skip


# -- quantities ----------------------------------------------------------------------------------

UNIT_SYMBOLS = {
    # Recognizers' unit names (every language's spelling seen in the specs) -> one canonical
    # symbol. Where the shipped ``unit`` normalizer has a canonical name (kg, g, t, lb, l, ml, m,
    # km, cm, mm, m2) it is that name; otherwise the usual SI / trade symbol. A unit whose size
    # the name leaves open ("Ton": short, long or metric; "Degree" in a temperature) or that has
    # no common symbol (Chinese jin, liang, mu) is absent: a case holding one is left out.
    # length
    "mile": "mi", "milha": "mi", "milla": "mi", "miglio": "mi", "foot": "ft", "piede": "ft",
    "pé": "ft", "pie": "ft", "pied": "ft", "meter": "m", "metro": "m", "mètres": "m",
    "kilometer": "km", "kilomètres": "km", "quilômetro": "km", "kilómetro": "km",
    "chilometro": "km", "inch": "in", "polegada": "in", "pulgada": "in", "pollice": "in",
    "pouce": "in", "millimeter": "mm", "millimètres": "mm", "milímetro": "mm",
    "millimetro": "mm", "centimeter": "cm", "centimètres": "cm", "decimeter": "dm",
    "décimètres": "dm", "hectomètre": "hm", "picometer": "pm", "nanometer": "nm",
    "micrometer": "µm", "micrômetro": "µm", "light year": "ly",
    # area
    "square meter": "m2", "mètre carré": "m2", "metro quadrato": "m2", "metro quadrado": "m2",
    "metro cuadrado": "m2", "square kilometer": "km2", "kilomètre carré": "km2",
    "chilometro quadrato": "km2", "quilômetro quadrado": "km2", "kilómetro cuadrado": "km2",
    "square hectometer": "hm2", "square decameter": "dam2", "square decimeter": "dm2",
    "square centimeter": "cm2", "square millimeter": "mm2", "hectare": "ha", "acre": "acre",
    "acro": "acre",
    # mass
    "pound": "lb", "libra": "lb", "livre": "lb", "libbra": "lb", "kilogram": "kg", "gram": "g",
    "microgram": "µg", "microgramme": "µg", "metric ton": "t", "tonelada métrica": "t",
    "tonne métrique": "t", "ounce": "oz", "oncia": "oz", "onça": "oz", "onza": "oz",
    "dram": "dr",
    # volume
    "milliliter": "ml", "millilitre": "ml", "mililitro": "ml", "millilitro": "ml", "liter": "l",
    "litre": "l", "litro": "l", "cubic meter": "m3", "centímetro cúbico": "cm3",
    "cubic foot": "ft3", "pieds cube": "ft3", "piede cubo": "ft3", "pé cúbico": "ft3",
    "pie cúbico": "ft3", "barrel": "bbl", "barril": "bbl", "baril": "bbl", "barile": "bbl",
    "gallon": "gal", "gallone": "gal", "galão": "gal", "galón": "gal", "teaspoon": "tsp",
    "tablespoon": "tbsp", "cup": "cup",
    # speed
    "kilometer per hour": "km/h", "meter per second": "m/s", "mile per hour": "mph",
    "milha por hora": "mph", "milla por hora": "mph", "miles par heure": "mph",
    "miglia all'ora": "mph", "meter per millisecond": "m/ms",
    "centimeter per millisecond": "cm/ms", "kilometer per millisecond": "km/ms",
    # information
    "bit": "bit", "kilobit": "kbit", "megabit": "Mbit", "kilobyte": "kB", "megabyte": "MB",
    "gigabyte": "GB", "terabyte": "TB",
    # angle, frequency, power, energy
    "degree": "°", "radian": "rad", "turn": "turn", "hertz": "Hz", "megahertz": "MHz",
    "kilowatt": "kW", "kilocalorie": "kcal",
}  # fmt: skip

TEMPERATURE_SYMBOLS = {
    "c": "°C", "grau celsius": "°C", "grado celsius": "°C", "f": "°F", "grau fahrenheit": "°F",
    "grado fahrenheit": "°F", "k": "K", "kelvin": "K",
}  # fmt: skip

CROSS_MODEL = re.compile(
    r"°|\b(?:degrees?|degrés?|grad|grade|grados?|graus?|gradi|graden|grader|graders)\b|度|도",
    re.IGNORECASE,
)
"""Words of the other model: a text empty in DimensionModel may state a temperature, one empty
in TemperatureModel an angle, and both are quantities for extract_quantity."""


def quantity_cases(git_dir: str, commit: str, language: str, path: str) -> Iterator[Case | Skip]:
    symbols = TEMPERATURE_SYMBOLS if "Temperature" in path else UNIT_SYMBOLS
    for index, spec_case in enumerate(read_spec(git_dir, commit, path)):
        try:
            markers_of(spec_case)
            outputs, spans = [], []
            results = spec_case.get("Results") or []
            for result in results:
                resolution = result.get("Resolution") or {}
                if valueless(resolution):
                    continue
                name = str(resolution.get("unit", "")).strip()
                symbol = symbols.get(name.lower())
                if symbol is None:
                    raise Skip(f"unit without a canonical symbol: {name!r}")
                outputs.append({"value": number(resolution.get("value")), "unit": symbol})
                spans.append(result.get("Text", ""))
            if not outputs and CROSS_MODEL.search(spec_case.get("Input", "")):
                raise Skip("no result, but a quantity of the other model (degrees)")
            none = {"value": None, "unit": None}
            yield outputs_case("extract_quantity", language, path, index, spec_case, outputs,
                               spans, none)  # fmt: skip
        except Skip as skip:
            yield skip


# -- dates ---------------------------------------------------------------------------------------

FULL_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:T|$)")
DATE_TYPES = {"date", "datetime"}
"""Result types that state a calendar date."""
OTHER_TYPES = {"time", "timerange", "duration", "set"}
"""Result types that state none (a time of day, a length of time, a recurrence)."""
CJK_DIGITS = dict(zip("〇零一二三四五六七八九两", "001234567892", strict=True))
CJK_NUMBER = re.compile(r"[〇零一二三四五六七八九两十百千]+")
NUMERIC_DATE = re.compile(
    r"(?<![\d/.\-])(\d{1,2})\s?[/.\-]\s?(\d{1,2})(?:\s?[/.\-]\s?|,\s*|\s+)\d{4}(?!\d)"
)
"""Day and month in numbers, then the year: 3/4/2024, 03.04.2024, 08/12, 2015."""


def cjk_value(run: str) -> str:
    """A run of CJK numerals as ASCII digits: 二〇一九 -> 2019, 二十五 -> 25, 十二 -> 12."""
    if not any(c in "十百千" for c in run):
        return "".join(CJK_DIGITS[c] for c in run)
    total, digit = 0, 0
    for c in run:
        if c in CJK_DIGITS:
            digit = int(CJK_DIGITS[c])
        else:
            total += (digit or 1) * {"十": 10, "百": 100, "千": 1000}[c]
            digit = 0
    return str(total + digit)


def ascii_digits(text: str) -> str:
    """Digits of every script (Devanagari, Arabic-Indic, full-width, CJK numerals) as ASCII."""
    text = CJK_NUMBER.sub(lambda m: cjk_value(m.group()), text)
    return "".join(str(unicodedata.digit(c)) if c.isdigit() and not c.isascii() else c
                   for c in text)  # fmt: skip


def written_date(span: str, iso: str) -> None:
    """Skip unless the span itself writes the date's year (not "tomorrow", "Friday the 13th").

    The year must appear as its four digits (in any script's digits, CJK numerals included): a
    two-digit year ("05/05/89", "'19") leaves the century to a convention. With the year written
    and the timex complete, month and day come from the text too ("fourth of july 1995",
    "easter 2018"). A numeric date whose first two numbers could each be the day or the month
    (03/04/2024, 08/12, 2015) is ambiguous without a locale and is left out; one whose two
    numbers are equal, or that starts with the year (2024/03/04), is not.
    """
    digits = ascii_digits(span)
    year = int(iso[:4])
    if not re.search(rf"(?<!\d){year:04d}(?!\d)", digits):
        raise Skip("date whose year the text does not write in four digits")
    for match in NUMERIC_DATE.finditer(digits):
        first, second = int(match.group(1)), int(match.group(2))
        if first <= 12 and second <= 12 and first != second:
            raise Skip("numeric date ambiguous between day-month and month-day")


def date_of(kind: str, timex: str, values: list[str], span: str) -> str:
    match = FULL_DATE.match(timex or "")
    if not match:
        raise Skip(f"{kind} not fully determined (timex {timex!r})")
    iso = "-".join(match.groups())
    if any(v[:10] != iso for v in values if v):
        raise Skip("resolved value disagrees with the timex")
    written_date(span, iso)
    return iso


def date_results(spec_case: dict[str, Any], parser: bool) -> tuple[list[str], list[str]]:
    """The dates a case states and their spans; Skip when a result is not a determined date."""
    dates, spans = [], []
    for result in spec_case.get("Results") or []:
        if parser:  # Date(Time)Parser.json: {"Type": "date", "Value": {"Timex": ..., ...}}
            kind = result.get("Type", "")
            value = result.get("Value") or {}
            timex = value.get("Timex", "")
            resolved = [(value.get(k) or {}).get(key, "")
                        for k in ("FutureResolution", "PastResolution")
                        for key in ("date", "dateTime")]  # fmt: skip
        else:  # DateTimeModel.json: {"TypeName": "datetimeV2.date", "Resolution": {"values"}}
            kind = str(result.get("TypeName", "")).removeprefix("datetimeV2.")
            values = (result.get("Resolution") or {}).get("values") or []
            timexes = {v.get("timex", "") for v in values}
            timex = timexes.pop() if len(timexes) == 1 else ""
            resolved = [v.get("value", "") for v in values]
        if kind in OTHER_TYPES:
            continue
        if kind not in DATE_TYPES:
            raise Skip(f"states a {kind or 'result'} (not one date)")
        dates.append(date_of(kind, timex, resolved, result.get("Text", "")))
        spans.append(result.get("Text", ""))
    return dates, spans


def date_cases(git_dir: str, commit: str, language: str, path: str) -> Iterator[Case | Skip]:
    parser = path.endswith("Parser.json")
    for index, spec_case in enumerate(read_spec(git_dir, commit, path)):
        try:
            markers_of(spec_case)
            results = spec_case.get("Results") or []
            if parser and not results:
                raise Skip("parser case without a result (a parser spec lists one type only)")
            dates, spans = date_results(spec_case, parser)
            outputs = [{"date": d} for d in dates]
            yield outputs_case("extract_date", language, path, index, spec_case, outputs, spans,
                               {"date": None})  # fmt: skip
        except Skip as skip:
            yield skip


# -- sources, split, output ----------------------------------------------------------------------

SOURCES = {
    "extract_price": (NUMBER_WITH_UNIT, ("CurrencyModel.json",), price_cases),
    "extract_quantity": (NUMBER_WITH_UNIT, ("DimensionModel.json", "TemperatureModel.json"),
                         quantity_cases),
    "extract_date": (DATETIME, ("DateTimeModel.json", "DateParser.json", "DateTimeParser.json"),
                     date_cases),
}  # fmt: skip


def collect(git_dir: str, commit: str, skipped: collections.Counter[str]) -> list[Case]:
    cases: list[Case] = []
    for unit, (folder, names, reader) in SOURCES.items():
        for path in list_paths(git_dir, commit, folder):
            parts = path.split("/")
            if len(parts) != 4 or parts[3] not in names:
                continue
            for item in reader(git_dir, commit, parts[2], path):
                if isinstance(item, Skip):
                    skipped[f"{unit}: {re.sub(r' [(:].*', '', str(item))}"] += 1
                else:
                    cases.append(item)
    return cases


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def group_key(case: Case) -> str:
    return f"{case.unit}|{case.language}|{case.source}"


def split(cases: list[Case]) -> dict[str, str]:
    """Group key -> part: per unit, groups in sha256 order go to dev while it is under 30%."""
    parts: dict[str, str] = {}
    by_unit: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for case in cases:
        by_unit[case.unit][group_key(case)] += 1
    for sizes in by_unit.values():
        total, dev = sum(sizes.values()), 0
        for key in sorted(sizes, key=digest):
            if dev < DEV_SHARE * total:
                parts[key], dev = "dev", dev + sizes[key]
            else:
                parts[key] = "test"
    return parts


def normalized(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def deduplicate(
    cases: list[Case], parts: dict[str, str], skipped: collections.Counter[str]
) -> dict[str, list[Case]]:
    """One case per (unit, text) in all: a text in both parts stays in test only; repeats in a
    part keep the first one when their expected outputs agree, and none when they do not."""
    seen: dict[tuple[str, str], list[tuple[str, Case]]] = collections.defaultdict(list)
    for case in sorted(cases, key=lambda c: (group_key(c), c.index)):
        seen[(case.unit, normalized(case.text))].append((parts[group_key(case)], case))
    out: dict[str, list[Case]] = {"dev": [], "test": []}
    for (unit, _), found in seen.items():
        in_test = [c for p, c in found if p == "test"]
        chosen = in_test or [c for _, c in found]
        if len(found) > len(chosen):
            skipped[f"{unit}: duplicate text, also in the test part"] += len(found) - len(chosen)
        if any(c.expected != chosen[0].expected or c.kind != chosen[0].kind for c in chosen):
            skipped[f"{unit}: duplicate text with differing labels"] += len(chosen)
            continue
        if len(chosen) > 1:
            skipped[f"{unit}: duplicate text"] += len(chosen) - 1
        out["test" if in_test else "dev"].append(chosen[0])
    return out


def capped(cases: list[Case], skipped: collections.Counter[str]) -> list[Case]:
    by_language: dict[tuple[str, str], list[Case]] = collections.defaultdict(list)
    for case in cases:
        by_language[(case.unit, case.language)].append(case)
    kept: list[Case] = []
    for (unit, _), group in by_language.items():
        group.sort(key=lambda c: digest(c.id))
        nones = [c for c in group if c.kind == "none"]
        if len(nones) > NONE_CAP:
            skipped[
                f"{unit}: over {NONE_CAP} texts without a value per (unit, language, part)"
            ] += len(nones) - NONE_CAP
            dropped = {c.id for c in nones[NONE_CAP:]}
            group = [c for c in group if c.id not in dropped]
        if len(group) > CAP:
            skipped[f"{unit}: over the cap of {CAP} per (unit, language, part)"] += len(group) - CAP
        kept.extend(group[:CAP])
    return sorted(kept, key=lambda c: (c.unit, c.language, c.source, c.index))


# -- numbers (dev only) ---------------------------------------------------------------------

NUMBER = "Specs/Number"
NUMBER_LANGUAGES = {"English": "en", "German": "de", "French": "fr", "Spanish": "es",
                    "Italian": "it", "Portuguese": "pt", "Dutch": "nl", "Swedish": "sv",
                    "Turkish": "tr", "Hindi": "hi", "Chinese": "zh", "Japanese": "ja",
                    "Korean": "ko"}  # fmt: skip
"""The NumberModel languages the units' values layer claims, with their language codes."""


def number_records(
    git_dir: str, commit: str, test_texts: list[str], skipped: collections.Counter[str]
) -> list[dict[str, Any]]:
    """``NumberModel.json`` cases of every claimed language, for ``numbers.dev.jsonl``.

    Each keeps the text and the values of its ``number`` results (all of them dev: the units'
    figures never read these). A text with no result is left out (the spec leaves numbers
    joined to a unit, "the 180ml liquid", out by design), and so is one that a test case holds
    or that holds a test case: the specs reuse sentences across models.
    """
    tests = [normalized(text) for text in test_texts]
    records: list[dict[str, Any]] = []
    for language, code in NUMBER_LANGUAGES.items():
        path = f"{NUMBER}/{language}/NumberModel.json"
        for index, spec_case in enumerate(read_spec(git_dir, commit, path)):
            try:
                markers = markers_of(spec_case)
                text = spec_case["Input"]
                values = [number(r["Resolution"]["value"]) for r in spec_case.get("Results", [])
                          if r.get("TypeName") == "number"]  # fmt: skip
                if not values:
                    raise Skip("number: no number result")
                mine = normalized(text)
                if any(mine in test or test in mine for test in tests if test):
                    raise Skip("number: the text overlaps a test case")
            except Skip as reason:
                skipped[str(reason)] += 1
                continue
            records.append({"id": f"number/{language}/{index:04d}", "language": language,
                            "code": code, "source": path, "text": text, "numbers": values,
                            **({"markers": markers} if markers else {})})  # fmt: skip
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", required=True, help="git directory of Recognizers-Text")
    parser.add_argument("--commit", required=True, help="the commit to read the specs at")
    parser.add_argument("--out", type=Path, default=HERE, help="folder for the jsonl files")
    args = parser.parse_args(argv)

    commit = git(args.git_dir, "rev-parse", f"{args.commit}^{{commit}}").decode().strip()
    skipped: collections.Counter[str] = collections.Counter()
    cases = collect(args.git_dir, commit, skipped)
    parts = split(cases)
    for part, part_cases in deduplicate(cases, parts, skipped).items():
        lines = [json.dumps(c.record(part), ensure_ascii=False, sort_keys=False)
                 for c in capped(part_cases, skipped)]  # fmt: skip
        (args.out / f"cases.{part}.jsonl").write_text("".join(f"{line}\n" for line in lines),
                                                       encoding="utf-8")  # fmt: skip
        counts = collections.Counter(
            (json.loads(line)["unit"], json.loads(line)["kind"]) for line in lines
        )
        print(f"{part}: {len(lines)} cases {dict(sorted(counts.items()))}", file=sys.stderr)
    test_texts = [json.loads(line)["text"] for line in
                  (args.out / "cases.test.jsonl").read_text(encoding="utf-8").splitlines()]  # fmt: skip
    numbers = number_records(args.git_dir, commit, test_texts, skipped)
    (args.out / "numbers.dev.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in numbers), encoding="utf-8"
    )
    print(f"numbers (dev): {len(numbers)} texts", file=sys.stderr)
    for key in sorted({k for k in parts}):
        print(f"  {parts[key]:4}  {key}", file=sys.stderr)
    print(f"commit {commit}", file=sys.stderr)
    for reason, count in sorted(skipped.items()):
        print(f"  skipped {count:5}  {reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
