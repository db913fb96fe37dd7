"""The server's value checker: it must accept the published value and reject wrong ones."""

import json

import numpy as np
import pytest

from grader.server.answers.values import BadValue, Tagged, compare, parse
from grader.shipped import tolerance
from grader.shipped.cases.registry import Case


def decoded(x):
    return parse(json.dumps(x).encode(), 32, 10_000)


ARR = {"_encoded_type": "np.ndarray", "data": [[1.0, 2.0], [3.0, 4.0]]}


def test_the_cases_default_tolerance_is_the_one_in_grader_tolerance():
    """The registry's Case cannot import it (the cases run beside student code): it repeats the value."""
    case = Case("x", "forward", "line", "what")
    assert (case.rtol, case.atol) == (tolerance.RTOL, tolerance.ATOL)


@pytest.mark.parametrize(
    "expected, got",
    [
        (ARR, ARR),
        (ARR, {"_encoded_type": "np.ndarray", "data": [[1.0, 2.0], [3.0, 4.00001]]}),
        (3, 3.0),
        ([1.5, {"a": "x"}], [1.5, {"a": "x"}]),
        ({"_encoded_type": "type", "data": "dtype('float32')"}, {"_encoded_type": "type", "data": "dtype('float32')"}),
        (
            {"_encoded_type": "np.ndarray", "data": [True, False]},
            {"_encoded_type": "np.ndarray", "data": [True, False]},
        ),
        (None, None),
    ],
)
def test_matching_values_are_correct(expected, got):
    assert compare(decoded(expected), decoded(got), 1e-5, 1e-5).correct


@pytest.mark.parametrize(
    "expected, got",
    [
        (ARR, {"_encoded_type": "np.ndarray", "data": [[1.0, 2.0], [3.0, 4.001]]}),  # 0.025% off
        (ARR, {"_encoded_type": "np.ndarray", "data": [[1.0, 3.0], [2.0, 4.0]]}),  # transposed
        (ARR, {"_encoded_type": "np.ndarray", "data": [1.0, 2.0, 3.0, 4.0]}),  # reshaped
        (ARR, [[1.0, 2.0], [3.0, 4.0]]),  # not an array
        (3, 3.001),
        (3, True),
        (True, 1),
        ([1.5, 2.5], [1.5]),
        ({"a": 1}, {"b": 1}),
        ("relu", "Relu"),
        ({"_encoded_type": "type", "data": "dtype('float32')"}, {"_encoded_type": "type", "data": "dtype('float64')"}),
        ({"_encoded_type": "np.ndarray", "data": [True, False]}, {"_encoded_type": "np.ndarray", "data": [1, 0]}),
        ({"_encoded_type": "np.ndarray", "data": [1.0]}, {"_encoded_type": "np.ndarray", "data": [float("nan")]}),
    ],
)
def test_wrong_values_are_incorrect(expected, got):
    verdict = compare(decoded(expected), decoded(got), 1e-5, 1e-5)
    assert not verdict.correct and verdict.reason.startswith("value")


def test_tolerances_are_honoured():
    exp, got = decoded(1.0), decoded(1.001)
    assert not compare(exp, got, 1e-5, 1e-5).correct
    assert compare(exp, got, 1e-2, 0.0).correct


def test_reason_names_the_path_to_the_wrong_part():
    verdict = compare(decoded([1, {"w": ARR}]), decoded([1, {"w": 2}]), 1e-5, 1e-5)
    assert verdict.reason == "value[1]['w']: expected an np.ndarray, got a number"


def test_decoding_makes_arrays_and_tags():
    value = decoded([ARR, {"_encoded_type": "datetime", "data": "2026-01-01T00:00:00"}])
    assert isinstance(value[0], np.ndarray) and value[0].shape == (2, 2)
    assert value[1] == Tagged("datetime", "2026-01-01T00:00:00")


@pytest.mark.parametrize("body", [b"", b"nul", b"[" * 100 + b"]" * 100, b'{"_encoded_type": 3}'])
def test_bad_bodies_raise(body):
    with pytest.raises(BadValue):
        parse(body, 32, 100)


SPECIAL = [0.0, 1.0, -1.0, 1e-6, 1e6, np.inf, -np.inf, np.nan, 1.00001, 0.99999, 1.0000101, 2e-5, -2e-5]


@pytest.mark.parametrize("rtol, atol", [(1e-5, 1e-5), (0.0, 0.0), (1e-2, 0.0)])
def test_fast_closeness_agrees_with_numpy_allclose(rtol, atol):
    from grader.server.answers.values import _all_close

    for a in SPECIAL:
        for b in SPECIAL:
            x, y = np.array([a]), np.array([b])
            assert _all_close(x, y, rtol, atol) == np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True), (a, b)
    rng = np.random.default_rng(0)
    for _ in range(500):
        e = rng.standard_normal((3, 4))
        g = e + rng.standard_normal((3, 4)) * 10 ** rng.uniform(-8, -2)
        assert _all_close(g, e, rtol, atol) == np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)


# The server compares as the grader does (grader/shipped/tolerance.py): a 0-d value and a
# one-element array are the same number, and float width does not matter.
@pytest.mark.parametrize(
    "published, sent",
    [
        (np.float64(0.5), np.array([0.5], dtype=np.float32)),
        (np.array([[0.5]]), np.float64(0.5)),
        (0.5, np.array([0.5])),
        (np.array([0.1, 0.2], dtype=np.float64), np.array([0.1, 0.2], dtype=np.float32)),
    ],
)
def test_scalar_like_values_and_float_widths_compare_as_the_grader_does(published, sent):
    published = np.asarray(published) if isinstance(published, np.generic) else published
    sent = np.asarray(sent) if isinstance(sent, np.generic) else sent
    assert compare(published, sent, 1e-5, 1e-5).correct


@pytest.mark.parametrize(
    "published, sent",
    [
        (np.array(0.5), np.array([0.5, 0.5])),
        (np.array([0.5]), np.array([0.6])),
        (1.0, np.array([1.0, 1.0])),
        (100.0, 100.2),  # 2e-3 off: beyond atol + rtol * |expected| = 1e-5 + 1e-3
    ],
)
def test_what_the_shared_rule_still_refuses(published, sent):
    assert not compare(published, sent, 1e-5, 1e-5).correct
