"""parse_mnist's labels: the course's docstring says np.int8 ("Values should
be of type np.int8") and its tests only index with y, so any integer dtype
holding the right labels passes; X stays exactly float32."""

import json

import numpy as np
import pytest

from grader import HANDOUT
from grader.shipped.cases import BY_NAME, CONTRACT
from grader.shipped.cases.registry import Case
from grader.shipped.checks import check
from grader.shipped.compare import compare_dtypes

CASE = BY_NAME["softmax_loss_ndl_parse_mnist_dtypes"]
EXPECTED = HANDOUT / "tests" / "hw1" / "hw1_cases" / "expected"  # the committed copy


def expected():
    record = json.loads((EXPECTED / f"{CASE.name}.json").read_text())
    return [np.load(EXPECTED / node["npy"], allow_pickle=False) for node in record["value"]]


def test_the_case_is_scored_and_cites_the_course_docstring():
    assert not CASE.advisory and CASE.weight > 0
    assert "Values should be of type np.int8" in CONTRACT[CASE.contract]
    assert "uint8" not in CASE.description and "uint8" not in CONTRACT[CASE.contract]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64])
def test_integer_labels_of_any_width_pass(dtype):
    X, y = expected()
    verdict = check(CASE, [X, y], [X, y.astype(dtype)])
    assert verdict.passed, verdict.message


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_labels_fail_and_say_so(dtype):
    X, y = expected()
    verdict = check(CASE, [X, y], [X, y.astype(dtype)])
    assert not verdict.passed
    assert str(np.dtype(dtype)) in verdict.message and "integer" in verdict.message


def test_bool_labels_fail():
    X, y = expected()
    assert not check(CASE, [X, y], [X, y.astype(np.bool_)]).passed


def test_integer_labels_with_wrong_values_fail():
    X, y = expected()
    assert not check(CASE, [X, y], [X, (y + 1).astype(np.int8)]).passed


def test_images_stay_exactly_float32():
    X, y = expected()
    verdict = check(CASE, [X, y], [X.astype(np.float64), y.astype(np.int8)])
    assert not verdict.passed and "float32" in verdict.message and "float64" in verdict.message


def test_float_width_is_still_exact_for_float_arrays():
    case = Case(
        name="forward_x", question="forward", contract="negate", description="d", fn=lambda ndl, sm: None, check="dtype"
    )
    assert not compare_dtypes(case, [np.zeros(3, np.float32)], [np.zeros(3, np.float64)]).passed
    assert compare_dtypes(case, [np.zeros(3, np.uint8)], [np.zeros(3, np.int64)]).passed
