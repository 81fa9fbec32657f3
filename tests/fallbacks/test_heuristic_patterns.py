"""Heuristic patterns from hostile unit files: linear time on RE2, Python's meaning kept.

The shipped units' patterns and keywords must give exactly what Python's ``re`` gives on their
own texts (few-shot inputs and annotated examples), so moving them to RE2 changes no answer.
Backtracking exploits must finish at once; patterns RE2 cannot run (lookaround) run under the
time limit, which ends in the coded ``pattern_timeout``, never a hang.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

import aau.fallbacks.patterns as patterns
from aau.answers import PathContext
from aau.errors import AAUError, SpecError
from aau.fallbacks.heuristic import HeuristicFallback, HeuristicPath
from aau.fallbacks.patterns import KeywordSet, PatternTimeout, compile_pattern, compile_patterns
from aau.limits import LIMITS, Limits
from aau.spec.loader import read_yaml
from aau.spec.model import UnitSpec
from tests.conftest import FIND_TOTAL_YAML, PROMPTED_UNIT_FILES, value_within


def shipped() -> list[tuple[UnitSpec, HeuristicFallback, list[str]]]:
    out = []
    for path in PROMPTED_UNIT_FILES:
        unit = UnitSpec.from_file(path)
        assert unit.prompt is not None
        texts = [example.input for example in unit.prompt.examples]
        annotated = path.with_name(f"{unit.name}.annotated.jsonl")
        if annotated.is_file():
            lines = annotated.read_text("utf-8").splitlines()
            texts += [json.loads(line)["text"] for line in lines]
        for fallback in unit.fallbacks:
            if isinstance(fallback, HeuristicFallback):
                out.append((unit, fallback, texts))
    return out


SHIPPED = shipped()
WITH_KEYWORDS = [case for case in SHIPPED if case[1].keywords]


def python_matches(pattern: str, text: str) -> list[tuple[Any, ...]]:
    return [(m.span(), m.groupdict()) for m in re.compile(pattern, re.I).finditer(text)]


def safe_matches(pattern: str, text: str) -> list[tuple[Any, ...]]:
    return [(m.span(), m.groupdict()) for m in compile_pattern(pattern).finditer(text)]


def unit_with_patterns(*regexes: str, keywords: list[str] | None = None) -> UnitSpec:
    data, _ = read_yaml(FIND_TOTAL_YAML)
    heuristic = data["fallbacks"][0]
    heuristic["patterns"] = [{"regex": r, "strength": 0.9} for r in regexes]
    heuristic["fields"] = {"amount": {"group": "amount", "normalize": "amount"}}
    if keywords is not None:
        heuristic["keywords"] = keywords
    return UnitSpec.from_dict(data)


def context(unit: UnitSpec) -> PathContext:
    return PathContext(unit_name=unit.name, output_schema=unit.output)


# -- the shipped units: same matches as Python's re, on RE2 ----------------------------------


@pytest.mark.parametrize(
    ("unit", "fallback", "texts"), SHIPPED, ids=lambda v: getattr(v, "name", "")
)
def test_shipped_patterns_match_exactly_as_python_re_on_the_units_texts(
    unit: UnitSpec, fallback: HeuristicFallback, texts: list[str]
) -> None:
    assert len(texts) >= 20  # each unit's examples and annotated lines: enough to compare on
    together = compile_patterns([p.regex for p in fallback.patterns])  # as the path runs them
    for pattern, shared in zip(fallback.patterns, together, strict=True):
        compiled = compile_pattern(pattern.regex)
        assert compiled.needs_backtracking is None  # RE2, linear time
        assert shared.needs_backtracking is None
        for text in texts:
            expected = python_matches(pattern.regex, text)
            assert safe_matches(pattern.regex, text) == expected, text
            assert [(m.span(), m.groupdict()) for m in shared.finditer(text)] == expected, text


@pytest.mark.parametrize(
    ("unit", "fallback", "texts"), WITH_KEYWORDS, ids=lambda v: getattr(v, "name", "")
)
def test_shipped_keywords_are_found_exactly_as_python_re_finds_them(
    unit: UnitSpec, fallback: HeuristicFallback, texts: list[str]
) -> None:
    words = list(fallback.keywords)
    keywords = KeywordSet(words)
    python = [re.compile(rf"\b{re.escape(w)}\b", re.I) for w in words]
    for text in texts:
        data = keywords.encode(text)
        assert data is not None
        for end in range(0, len(text) + 1, 5):
            start = max(0, end - fallback.window)
            window = text[start:end]
            expected = [i for i, rx in enumerate(python) if rx.search(window)]
            assert keywords.found(window, data[start:end]) == expected, window


@pytest.mark.parametrize(
    ("unit", "fallback", "texts"), SHIPPED, ids=lambda v: getattr(v, "name", "")
)
def test_shipped_units_have_no_pattern_notes(
    unit: UnitSpec, fallback: HeuristicFallback, texts: list[str]
) -> None:
    assert fallback.notes(unit) == []


# -- Python's meaning where RE2's own differs ------------------------------------------------

CORNERS = [
    (r"(?P<v>\d+)\s?(?P<u>m²|m|kg)\b", "163m² of tiles, 4 m of rope, 12 mètres, 5 kgé"),
    (r"\b\w+\b", "Größe café naïve ½ Ⅻ x_y 12³"),
    (r"[^\W\d_]+", "abc123 déjà-vu ß9"),
    (r"\d+", "١٢٣ and ४५ and 12"),
    (r"a\sb", "a\u00a0b a\u202fb a\u2028b a\x1cb a\vb a b"),
    (r"\S+", "one\u00a0two three"),
    (r"total$", "the total\n"),
    (r"total$", "total\ntotal"),
    (r"(?m)^\w+$", "one\ntwo\n\nthree\n"),
    (r"end\Z", "the end\n"),
    (r"kelvin", "KELVIN \u212aelvin"),
    (r"stra(ß|ss)e", "STRASSE Straße"),
    (r"(?x) (?P<n> \d+ ) \s* (?# a comment ) usd", "pay 12 USD or 13usd"),
    (r"a+?b|a{2,3}", "aaab aab ab aaaa"),
    (r"(a|ab)(c|bcd)(d*)", "abcd"),
    (r"(?:(x)|(y))+", "xyxy"),
    (r"[.,'’ ]\d{3}", "1’250 1.000 1 000"),
    (r"(?i:EUR)|usd", "eur EUR usd USD"),
    (r"(?-i:EUR)", "eur EUR"),
    (r".+", "line one\nline two"),
    (r"(?s).+", "line one\nline two"),
    (r"\bé", "é éa aé"),
    (r"[a-z]+", "K\u212a ſS"),
]


@pytest.mark.parametrize(("pattern", "text"), CORNERS)
def test_python_meaning_is_kept_where_re2_reads_otherwise(pattern: str, text: str) -> None:
    assert compile_pattern(pattern).needs_backtracking is None
    assert safe_matches(pattern, text) == python_matches(pattern, text)


def test_texts_bring_new_kinds_of_characters_at_any_time() -> None:
    pattern = r"(?P<w>\w+)"
    for text in ["plain", "déjà", "日本語のテキスト", "Ελληνικά 123", "emoji 😀 x", "mixed ß ², ½"]:
        assert safe_matches(pattern, text) == python_matches(pattern, text)


# -- hostile patterns ----------------------------------------------------------------------

REDOS = [
    (r"(a+)+$", "a" * 40 + "!"),
    (r"(x+x+)+y", "x" * 40),
    (r"(.*a){20}", "a" * 19 + "b" * 40),
    (r"^(\w+\s?)*$", "word " * 30 + "!"),
    (r"(a|aa)+$", "a" * 60 + "!"),
]


@pytest.mark.parametrize(("pattern", "text"), REDOS)
def test_backtracking_exploits_finish_at_once_on_re2(pattern: str, text: str) -> None:
    compiled = compile_pattern(pattern)
    assert compiled.needs_backtracking is None
    found = value_within(2.0, lambda: [m.span() for m in compiled.finditer(text)])
    assert found == []  # none of them matches; Python's re would take years to say so


def test_the_heuristic_path_answers_a_backtracking_pattern_at_once() -> None:
    unit = unit_with_patterns(r"(?P<amount>(a+)+$)")
    path = unit.fallbacks[0].build(unit)
    assert isinstance(path, HeuristicPath)
    answer = value_within(2.0, lambda: path.extract("a" * 40 + "!", context(unit)))
    assert answer.output == {"amount": None, "currency": None}


def test_a_lookaround_pattern_runs_on_the_time_limited_engine_and_answers() -> None:
    unit = unit_with_patterns(r"(?<=EUR )(?P<amount>\d+)")
    compiled = compile_pattern(r"(?<=EUR )(?P<amount>\d+)")
    assert compiled.needs_backtracking == "lookaround"
    answer = unit.fallbacks[0].build(unit).extract("Total EUR 120 due", context(unit))
    assert answer.output["amount"] == 120


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(?=x)x", "lookaround"),
        (r"(?<!x)y", "lookaround"),
        (r"(a)\1", "backreference"),
        (r"(?P<q>['\"]).*?(?P=q)", "backreference"),
        (r"(a)?(?(1)b|c)", "conditional group"),
        (r"(?>a+)b", "atomic group"),
        (r"a++b", "possessive quantifier"),
        (r"\p{Lu}+", "syntax beyond Python's re"),
    ],
)
def test_patterns_re2_cannot_run_say_why(pattern: str, reason: str) -> None:
    assert (compile_pattern(pattern).needs_backtracking or "").startswith(reason)


def test_a_backtracking_pattern_that_runs_too_long_is_a_coded_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(patterns, "LIMITS", Limits(regex_timeout_s=0.2))
    unit = unit_with_patterns(r"(?<=x)(?P<amount>(a|aa)+)(?=y)")
    path = unit.fallbacks[0].build(unit)
    raised = value_within(5.0, lambda: path.extract("x" + "a" * 60 + "!", context(unit)))
    assert isinstance(raised, PatternTimeout)
    assert isinstance(raised, AAUError)
    assert raised.code == "pattern_timeout"
    assert "0.2 s" in str(raised)


def test_notes_name_file_line_and_field_of_patterns_that_need_backtracking(
    tmp_path: Path,
) -> None:
    data, _ = read_yaml(FIND_TOTAL_YAML)
    data["fallbacks"][0]["patterns"].append({"regex": r"(?<=EUR )(?P<amount>\d+)(?P<currency>)"})
    path = tmp_path / "find_total.yaml"
    text = yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    unit = UnitSpec.from_file(path)
    fallback = unit.fallbacks[0]
    assert isinstance(fallback, HeuristicFallback)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "(?<=EUR" in row)
    assert fallback.notes(unit) == [
        f"{path.resolve()}:{line}: fallbacks[0].patterns[1].regex: needs backtracking "
        f"(lookaround); it runs under a {LIMITS.regex_timeout_s} s time limit"
    ]


def test_a_pattern_neither_engine_compiles_is_refused_at_load() -> None:
    data, _ = read_yaml(FIND_TOTAL_YAML)
    data["fallbacks"][0]["patterns"] = [{"regex": "(?P<amount>\\d+"}]
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_dict(data)
    assert caught.value.spec_code == "S031"
    assert caught.value.field == "fallbacks[0].patterns[0].regex"


def test_keywords_still_rank_the_match_they_precede() -> None:
    unit = unit_with_patterns(r"(?P<amount>\d+)", keywords=["total", "größe"])
    path = unit.fallbacks[0].build(unit)
    answer = path.extract("ref 11, Total: 12, größe 13", context(unit))
    assert answer.output["amount"] == 12
    assert answer.signals["has_context"] == 1.0


def test_threads_sharing_a_pattern_each_get_their_own_matches() -> None:
    texts = [f"{chr(0x400 + i)}{i} word{i} é{i} {chr(0x4E00 + i)}{i}" for i in range(64)]
    pattern = compile_patterns([r"(?P<w>\w+)\b", r"\d+"])

    def work(text: str) -> bool:
        return all(
            [(m.span(), m.groupdict()) for m in p.finditer(text)] == python_matches(source, text)
            for p, source in zip(pattern, [r"(?P<w>\w+)\b", r"\d+"], strict=True)
        )

    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda t=t: results.append(all(work(t) for _ in range(20))))
        for t in texts
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == [True] * len(texts)
