"""Compare a worker's value with the reference's, in the trusted parent.

Values are plain data decoded from JSON and `.npy` files: numbers, plain
ndarrays, lists and dicts. The actual value is checked against the expected
value's structure, shape and dtype kind before any arithmetic touches it, so
no value a worker can produce crashes or starves the parent. Numbers are
compared as the course compares them: within a tolerance, whatever their
float width (a 0-d value and a one-element array compare like scalars, as in
numpy.testing.assert_allclose). Every function returns a Verdict: passed or
not, and a message a student can act on.

What a message may show depends on who sees it (`secrecy`): on the
handout's fixed public inputs everything (expected against got at the
worst entry); on inputs drawn from a grading seed ("drawn") sizes, counts
and positions of the errors but no expected value, which would be the
answer for the next submission graded on the same seed; for a hidden case
only the kind of failure, never magnitudes, counts or positions, which
would let repeated submissions probe its answers.
"""

from dataclasses import dataclass

import numpy as np

from .tolerance import NUMERIC_KINDS, close_mask, same_shape


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str


PASS = Verdict(True, "")
PUBLIC, DRAWN, HIDDEN = "public", "drawn", "hidden"  # what a message may show (see above)


def secrecy(case, drawn: bool) -> str:
    return HIDDEN if case.hidden else DRAWN if drawn else PUBLIC


class Mismatch(Exception):
    """Raised inside the recursive comparison; the message names the path."""


def describe(a):
    if isinstance(a, np.ndarray):
        return f"array of shape {a.shape} and dtype {a.dtype}"
    return type(a).__name__


def _at(path):
    return f" at {path}" if path else ""


def got_part(text, secret):
    """ ", got <text>": nothing on a hidden case, where the student's code
    picks the type, shape, dtype and length it returns."""
    return "" if secret == HIDDEN else f", got {text}"


NUMERIC = NUMERIC_KINDS
INTEGER = "iu"  # signed and unsigned integer dtypes: interchangeable (see compare_dtypes)


def _as_array(actual, expected, path, secret=PUBLIC):
    """The actual value as an array shaped like `expected`, or Mismatch."""
    if type(actual) in (int, float, bool):
        actual = np.asarray(actual)  # a number where a 0-d array is expected
    if not isinstance(actual, np.ndarray):
        raise Mismatch(f"expected an array{_at(path)}{got_part(f'a {describe(actual)}', secret)}")
    if actual.dtype.kind not in NUMERIC:
        raise Mismatch(f"expected numbers{_at(path)}{got_part(f'an array of dtype {actual.dtype}', secret)}")
    if not same_shape(expected.shape, actual.shape):
        if secret == HIDDEN:
            raise Mismatch(f"wrong shape{_at(path)}")
        raise Mismatch(f"wrong shape{_at(path)}: got {actual.shape}, expected {expected.shape}")
    return actual.reshape(expected.shape)


def _check_array(expected, actual, path, case, secret):
    actual = _as_array(actual, expected, path, secret)
    rtol, atol = case.rtol, case.atol
    exact = getattr(case, "exact", 0.0)  # another assignment's Case may not have it
    if exact and actual.dtype == np.float64:
        # A float64 gradient must be as exact as float64 makes it (see the
        # case's `exact`): central differences of the forward, which student
        # code could pass off as its gradient, are never this close.
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
        rtol, atol = exact, exact * max(scale, 1e-300)
    _check_close(expected.astype(np.float64), actual.astype(np.float64), path, rtol, atol, secret)


