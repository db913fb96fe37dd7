"""The one rule for "these numbers are the same", shared by the grader
(grading/compare.py) and the server (server/answers/values.py); it imports only
numpy. Numbers compare within atol + rtol * |expected|, whatever their float
width (both sides as float64), and a 0-d value and a one-element array
compare as scalars, as numpy.testing.assert_allclose does."""

import numpy as np

NUMERIC_KINDS = "biuf"  # bool, signed, unsigned, float: compared by value
# The tolerance of a case that names none: the grader's cases (the registry's
# Case, which imports nothing from grader, repeats it; a test keeps them equal)
# and the server's publications when the publisher sends none.
RTOL, ATOL = 1e-5, 1e-6


def scalar_like(expected_shape: tuple, got_shape: tuple) -> bool:
    """A 0-d value against a one-element array (either way round)."""

    def size(shape):
        return int(np.prod(shape)) if shape else 1

    return (len(expected_shape) == 0 and size(got_shape) == 1) or (len(got_shape) == 0 and size(expected_shape) == 1)


def same_shape(expected_shape: tuple, got_shape: tuple) -> bool:
    return tuple(expected_shape) == tuple(got_shape) or scalar_like(expected_shape, got_shape)


def as_float64(values) -> np.ndarray:
    return np.asarray(values).astype(np.float64, copy=False)


def close_mask(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Elementwise: |got - expected| <= atol + rtol * |expected| (float64)."""
    got, expected = as_float64(got), as_float64(expected)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is nan: not close
        return np.abs(got - expected) <= atol + rtol * np.abs(expected)
