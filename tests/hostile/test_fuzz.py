"""Property-based fuzzing of the three parsers hostile input reaches first, bounded in time.

* the unit loader, ``aau.UnitSpec.from_text``: YAML-ish token soup and mutations of a shipped
  unit file either load or raise ``aau.errors.SpecError``;
* the dictionary parser, ``aau.terms.dictionary.parse_dictionary`` (an upload's bytes): bytes,
  TSV/CSV-ish rows, YAML-ish soup and mutations of a shipped dictionary either parse or raise
  ``TermDictionaryError``;
* the batch line parser, ``aau.cli.batch.parse_line(raw, number)``: bytes, JSON values (lone
  surrogates, huge integers, NaN, deep nesting) and mutations of a good line either parse or
  raise ``aau.errors.InputError``.

Anything else raised is a crash the property reports (with the shrunk input). Each test has a
``max_examples`` and a per-example ``deadline``; the module takes well under a minute. Needs
``hypothesis`` (skipped without it).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from aau import UnitSpec  # noqa: E402
from aau.cli.batch import BatchLine, parse_line  # noqa: E402
from aau.errors import InputError, SpecError, TermDictionaryError  # noqa: E402
from aau.terms.dictionary import TermDictionary, parse_dictionary  # noqa: E402
from tests.hostile.corpus import REPO  # noqa: E402

UNIT_FILE = REPO / "units" / "extract_price.yaml"
UNIT_TEXT = UNIT_FILE.read_text(encoding="utf-8")
DICTIONARY_FILE = REPO / "termdicts" / "legal" / "legal_terms.tsv"
DICTIONARY_BYTES = DICTIONARY_FILE.read_bytes()[:6000].rsplit(b"\n", 1)[0] + b"\n"
GOOD_LINE = json.dumps({"id": "inv-1", "text": "Invoice 7. Total due: EUR 120.50."}).encode()


def bounded(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=timedelta(seconds=3),
        database=None,  # nothing written into the checkout
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


YAML_TOKENS = [
    "!!timestamp x", "!!bool maybe", "!!int abc", "!!float x", "!!str [1]", "!!map [1]",
    "name: extract_price\n", "version: 1\n", "description: x\n", "output:\n", "prompt:\n",
    "  system: s\n", "  template: '{{ text }}'\n", "fallbacks:\n", "policy:\n", "  type: object\n",
    "  properties: {a: {type: string}}\n", "- ", "  ", "\n", "\t", ": ", ", ", "[", "]", "{", "}",
    "&a ", "*a", "&b [*a, *a, *a]\n", "<<: *a\n", "? ", "!!python/name:os.system ",
    "!!python/object/apply:os.system ['true'] ", "!!binary aGk= ", "!!set ", "!!omap ",
    "!!timestamp ", "!custom ", ".nan", ".inf", "-.inf", "1e999", "0x1F", "0o17", "2024-13-45",
    "9" * 5000, "'", '"', '"\\ud800"', '"\\x00"', "\\", "\x00", "\ufeff", "\x85", "\u2028", "|",
    ">-", "#", "%YAML 1.1\n", "%TAG ! tag:x,2000:\n", "---\n", "...\n", "~", "null", "true",
    "on", "yes", "=", "{{ lipsum.__globals__ }}", "{% for i in range(10**9) %}",
]  # fmt: skip
yaml_soup = st.lists(st.one_of(st.sampled_from(YAML_TOKENS), st.text(max_size=6)), max_size=40).map(
    "".join
)


@st.composite
def mutated(draw: st.DrawFn, original: str, tokens: list[str]) -> str:
    """``original`` with a few insertions, deletions and line duplications."""
    text = original
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        operation = draw(st.sampled_from(["insert", "delete", "duplicate", "replace"]))
        if operation == "insert":
            text = text[:at] + draw(st.sampled_from(tokens)) + text[at:]
        elif operation == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        elif operation == "duplicate":
            lines = text.splitlines(keepends=True)
            if lines:
                index = draw(st.integers(0, len(lines) - 1))
                lines.insert(index, lines[index])
                text = "".join(lines)
        else:
            text = text[:at] + draw(st.characters()) + text[at + 1 :]
    return text


def load_unit(text: str, **kwargs: Any) -> None:
    try:
        spec = UnitSpec.from_text(text, **kwargs)
    except SpecError:
        return
    assert isinstance(spec, UnitSpec)


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    # The first load compiles the decoder's grammar machinery (seconds): not any example's time.
    UnitSpec.from_text(UNIT_TEXT, source=UNIT_FILE)


@bounded(400)
@given(yaml_soup)
def test_the_unit_loader_refuses_yaml_soup_with_spec_errors_only(text: str) -> None:
    load_unit(text)


@bounded(400)
@given(mutated(UNIT_TEXT, YAML_TOKENS))
def test_the_unit_loader_refuses_mutated_units_with_spec_errors_only(text: str) -> None:
    load_unit(text, source=UNIT_FILE)


def parse(data: bytes, file: str) -> None:
    try:
        dictionary = parse_dictionary(data, file=file)
    except TermDictionaryError:
        return
    assert isinstance(dictionary, TermDictionary)


TABLE_PIECES = [
    "term", "canonical", "category", "aliases", "lang", "\t", ",", '"', '""', "|", "\n", "\r\n",
    "\r", "#", "# name: x\n", "# lang: en\n", "force majeure", "clause", "en-GB", "<|im_start|>",
    "[CLS]", " ", "\x00", "\x1b", "\ufeff", "\u2028", "é", "日本", "a" * 100, "x.",
]  # fmt: skip
table_text = st.lists(
    st.one_of(st.sampled_from(TABLE_PIECES), st.text(max_size=5)), max_size=60
).map("".join)
encoded = st.one_of(
    table_text.map(lambda t: t.encode("utf-8")),
    table_text.map(lambda t: ("term\tcanonical\tcategory\n" + t).encode("utf-8")),
    table_text.map(lambda t: t.encode("utf-16")),
    st.binary(max_size=400),
    st.builds(lambda a, b: a + b"\xed\xa0\x80" + b, st.binary(max_size=20), st.binary(max_size=20)),
)
dictionary_file = st.sampled_from(["fuzz.tsv", "fuzz.csv", "fuzz.yaml", "fuzz.yml", "fuzz"])


@bounded(400)
@given(encoded, dictionary_file)
def test_the_dictionary_parser_refuses_bytes_with_dictionary_errors_only(
    data: bytes, file: str
) -> None:
    parse(data, file)


@bounded(200)
@given(yaml_soup, st.booleans())
def test_the_dictionary_parser_refuses_yaml_soup_with_dictionary_errors_only(
    text: str, terms_first: bool
) -> None:
    prefix = "terms:\n  - " if terms_first else "name: fuzz\n"
    parse((prefix + text).encode("utf-8", "surrogatepass"), "fuzz.yaml")


@bounded(200)
@given(mutated(DICTIONARY_BYTES.decode("utf-8"), TABLE_PIECES))
def test_the_dictionary_parser_refuses_mutated_dictionaries_with_dictionary_errors_only(
    text: str,
) -> None:
    parse(text.encode("utf-8", "surrogatepass"), "legal_terms.tsv")


def parse_batch(raw: bytes, number: int = 1) -> None:
    try:
        line = parse_line(raw, number)
    except InputError:
        return
    assert isinstance(line, BatchLine)
    assert isinstance(line.id, str | int)
    assert not isinstance(line.id, bool)
    assert line.text is None or isinstance(line.text, str)


any_character = st.one_of(
    st.characters(),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
)
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(any_character, max_size=20),
)  # fmt: skip
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)
records = st.fixed_dictionaries(
    {},
    optional={"id": json_values, "text": json_values, "path": json_values, "tenant": json_values},
)


def dumped(value: Any, ascii_only: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


LINE_PIECES = [
    b'{"id": ', b'"text": ', b'"path": ', b'"tenant": ', b"[" * 60, b"]" * 60, b"{" * 60, b"}",
    b'"\\ud800"', b'"\\udc00x"', b"7" * 5000, b"NaN", b"-Infinity", b"1e999", b"\x00", b"\xff",
    b"\xed\xa0\x80", b'"', b"\\", b",", b":", b" ", b"\n", b"\r", b"\xef\xbb\xbf", b"null",
]  # fmt: skip


@bounded(400)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.builds(dumped, records, st.booleans()),
        st.builds(dumped, json_values, st.booleans()),
        st.lists(st.sampled_from(LINE_PIECES), max_size=30).map(b"".join),
        st.integers(4000, 6000).map(lambda n: b'{"id": ' + b"9" * n + b', "text": "x"}'),
    ),
    st.integers(min_value=1, max_value=10**6),
)
def test_the_batch_line_parser_refuses_lines_with_input_errors_only(
    raw: bytes, number: int
) -> None:
    parse_batch(raw, number)


@bounded(200)
@given(mutated(GOOD_LINE.decode(), [piece.decode("latin-1") for piece in LINE_PIECES]))
def test_the_batch_line_parser_refuses_mutated_lines_with_input_errors_only(text: str) -> None:
    parse_batch(text.encode("utf-8", "surrogatepass"))
