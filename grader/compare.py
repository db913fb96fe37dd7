"""Compare a worker's value with the reference's, in the trusted parent.

Values are plain data decoded from JSON and `.npy` files: numbers, plain
ndarrays, lists and dicts. Every function returns a Verdict: passed or not,
and a message a student can act on (shapes, dtypes, errors against the
tolerance). Hidden cases never show expected values.
"""
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str


PASS = Verdict(True, "")


class Mismatch(Exception):
    """Raised inside the recursive comparison; the message names the path."""


def describe(a):
    if isinstance(a, np.ndarray):
        return f"array of shape {a.shape} and dtype {a.dtype}"
    return type(a).__name__


def _at(path):
    return f" at {path}" if path else ""


def _check_array(expected, actual, path, case, hidden):
    if expected.ndim == 0 and type(actual) in (int, float):
        actual = np.asarray(actual)  # a 0-d result given as a plain number
    if not isinstance(actual, np.ndarray):
        raise Mismatch(f"expected an array{_at(path)}, got a {describe(actual)}")
    if actual.shape != expected.shape:
        want = "" if hidden else f", expected {expected.shape}"
        raise Mismatch(f"wrong shape{_at(path)}: got {actual.shape}{want}")
    # Floats must stay floats and integers integers; the width must match
    # only where the homework fixes it (parse_mnist, nn_epoch weights).
    kinds = {"f": "f", "i": "iu", "u": "iu", "b": "b"}
    if case.exact_dtype and actual.dtype != expected.dtype or \
            actual.dtype.kind not in kinds.get(expected.dtype.kind, expected.dtype.kind):
        raise Mismatch(f"wrong dtype{_at(path)}: got {actual.dtype}, expected {expected.dtype}")
    _check_close(expected.astype(np.float64), actual.astype(np.float64), path, case, hidden)


def _check_close(expected, actual, path, case, hidden):
    if not np.all(np.isfinite(actual)):
        raise Mismatch(f"non-finite values (nan or inf){_at(path)}")
    abs_err = np.abs(actual - expected)
    allowed = case.atol + case.rtol * np.abs(expected)
    if np.all(abs_err <= allowed):
        return
    worst = np.unravel_index(np.argmax(abs_err - allowed), abs_err.shape) if abs_err.ndim else ()
    rel = abs_err[worst] / max(abs(float(expected[worst])), 1e-300)
    detail = "" if hidden else f"; at index {tuple(int(i) for i in worst)} expected " \
                               f"{float(expected[worst]):.6g}, got {float(actual[worst]):.6g}"
    raise Mismatch(f"wrong values{_at(path)}: max abs error {float(abs_err.max()):.3g}, "
                   f"rel error {rel:.3g} > tolerance (rtol {case.rtol:g}, atol {case.atol:g}); "
                   f"{int(np.sum(abs_err > allowed))} of {abs_err.size} entries off{detail}")


def _compare(expected, actual, path, case, hidden):
    if isinstance(expected, np.ndarray):
        return _check_array(expected, actual, path, case, hidden)
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            raise Mismatch(f"expected a dict with keys {sorted(expected)}{_at(path)}, got {describe(actual)}")
        for key in expected:
            _compare(expected[key], actual[key], f"{path}[{key!r}]", case, hidden)
        return
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            size = f" of length {len(actual)}" if isinstance(actual, list) else ""
            raise Mismatch(f"expected a list of {len(expected)} values{_at(path)}, "
                           f"got a {describe(actual)}{size}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            _compare(e, a, f"{path}[{i}]", case, hidden)
        return
    # A number: a bool must match a bool; ints and floats compare by value.
    if isinstance(actual, bool) != isinstance(expected, bool) or not isinstance(actual, (int, float)):
        raise Mismatch(f"expected a number{_at(path)}, got a {describe(actual)}")
    _check_close(np.array(float(expected)), np.array(float(actual)), path, case, hidden)


def compare_close(case, expected, actual):
    try:
        _compare(expected, actual, "", case, case.hidden)
    except Mismatch as m:
        return Verdict(False, str(m))
    return PASS
