"""The case registry and the written contract agree: every scored case names
a contract line, every advisory one the line it goes beyond, every line is
exercised, and the handout's own docstrings promise the same thing."""

import ast
import dataclasses

import pytest

from grader import REFERENCE
from grader.shipped.cases import BEYOND, CASES, CONTRACT, RegistryError, _validate, cases_for
from grader.shipped.cases.registry import Case

# contract line -> (file under reference/, class or function, words its docstring must contain)
DOCSTRINGS = {
    "summation": ("python/needle/ops/ops_mathematic.py", "Summation", "tuple"),
    "transpose": ("python/needle/ops/ops_mathematic.py", "Transpose", "the last two by default"),
    "matmul": ("python/needle/ops/ops_mathematic.py", "MatMul", "2-D side"),
    "parse_mnist_dtypes": ("apps/simple_ml.py", "parse_mnist", "Values should be of type np.int8"),
    "softmax_loss_value": ("apps/simple_ml.py", "softmax_loss", "mean"),
    "nn_epoch": ("apps/simple_ml.py", "nn_epoch", "in order"),
    "topo_order": ("python/needle/autograd.py", "find_topo_sort", "post-order"),
}
# What the docstrings must not promise any more (it is beyond the contract).
NOT_PROMISED = {
    "parse_mnist_dtypes": "np.uint8",
    "summation": "an int",
    "matmul": "broadcast as in numpy.matmul",
}


def _docstring(rel, name):
    tree = ast.parse((REFERENCE / rel).read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name:
            return ast.get_docstring(node) or ""
    raise AssertionError(f"{rel}: no {name}")


def test_scored_cases_name_contract_lines_and_advisories_name_what_they_go_beyond():
    for case in CASES:
        table = BEYOND if case.advisory else CONTRACT
        assert case.contract in table, case.name


def test_every_contract_line_is_exercised_by_a_scored_case():
    used = {c.contract for c in CASES if not c.advisory}
    assert used == set(CONTRACT), f"contract lines no scored case checks: {set(CONTRACT) - used}"


def test_every_question_has_scored_cases_and_each_advisory_has_no_weightless_twin():
    for key in {c.question for c in CASES}:
        assert any(not c.advisory for c in cases_for(key)), key


@pytest.mark.parametrize("line", sorted(DOCSTRINGS))
def test_handout_docstrings_say_what_the_contract_says(line):
    rel, name, words = DOCSTRINGS[line]
    doc = _docstring(rel, name)
    assert words in doc, f"{rel}: the docstring of {name} should say {words!r} (contract: {CONTRACT[line]})"
    if line in NOT_PROMISED:
        assert NOT_PROMISED[line] not in doc, f"{rel}: {name}'s docstring promises more than the contract"


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(contract="not_a_line"), "is not a line of CONTRACT"),
        (dict(advisory=True), "is not a line of BEYOND"),
        (dict(name="Forward bad"), "names must be unique"),
        (dict(check="exact"), "unknown question or check"),
        (dict(fn=None), "give exactly one of fn and source"),
        (dict(source="forward_nope"), "give exactly one of fn and source"),
        (dict(weight=0), "weight must be positive"),
    ],
)
def test_registry_refuses_an_inconsistent_case(change, message):
    good = next(c for c in CASES if c.question == "forward" and c.fn is not None)
    bad = dataclasses.replace(good, **change)
    with pytest.raises(RegistryError, match=message):
        _validate([bad] if change.get("name") is None else [good, bad, bad])


def test_registry_refuses_a_source_that_computes_nothing():
    good = next(c for c in CASES if c.question == "forward" and c.fn is not None)
    checker = Case(
        name="forward_z",
        question="forward",
        contract="float_width",
        description="d",
        source="forward_missing",
        check="dtype",
        advisory=True,
    )
    with pytest.raises(RegistryError, match="not a computing case"):
        _validate([good, checker])
