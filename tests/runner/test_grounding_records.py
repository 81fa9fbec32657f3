"""Grounding a records answer: each object of a list grounded leaf by leaf, under its own key."""

from __future__ import annotations

import pytest

from aau.errors import UngroundedOutput
from aau.runner.grounding import ground_output

TEXT = (
    "7.1 Late delivery: EUR 500 per day of delay. 7.2 A breach of confidentiality costs "
    "USD 20,000. 7.3 A missed milestone costs EUR 500."
)


def _shown(spans: dict[str, tuple[int, int]], text: str = TEXT) -> dict[str, str]:
    return {key: text[a:b] for key, (a, b) in spans.items()}


def test_each_record_is_grounded_leaf_by_leaf_under_its_path() -> None:
    output = {
        "clauses": [
            {"amount": 500, "currency": "EUR", "trigger": "per day of delay"},
            {"amount": 20000, "currency": "USD", "trigger": None},
        ]
    }
    spans = ground_output("unit", TEXT, output)
    assert _shown(spans) == {
        "clauses[0].amount": "500",
        "clauses[0].currency": "EUR",
        "clauses[0].trigger": "per day of delay",
        "clauses[1].amount": "20,000",
        "clauses[1].currency": "USD",
    }


def test_a_repeated_value_grounds_each_record_in_its_own_place() -> None:
    # Both clauses say "EUR 500": the second is found after the first, not on top of it.
    output = {"clauses": [{"amount": 500, "currency": "EUR"}, {"amount": 500, "currency": "EUR"}]}
    spans = ground_output("unit", TEXT, output)
    assert spans["clauses[0].amount"][0] < spans["clauses[1].amount"][0]
    assert TEXT[slice(*spans["clauses[1].amount"])] == "500"
    assert spans["clauses[1].amount"][0] > TEXT.index("milestone")
    assert abs(spans["clauses[1].currency"][0] - spans["clauses[1].amount"][0]) <= 4


def test_an_invented_value_in_a_record_is_ungrounded_at_its_path() -> None:
    output = {"clauses": [{"amount": 500, "currency": "EUR"}, {"amount": 750, "currency": "USD"}]}
    with pytest.raises(UngroundedOutput) as caught:
        ground_output("unit", TEXT, output)
    assert caught.value.json_path == "$.clauses[1].amount"
    assert "$.clauses[1].amount = 750 does not occur in the text" in str(caught.value)


def test_max_distance_holds_within_each_record() -> None:
    text = "Penalty: USD 20,000." + " " * 300 + "Elsewhere: EUR 40."
    output = {"clauses": [{"amount": 20000, "currency": "EUR"}]}
    with pytest.raises(UngroundedOutput) as caught:
        ground_output("unit", text, output, max_distance=50)
    assert caught.value.json_path == "$.clauses[0].currency"
    euro = text.index("EUR")
    assert ground_output("unit", text, output)["clauses[0].currency"] == (euro, euro + 3)


def test_an_empty_list_and_flat_fields_beside_it_ground_as_before() -> None:
    text = "Contract 2024-17, total EUR 1,250.00. No penalties apply."
    flat = {"amount": 1250.0, "currency": "EUR"}
    assert ground_output("unit", text, {**flat, "clauses": []}) == ground_output("unit", text, flat)
    assert _shown(ground_output("unit", text, flat), text) == {
        "amount": "1,250.00",
        "currency": "EUR",
    }


def test_lists_of_scalars_and_deeper_objects_are_left_alone() -> None:
    output = {"tags": ["invented"], "clauses": [{"amount": 500, "extra": {"x": "invented"}}]}
    assert set(ground_output("unit", TEXT, output)) == {"clauses[0].amount"}
