"""Prompt templates from hostile unit files: refused at load, and harmless even when not.

Each exploit is checked twice: ``UnitSpec.from_text`` (what ``aau validate`` runs) refuses it
with its check code and the line inside the template, and the runtime path
(``render_messages``) on a unit whose load check was bypassed (``model_copy`` does not validate)
neither runs code (a marker file in ``tmp_path`` never appears) nor grows without bound.
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

from aau.errors import SpecError
from aau.limits import LIMITS
from aau.prompts.render import render_messages
from aau.spec.loader import read_yaml
from aau.spec.model import UnitSpec
from aau.spec.templates import compiled_template, render_template
from tests.conftest import FIND_TOTAL_YAML, within

EXPLOITS = {
    "lipsum": "{{ lipsum.__globals__.os.system('touch MARKER') }}",
    "cycler": "{{ cycler.__init__.__globals__.os.system('touch MARKER') }}",
    "joiner": "{{ joiner.__init__.__globals__.os.system('touch MARKER') }}",
    "namespace": "{{ namespace.__init__.__globals__.os.system('touch MARKER') }}",
    "unit-class": "{{ unit.__class__.__init__.__globals__['os'].system('touch MARKER') }}",
    "getitem": "{{ lipsum['__globals__']['os'].system('touch MARKER') }}",
    "attr-filter": "{{ (lipsum|attr('__globals__')).os.system('touch MARKER') }}",
    "self": "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system("
    "'touch MARKER') }}",
    "subclasses": "{% for c in ''.__class__.__mro__[1].__subclasses__() %}"
    "{% if c.__name__ == 'Popen' %}{{ c(['touch', 'MARKER']) }}{% endif %}{% endfor %}",
    "path-methods": "{{ unit.source.parent.joinpath('MARKER').touch() }}",
    "str-format": "{{ '{0.__class__}'.format(text) }}",
}
"""Exploit templates; MARKER becomes a path in tmp_path that must never come to exist."""

NESTED_10K = "{% for i in range(10000) %}{% for j in range(10000) %}x{% endfor %}{% endfor %}"
NESTED_100K = "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}"


def unit_text(template: str, *, system: str = "Reply with the invoice total as JSON.") -> str:
    data, _ = read_yaml(FIND_TOTAL_YAML)
    data["prompt"]["template"] = template
    data["prompt"]["system"] = system
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000)


def load_error(text: str) -> SpecError:
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_text(text)
    return caught.value


def bypassed(template: str, *, system: str | None = None) -> UnitSpec:
    """The test unit with ``template`` put in after loading: no load check ran on it."""
    unit = UnitSpec.from_text(FIND_TOTAL_YAML)
    update: dict[str, Any] = {"template": template}
    if system is not None:
        update["system"] = system
    return unit.model_copy(update={"prompt": unit.prompt.model_copy(update=update)})


# -- refused at load (aau validate) ---------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPLOITS))
def test_validate_refuses_each_exploit_with_a_located_check(name: str, tmp_path: Path) -> None:
    template = EXPLOITS[name].replace("MARKER", str(tmp_path / "marker"))
    text = unit_text(template)
    error = load_error(text)

    expected = "S027" if name in {"path-methods", "str-format"} else "S023"
    assert error.spec_code == expected
    assert error.field == "prompt.template"
    assert "(template line 1)" in error.message
    assert error.line == next(
        n for n, line in enumerate(text.splitlines(), 1) if line.lstrip().startswith("template:")
    )
    assert not (tmp_path / "marker").exists()


def test_private_attribute_names_the_line_inside_a_multiline_template() -> None:
    error = load_error(unit_text("Text: {{ text }}\nTotal:\n{{ text.__class__ }}"))
    assert error.spec_code == "S023"
    assert "'__class__'" in error.message
    assert "(template line 3)" in error.message


@pytest.mark.parametrize(
    ("template", "code", "words"),
    [
        ("{{ lipsum }}", "S021", "unknown template variable 'lipsum'"),
        ("{{ cycler('a', 'b').next() }}", "S021", "unknown template variable 'cycler'"),
        ("{{ dict(a=1) }}", "S021", "unknown template variable 'dict'"),
        ("{{ text | shout }}", "S024", "unknown filter 'shout'"),
        ("{{ text | attr('upper') }}", "S024", "unknown filter 'attr'"),
        ("{% if text is shouting %}x{% endif %}", "S025", "unknown test 'shouting'"),
        ("{% macro m() %}x{% endmacro %}{{ m() }}", "S026", "{% macro %} is not allowed"),
        ("{% include '/etc/passwd' %}", "S026", "{% include %} is not allowed"),
        ("{% set x %}{{ text }}{% endset %}{{ x }}", "S026", "is not allowed"),
        ("{{ text.format(1) }}", "S027", "can be called"),
        ("{{ unit.model_dump() }}", "S027", "can be called"),
        ("{% for i in range(100000) %}x{% endfor %}", "S028", "100000 steps"),
        (NESTED_10K, "S028", "100000000 steps"),
        (NESTED_100K, "S028", "over the limit"),
        ("{{ text }} {{ 'x' * 100000000 }}", "S029", "over the template output limit"),
        ("{% for i in range(10000) %}{{ text }}{% endfor %}", "S029", "output limit"),
    ],
)  # fmt: skip
def test_validate_refuses_what_the_sandbox_would_refuse(
    template: str, code: str, words: str
) -> None:
    error = load_error(unit_text(template))
    assert (error.spec_code, error.field) == (code, "prompt.template")
    assert words in error.message


def test_validate_checks_the_system_text_too() -> None:
    error = load_error(unit_text("{{ text }}", system="{{ lipsum.__globals__ }}"))
    assert (error.spec_code, error.field) == ("S023", "prompt.system")


def test_a_template_that_fails_on_its_own_few_shot_inputs_is_refused() -> None:
    error = load_error(unit_text("{{ text.split()[5].upper() }}"))
    assert error.spec_code == "S029"
    assert "few-shot example 0" in error.message


@pytest.mark.parametrize(
    "template",
    [
        "Text: {{ text }}",
        "{{ unit.name }}: {{ text | trim | truncate(2000) }} ({{ text | length }})",
        "{% if terms %}Terms: {% for t in terms %}{{ t.text }} ({{ t.category }})"
        "{% if not loop.last %}, {% endif %}{% endfor %}{% endif %}{{ text }}",
        "{{ '{{' }} literal {{ '}}' }} {{ text.split() | join(' ') | upper }}",
        "{% for key, value in unit.output.properties.items() %}{{ key }} {% endfor %}{{ text }}",
        "{% set words = text.split() %}{{ words | length }} {{ words | first }} {{ text }}",
        "{% for i in range(3) %}{{ loop.cycle('a', 'b') }}{% endfor %} {{ text ~ '!' }}",
    ],
)
def test_ordinary_templates_still_load_and_render(template: str) -> None:
    unit = UnitSpec.from_text(unit_text(template))
    messages = render_messages(unit, "Total: 12 USD")
    assert messages[-1]["role"] == "user"
    assert messages[1]["content"] != ""


def test_the_shipped_template_renders_exactly_as_before() -> None:
    unit = UnitSpec.from_text(FIND_TOTAL_YAML)
    messages = render_messages(unit, "Total: 12 USD")
    assert messages == [
        {"role": "system", "content": "Reply with the invoice total as JSON."},
        {"role": "user", "content": "Text: Total: 10 USD"},
        {"role": "assistant", "content": '{"amount":10,"currency":"USD"}'},
        {"role": "user", "content": "Text: See you on Monday."},
        {"role": "assistant", "content": '{"amount":null,"currency":null}'},
        {"role": "user", "content": "Text: Total: 12 USD"},
    ]


# -- harmless at run time, even with the load check bypassed --------------------------------


@pytest.mark.parametrize("name", sorted(EXPLOITS))
def test_rendering_an_exploit_runs_no_code(name: str, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    unit = bypassed(EXPLOITS[name].replace("MARKER", str(marker)))
    with pytest.raises(jinja2.TemplateError):  # SecurityError or UndefinedError, never a shell
        render_messages(unit, "Total: 12 USD")
    assert not marker.exists()


def test_the_exploit_in_the_system_text_runs_no_code_either(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    unit = bypassed("{{ text }}", system=EXPLOITS["lipsum"].replace("MARKER", str(marker)))
    with pytest.raises(jinja2.TemplateError):
        render_messages(unit, "x")
    assert not marker.exists()


def test_templates_see_no_global_but_a_bounded_range() -> None:
    for name in ("lipsum", "cycler", "joiner", "namespace", "dict"):
        with pytest.raises(jinja2.UndefinedError):
            render_template(compiled_template(f"{{{{ {name} }}}}"))
    assert render_template(compiled_template("{{ range(3) | list }}")) == "[0, 1, 2]"
    with pytest.raises(jinja2.exceptions.SecurityError, match="range"):
        render_template(compiled_template(f"{{{{ range({LIMITS.template_loop_items + 1}) }}}}"))


@pytest.mark.parametrize("template", [NESTED_10K, NESTED_100K])
def test_nested_loops_fail_fast_with_bounded_memory(template: str) -> None:
    unit = bypassed(template)
    tracemalloc.start()
    try:
        began = time.perf_counter()
        raised = within(10, lambda: render_messages(unit, "Total: 12 USD"))
        elapsed = time.perf_counter() - began
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(raised, jinja2.exceptions.SecurityError)
    assert "AAU_MAX_TEMPLATE_LOOP_ITEMS" in str(raised)
    assert elapsed < 5
    assert peak < 64 * 2**20


@pytest.mark.parametrize(
    "template",
    [
        "{% for i in range(9000) %}{{ text }}{% endfor %}",  # each loop fine, the output not
        "{{ 'x' * 100000000 }}",
        "{{ 2 ** 100000000 }}",
        "{% set a = text %}" + "{% set a = a ~ a %}" * 40 + "{{ a | length }}",
        "{% set a = [text, text] %}{% set a = a + a %}{% set a = a + a %}{% set a = a + a %}"
        "{% set a = a + a %}{% set a = a + a %}{% set a = a + a %}{% set a = a + a %}"
        "{% set a = a + a %}{% set a = a + a %}{% set a = a + a %}{% set a = a + a %}{{ a }}",
        "{% set a = [text] %}" + "{% set a = [a, a] %}" * 40 + "{{ a | length }}",
        "{{ text | replace('', text) }}",
        "{{ text | center(1000000000) }}",
        "{{ text | indent(1000000000) }}",
        "{{ [1] | batch(1000000000, 'x') | list }}",
        "{{ text.split() | join(text * 1000) }}",
        "{{ '%1000000000s' % text }}",
    ],
)
def test_size_bombs_are_refused_before_they_are_built(template: str) -> None:
    unit = bypassed(template)
    tracemalloc.start()
    try:
        raised = within(10, lambda: render_messages(unit, "Total: 12 USD " * 50))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(raised, jinja2.exceptions.SecurityError), raised
    assert peak < 64 * 2**20


def test_a_runtime_template_error_is_a_fallback_not_a_crash(tmp_path: Path) -> None:
    from aau.pipeline import Pipeline

    marker = tmp_path / "marker"
    unit = bypassed(EXPLOITS["lipsum"].replace("MARKER", str(marker)))
    result = Pipeline([unit], engine=False).run("Total: 12 USD")["find_total"]
    assert result.output == {"amount": 12, "currency": "USD"}  # the heuristic answered
    assert not marker.exists()


def test_the_output_limit_leaves_room_for_an_input_longer_than_it() -> None:
    text = "Lorem ipsum dolor sit amet. " * (LIMITS.template_output_chars // 10)  # ~2.8x the limit
    unit = UnitSpec.from_text(FIND_TOTAL_YAML)
    assert render_messages(unit, text)[-1]["content"] == f"Text: {text}"
    twice = bypassed("{{ text }}{{ text }}")
    with pytest.raises(jinja2.exceptions.SecurityError, match="output limit"):
        render_messages(twice, text)
