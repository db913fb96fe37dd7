"""Topological-sort feedback names the function and the nodes: which are
missing, which repeated, which out of order, described by the reference's
graph; a hidden case's names none of them (no digits at all)."""

import pytest

from grader.shipped.cases.registry import Case
from grader.shipped.checks import TOPO_FUNCTION, check, topo_problem

INPUTS = [[], [0], [1], [0, 2]]  # 0 a leaf, 1 from 0, 2 from 1, 3 from 0 and 2
WANT = [0, 1, 2, 3]


def test_the_function_is_the_one_the_cases_call():
    assert TOPO_FUNCTION == "find_topo_sort"


@pytest.mark.parametrize("secret", ["public", "drawn"])
def test_missing_nodes_are_named_with_their_inputs(secret):
    message = topo_problem(WANT, INPUTS, [0, 1], secret)
    assert message.startswith("find_topo_sort")
    assert "2 nodes missing" in message and "it has 2 nodes, the graph 4" in message
    assert "node 2 (made from node 1)" in message and "node 3 (made from nodes 0, 2)" in message
    assert "node 0" not in message.split(":", 2)[2].replace("nodes 0", "")


@pytest.mark.parametrize("secret", ["public", "drawn"])
def test_repeated_nodes_are_named(secret):
    message = topo_problem(WANT, INPUTS, [0, 1, 0, 2, 3, 2], secret)
    assert "find_topo_sort returned node 0 (a leaf); node 2 (made from node 1) twice" in message
    assert "topo_sort_dfs" in message


def test_out_of_order_names_the_node_and_its_input():
    message = topo_problem(WANT, INPUTS, [1, 0, 2, 3])
    assert message == (
        "find_topo_sort: node 1 (made from node 0) comes before its input 0: not a topological "
        "order (nodes are numbered in the order the case created them)"
    )


def test_only_public_feedback_explains_the_numbering():
    assert "numbered" in topo_problem(WANT, INPUTS, [0, 1, 3])
    assert "numbered" not in topo_problem(WANT, INPUTS, [0, 1, 3], "drawn")


@pytest.mark.parametrize(
    "order, kind",
    [
        ([0, 1], "missing"),
        ([0, 1, 1, 2, 3], "twice"),
        ([1, 0, 2, 3], "before one of its inputs"),
        ([0, -1, 2, 3], "not in"),
    ],
)
def test_hidden_feedback_names_the_function_but_no_node(order, kind):
    message = topo_problem(WANT, INPUTS, order, "hidden")
    assert message.startswith("find_topo_sort") and kind in message
    assert not any(ch.isdigit() for ch in message), message


def test_the_check_passes_the_message_on():
    case = Case(
        name="topo_sort_x",
        question="topo_sort",
        contract="topo_order",
        description="d",
        fn=lambda ndl, sm: None,
        check="topo",
    )
    verdict = check(case, {"order": WANT, "inputs": INPUTS}, {"order": [0, 1, 3], "inputs": INPUTS})
    assert not verdict.passed and "node 2 (made from node 1)" in verdict.message
