"""Selection (``aau.answers.select``): the first path reaching the threshold wins, else the most
confident valid answer."""

from __future__ import annotations

from aau.answers import Candidate, select


def test_first_path_reaching_the_threshold_wins_over_a_more_confident_later_one() -> None:
    candidates = [Candidate("primary", 0.65), Candidate("crf", 0.95)]
    assert select(candidates, threshold=0.6) == 0


def test_below_threshold_the_most_confident_valid_answer_is_delivered() -> None:
    candidates = [Candidate("primary", 0.3), Candidate("crf", 0.55), Candidate("heuristic", 0.4)]
    assert select(candidates, threshold=0.6) == 1


def test_invalid_answers_are_never_selected() -> None:
    candidates = [Candidate("primary", 0.99, is_valid=False), Candidate("crf", 0.2)]
    assert select(candidates, threshold=0.6) == 1


def test_no_valid_answer_selects_nothing() -> None:
    assert select([Candidate("primary", 0.9, is_valid=False)], threshold=0.5) is None
    assert select([], threshold=0.5) is None


def test_tie_below_threshold_goes_to_the_path_tried_first() -> None:
    candidates = [Candidate("crf", 0.4), Candidate("heuristic", 0.4)]
    assert select(candidates, threshold=0.6) == 0


def test_a_path_that_never_ran_is_simply_absent() -> None:
    assert select([Candidate("heuristic", 0.7)], threshold=0.6) == 0


def test_while_paths_remain_only_an_answer_reaching_the_threshold_is_chosen() -> None:
    weak = [Candidate("primary", 0.3), Candidate("crf", 0.55)]
    assert select(weak, threshold=0.6, is_complete=False) is None  # the run goes on
    assert select([*weak, Candidate("heuristic", 0.7)], threshold=0.6, is_complete=False) == 2
