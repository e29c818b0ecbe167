"""The static cost of CEL filters (``delivery.filter_cost``): what the budget refuses and what
it lets through, on the attacks a filter can make."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookline.delivery.filter_cost import CostError, estimated_cost, parse
from hookline.delivery.filters import DEFAULT_COST_LIMIT, FilterError, check_filter, compiled
from tests.support.filters import TEN, nested

EVERYDAY = [
    'event.type == "call.completed" && event.data.call_status == "completed"',
    '"vip" in event.data.tags',
    'event.data.tags.exists(t, t.startsWith("vip"))',
    'event.data.tags.all(t, t.contains("lead")) || has(event.data.company)',
    'event.data.email.matches("^[a-z]+@example\\\\.com$")',
    "size(event.data.notes) > 3 ? event.data.first_name == 'Ada' : false",
    'event.data.tags.exists_one(t, t == "x") && {"a": 1}.all(k, k == "a")',
    "[1, 2, 3].map(x, x * 2).filter(y, y > 2).size() == 2",
]

ATTACKS = [
    nested(8),  # the issue's: 10^8 iterations
    nested(6, "1", "map"),  # 10^6 elements, copied as they grow
    "event.data.tags.map(t, t)",  # quadratic copying over a list as long as the event
    "event.data.tags.filter(t, true).size() > 0",
    "event.data.tags.all(a, event.data.tags.all(b, a == b))",  # event x event
    'event.data.notes.matches("(a{100}){100}")',  # a regex compiled ten thousand times over
    "event.data.notes.matches(event.data.company)",  # a pattern from the event
    nested(3, "event.data.notes + event.data.notes + event.data.notes", "map")
    + '.all(s, s.contains("x"))',  # strings grown by concatenation
    nested(4, 'event.data.notes.contains("zz")'),
    TEN.replace("]", "," + ",".join(["9"] * 300) + "]")
    + ".all(a, "
    + TEN
    + ".all(b, "
    + TEN
    + ".all(c, "
    + TEN
    + ".all(d, true))))",  # a large list literal
    "[{'k': "
    + " + ".join(["event.data.notes"] * 8)
    + "}['k']].exists(s, "
    + nested(3, "s + s", "map")
    + ".size() > 0)",  # a grown string passed through a map's value
]


@pytest.mark.parametrize("expression", EVERYDAY)
def test_everyday_filters_are_within_the_budget(expression: str) -> None:
    compiled(expression)
    assert check_filter(expression) == expression


@pytest.mark.parametrize("expression", ATTACKS)
def test_costly_filters_are_refused_naming_their_cost(expression: str) -> None:
    compiled(expression)  # valid CEL: only the budget refuses them
    with pytest.raises(FilterError, match="exceeds the budget"):
        check_filter(expression)


def test_each_nesting_level_multiplies_the_cost_and_five_fit() -> None:
    costs = [estimated_cost(nested(levels)) for levels in range(1, 9)]
    assert all(later >= 9 * earlier for earlier, later in itertools.pairwise(costs))
    assert costs[4] <= DEFAULT_COST_LIMIT < costs[5]


def test_deep_nesting_is_refused_before_anything_runs() -> None:
    with pytest.raises(CostError, match="nested too deeply"):
        estimated_cost("(" * 200 + "1" + ")" * 200)
    with pytest.raises(FilterError):
        check_filter("!" * 1000 + "true")


@given(st.integers(1, 6), st.integers(1, 6))
def test_more_iterations_never_cost_less(levels: int, more: int) -> None:
    assert estimated_cost(nested(levels)) < estimated_cost(nested(levels + more))
    longer = TEN.replace("]", ",10]")
    assert estimated_cost(nested(levels)) < estimated_cost(nested(levels).replace(TEN, longer))


@given(st.text(max_size=60))
def test_any_text_is_costed_or_refused_never_crashes(text: str) -> None:
    try:
        assert estimated_cost(text) >= 1
    except CostError:
        pass


def test_the_parser_reads_every_literal_form() -> None:
    for expression in ('b"ab"', "r'a\\b'", "1u", "0x1F", "1e3", '"""x"""', "-1.5", "null"):
        assert parse(expression)[0] in ("lit", "unary")