def _check_close(expected, actual, path, rtol, atol, secret):
    if not np.all(np.isfinite(actual)):
        raise Mismatch(f"non-finite values (nan or inf){_at(path)}")
    if np.all(close_mask(actual, expected, rtol, atol)):
        return
    if secret == HIDDEN:
        raise Mismatch(f"wrong values{_at(path)}: not within the tolerance (rtol {rtol:g}, atol {atol:g})")
    abs_err = np.abs(actual - expected)
    allowed = atol + rtol * np.abs(expected)
    worst = np.unravel_index(np.argmax(abs_err - allowed), abs_err.shape) if abs_err.ndim else ()
    rel = abs_err[worst] / max(abs(float(expected[worst])), 1e-300)
    detail = f"; at index {tuple(int(i) for i in worst)} got {float(actual[worst]):.6g}"
    if secret == PUBLIC:
        detail += f", expected {float(expected[worst]):.6g}"
    raise Mismatch(
        f"wrong values{_at(path)}: max abs error {float(abs_err.max()):.3g}, "
        f"rel error {rel:.3g} > tolerance (rtol {rtol:g}, atol {atol:g}); "
        f"{int(np.sum(abs_err > allowed))} of {abs_err.size} entries off{detail}"
    )


def _compare(expected, actual, path, case, secret):
    if isinstance(expected, np.ndarray):
        return _check_array(expected, actual, path, case, secret)
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            got = got_part(describe(actual), secret)
            raise Mismatch(f"expected a dict with keys {sorted(expected)}{_at(path)}{got}")
        for key in expected:
            _compare(expected[key], actual[key], f"{path}[{key!r}]", case, secret)
        return
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            size = f" of length {len(actual)}" if isinstance(actual, list) else ""
            got = got_part(f"a {describe(actual)}{size}", secret)
            raise Mismatch(f"expected a list of {len(expected)} values{_at(path)}{got}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            _compare(e, a, f"{path}[{i}]", case, secret)
        return
    # A number: a bool must match a bool; ints and floats compare by value.
    if isinstance(actual, np.ndarray) and actual.size == 1 and actual.dtype.kind in NUMERIC:
        actual = actual.reshape(()).item()  # a one-element array where a number is expected
    if isinstance(actual, bool) != isinstance(expected, bool) or not isinstance(actual, (int, float)):
        raise Mismatch(f"expected a number{_at(path)}{got_part(f'a {describe(actual)}', secret)}")
    _check_close(np.array(float(expected)), np.array(float(actual)), path, case.rtol, case.atol, secret)


def compare_close(case, expected, actual, drawn=False):
    """Structure, shapes and values within the case's tolerance; `drawn`:
    the inputs came from a grading seed (see `secrecy`)."""
    try:
        _compare(expected, actual, "", case, secrecy(case, drawn))
    except Mismatch as m:
        return Verdict(False, str(m))
    return PASS


def _dtypes(expected, actual, path):
    if isinstance(expected, np.ndarray):
        if not isinstance(actual, np.ndarray):
            raise Mismatch(f"expected an array{_at(path)}, got a {describe(actual)}")
        if expected.dtype.kind in INTEGER:
            if actual.dtype.kind not in INTEGER:
                raise Mismatch(
                    f"dtype {actual.dtype}{_at(path)} where the handout's contract gives integers "
                    f"(any integer dtype holding these values, e.g. {expected.dtype})"
                )
        elif actual.dtype != expected.dtype:
            raise Mismatch(f"dtype {actual.dtype}{_at(path)} where the handout's contract gives {expected.dtype}")
    elif isinstance(expected, (list, dict)):
        if type(actual) is not type(expected) or len(actual) != len(expected):
            raise Mismatch(
                f"expected a {type(expected).__name__} of {len(expected)}{_at(path)}, got a {describe(actual)}"
            )
        keys = expected if isinstance(expected, dict) else range(len(expected))
        for key in keys:
            if isinstance(expected, dict) and key not in actual:
                raise Mismatch(f"missing entry {key!r}{_at(path)}")
            _dtypes(expected[key], actual[key], f"{path}[{key!r}]")


def compare_dtypes(case, expected, actual):
    """Every array has the reference's dtype: a float array exactly (float
    width included), an integer array any integer dtype. The course names
    integer labels np.int8 in one docstring and np.uint8 in the next, and
    only ever indexes with them, so their width is no part of the contract."""
    try:
        _dtypes(expected, actual, "")
    except Mismatch as m:
        return Verdict(False, str(m))
    return PASS
