"""Term dictionaries and tenant names from an attacker: refused within bounds, located and coded.

YAML dictionaries go through the unit loader: an alias bomb (T022), deep nesting (T021) and a
duplicate key (T020) are refused before any data is built. Only regular files are read, with a
bound (T001 for a FIFO or device, T004 over the size cap): ``aau termdict check`` and
``aau termdict add`` on a FIFO or ``/dev/zero`` end at once. Tenant names can never reach a
path they should not (T016).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aau.cli.main import main
from aau.errors import TermDictionaryError
from aau.terms import TermStore, load_dictionary, parse_dictionary
from aau.terms import dictionary as dictionary_module
from aau.terms.store import check_tenant_name
from tests.conftest import within

DEADLINE_S = 30.0  # generous: each of these is refused in well under a second
REPO = Path(__file__).resolve().parents[2]

GOOD_YAML = """\
name: parts
terms:
  - {term: widget pack, canonical: WP-1, category: product}
  - term: gadget
    canonical: GD-2
    category: product
"""


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """A YAML dictionary whose ``terms`` would expand to ``width ** levels`` entries."""
    lines = ["name: bomb", f"lol0: &lol0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*lol{level - 1}"] * width)
        lines.append(f"lol{level}: &lol{level} [{refs}]")
    lines.append(f"terms: *lol{levels}")
    return "\n".join(lines) + "\n"


def refused(call: Callable[[], Any]) -> TermDictionaryError:
    error = within(DEADLINE_S, call)
    assert isinstance(error, TermDictionaryError), f"expected a TermDictionaryError: {error!r}"
    return error


def max_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


@pytest.fixture
def store(tmp_path: Path) -> TermStore:
    store = TermStore(tmp_path / "store", shipped=[])
    store.create_tenant("acme")
    return store


# -- YAML ---------------------------------------------------------------------------------------


def test_a_good_yaml_dictionary_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "parts.yaml"
    path.write_text(GOOD_YAML, encoding="utf-8")
    assert [t.canonical for t in load_dictionary(path).terms] == ["WP-1", "GD-2"]


def test_an_alias_bomb_dictionary_is_refused_quickly_and_small(
    tmp_path: Path, store: TermStore
) -> None:
    bomb = alias_bomb()
    assert len(bomb) < 1500
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb, encoding="utf-8")
    before = max_rss_bytes()
    for call in (
        lambda: parse_dictionary(bomb, file="bomb.yaml"),
        lambda: load_dictionary(path),
        lambda: store.add("acme", [path]),
    ):
        error = refused(call)
        assert error.term_code == "T022"
        assert "aliases expand to more than 200,000 nodes" in error.message
        assert error.line in range(2, 12)
    assert max_rss_bytes() - before < 200 * 2**20
    assert store.uploaded("acme") == []


@pytest.mark.parametrize(
    "terms",
    ["[" * 100_000, "{a: " * 100_000 + "1" + "}" * 100_000],
    ids=["sequences", "mappings"],
)
def test_deep_yaml_is_a_located_error(terms: str) -> None:
    error = refused(lambda: parse_dictionary(f"name: deep\nterms: {terms}\n", file="d.yaml"))
    assert (error.term_code, error.line, error.file) == ("T021", 2, "d.yaml")


def test_a_duplicate_key_names_the_line_of_the_second() -> None:
    text = GOOD_YAML.replace("    category: product\n", "    category: product\n    term: gizmo\n")
    error = refused(lambda: parse_dictionary(text, file="dup.yaml"))
    assert (error.term_code, error.line) == ("T020", 7)
    assert "duplicate key 'term' (first on line 4)" in error.message
    error = refused(lambda: parse_dictionary(GOOD_YAML + "terms: []\n", file="dup.yaml"))
    assert (error.term_code, error.line) == ("T020", 7)


def test_other_yaml_errors_keep_their_code() -> None:
    error = refused(lambda: parse_dictionary("name: x\nterms: [\n", file="bad.yaml"))
    assert error.term_code == "T006"


def test_a_yaml_name_with_a_newline_is_refused() -> None:
    error = refused(
        lambda: parse_dictionary(GOOD_YAML.replace("parts", '"parts\\n"'), file="n.yaml")
    )
    assert (error.term_code, error.field) == ("T006", "name")


def test_control_characters_and_lone_surrogates_are_refused_in_every_column() -> None:
    entry = (
        "name: x\nterms:\n  - {term: force majeure, canonical: force_majeure, category: clause}\n"
    )
    cases = [
        ("category: clause", 'category: "clause\\n"', "category", "T010"),
        ("canonical: force_majeure", 'canonical: "force\\x1b[31m"', "canonical", "T010"),
        ("term: force majeure", 'term: "force \\ud800majeure"', "term", "T002"),
        ("canonical: force_majeure", 'canonical: "\\udfff"', "canonical", "T002"),
    ]
    for old, new, field, check in cases:
        text = entry.replace(old, new)
        error = refused(lambda t=text: parse_dictionary(t, file="c.yaml"))
        assert (error.term_code, error.line, error.field) == (check, 3, field)
    assert len(parse_dictionary(entry, file="c.yaml")) == 1


# -- size and kinds of file -----------------------------------------------------------------------


def test_a_dictionary_given_as_text_is_held_to_the_size_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(dictionary_module, "MAX_DICTIONARY_BYTES", 100)
    table = "term\tcanonical\tcategory\n" + "".join(f"t{i:03}\tT\tthing\n" for i in range(20))
    for text, file in ((table, "big.tsv"), (GOOD_YAML * 3, "big.yaml")):
        assert refused(lambda t=text, f=file: parse_dictionary(t, file=f)).term_code == "T004"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, store: TermStore) -> None:
    fifo = tmp_path / "parts.tsv"
    os.mkfifo(fifo)
    for call in (lambda: load_dictionary(fifo), lambda: store.add("acme", [fifo])):
        error = refused(call)
        assert (error.term_code, error.file) == ("T001", str(fifo))
        assert "FIFO" in error.message


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.tsv"
    link.symlink_to("/dev/zero")
    for path in (Path("/dev/zero"), link):
        error = refused(lambda p=path: load_dictionary(p))
        assert (error.term_code, error.file) == ("T001", str(path))
        assert "character device" in error.message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_termdict_check_and_add_end_at_once_on_a_fifo_and_dev_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "parts.tsv"
    os.mkfifo(fifo)
    files = [str(fifo), "/dev/zero"] if Path("/dev/zero").exists() else [str(fifo)]
    code: list[int] = []
    assert within(DEADLINE_S, lambda: code.append(main(["termdict", "check", *files]))) is None
    assert code == [2]
    err = capsys.readouterr().err
    assert f"{fifo}: is a FIFO (named pipe), not a regular file [T001]" in err
    if "/dev/zero" in files:
        assert "/dev/zero: is a character device, not a regular file [T001]" in err
    store = str(tmp_path / "store")
    assert main(["termdict", "--store", store, "tenant", "add", "acme"]) == 0
    add = ["termdict", "--store", store, "add", "--tenant", "acme", *files]
    assert within(DEADLINE_S, lambda: code.append(main(add))) is None
    assert code[-1] == 2
    assert "[T001]" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_the_aau_command_on_a_fifo_exits_in_time(tmp_path: Path) -> None:
    fifo = tmp_path / "parts.yaml"
    os.mkfifo(fifo)
    aau = Path(sys.executable).with_name("aau")
    command = [str(aau)] if aau.exists() else [sys.executable, "-m", "aau.cli.main"]
    done = subprocess.run(
        [*command, "termdict", "check", str(fifo)],
        capture_output=True, text=True, timeout=120, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "[T001]" in done.stderr


# -- tenant names ---------------------------------------------------------------------------------

BAD_TENANTS = ["nl\n", "a/b", "..", ".", "", "a\x00b", "café", "ünï", "-x", ".hidden", "a" * 65,
               "../etc", "a\\b", " acme", "acme "]  # fmt: skip


@pytest.mark.parametrize("tenant", BAD_TENANTS)
def test_bad_tenant_names_are_refused_everywhere(tenant: str, store: TermStore) -> None:
    with pytest.raises(TermDictionaryError) as info:
        check_tenant_name(tenant)
    assert (info.value.term_code, info.value.field) == ("T016", "tenant")
    for call in (
        lambda: store.create_tenant(tenant),
        lambda: store.term_set(tenant),
        lambda: store.add(tenant, []),
        lambda: store.remove_tenant(tenant),
        lambda: store.uploaded(tenant),
    ):
        assert refused(call).term_code == "T016"
    assert store.tenants() == ["acme"]


@pytest.mark.parametrize("tenant", ["acme", "a", "A1", "acme.eu-west_2", "a" * 64])
def test_good_tenant_names_are_accepted(tenant: str) -> None:
    check_tenant_name(tenant)


def test_a_tenant_name_with_a_newline_is_refused_by_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "store")
    assert main(["termdict", "--store", store, "tenant", "add", "nl\n"]) == 2
    assert "[T016]" in capsys.readouterr().err
    assert main(["termdict", "--store", store, "tenant", "list"]) == 0
    assert capsys.readouterr().out == ""
