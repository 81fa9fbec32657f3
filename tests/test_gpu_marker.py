"""The ``gpu`` marker is opt-in: a marked test is skipped unless pytest runs with ``--gpu``.

Each case runs pytest in-process (``pytester``) on a tiny test file, with a conftest that takes
its ``--gpu`` option and its skip hook from the repository's ``tests/conftest.py``.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

TWO_TESTS = """
import pytest


@pytest.mark.gpu
def test_on_the_gpu():
    pass


def test_anywhere():
    pass
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A folder with one gpu-marked test, one plain test and the repository's gpu hooks."""
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "markers =\n    gpu: needs a GPU; run with --gpu\n"
    )
    pytester.makeconftest(
        "from tests.conftest import pytest_addoption, pytest_collection_modifyitems  # noqa\n"
    )
    pytester.makepyfile(test_two=TWO_TESTS)
    return pytester


def test_gpu_marked_test_is_skipped_without_the_option(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-p", "no:cacheprovider", "--strict-markers", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED *test_two.py:* needs a GPU; pass --gpu to run it"])


def test_gpu_marked_test_runs_with_the_option(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-p", "no:cacheprovider", "--strict-markers", "--gpu", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_on_the_gpu PASSED*"])


def test_gpu_option_and_marker_expression_select_only_the_gpu_tests(
    suite: pytest.Pytester,
) -> None:
    result = suite.runpytest("-p", "no:cacheprovider", "--strict-markers", "--gpu", "-m", "gpu")
    result.assert_outcomes(passed=1, deselected=1)
