"""Submitted values: decode mugrade's `_encoded_type` JSON under limits, and
compare a submitted value with the published one.

Wire format (the mugrade protocol): dicts and lists recursively; numpy arrays as
{"_encoded_type": "np.ndarray", "data": nested list}; datetimes and numpy
types as {"_encoded_type": "datetime"|"type", "data": str}; scalars plain.
A value that is not valid under this format is a `BadValue` (HTTP 400);
a valid value of the wrong structure is simply incorrect, with a reason.
"""

import json
import math
from dataclasses import dataclass

import numpy as np

from grader.shipped.tolerance import NUMERIC_KINDS, close_mask, same_shape


class BadValue(ValueError):
    """A request body that is not a well-formed encoded value (HTTP 400)."""


@dataclass(frozen=True)
class Tagged:
    """A datetime or numpy type: compared by its string form."""

    kind: str
    data: str


@dataclass(frozen=True)
class AnswerVerdict:
    correct: bool
    reason: str = ""


def parse(body: bytes, max_depth: int, max_elements: int):
    """Decode a request body into plain values, numpy arrays and `Tagged`."""
    if not body:
        raise BadValue("empty body: send the encoded value as JSON")
    try:
        raw = json.loads(body.decode("utf-8"))  # UTF-8 only: no UTF-16 bodies hiding NUL bytes
    except RecursionError:
        raise BadValue(f"body nests deeper than {max_depth} levels") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise BadValue(f"body is not valid JSON ({e.__class__.__name__}: {e})"[:300]) from None
    return decode(raw, max_depth, max_elements)


def decode(raw, max_depth: int, max_elements: int):
    """Decode already-parsed JSON (see `parse`)."""
    return _decode(raw, 0, max_depth, [max_elements, max_elements])  # [left, limit]


def _decode(obj, depth, max_depth, budget):
    if depth > max_depth:
        raise BadValue(f"body nests deeper than {max_depth} levels")
    if isinstance(obj, list):
        return [_decode(x, depth + 1, max_depth, budget) for x in obj]
    if isinstance(obj, dict):
        if "_encoded_type" in obj:
            return _decode_tagged(obj, budget)
        return {k: _decode(v, depth + 1, max_depth, budget) for k, v in obj.items()}
    if isinstance(obj, int) and not isinstance(obj, bool):
        _check_int(obj)
    return obj  # str, int, float, bool, None


def _check_int(x: int):
    """JSON integers are unbounded; one beyond float range would break the comparison."""
    try:
        float(x)
    except OverflowError:
        raise BadValue(
            f"a number in the body has {len(str(abs(x)))} digits, beyond the range of a "
            "64-bit float; send numbers as floats or arrays"
        ) from None


def _decode_tagged(obj, budget):
    kind, data = obj.get("_encoded_type"), obj.get("data")
    if kind == "np.ndarray":
        return _decode_array(data, budget)
    if kind in ("datetime", "type"):
        if not isinstance(data, str):
            raise BadValue(f"_encoded_type {kind!r} needs a string 'data' field")
        return Tagged(kind, data)
    raise BadValue(f"unknown _encoded_type {kind!r}: use np.ndarray, datetime or type")


def declared_shape(data) -> tuple:
    """The shape a nested list claims by its first item at each level: read in
    time proportional to its depth, before numpy walks (and copies) it all."""
    shape = []
    while isinstance(data, list):
        shape.append(len(data))
        data = data[0] if data else None
    return tuple(shape)


def _decode_array(data, budget):
    if not isinstance(data, (list, int, float)):
        raise BadValue("np.ndarray 'data' must be a nested list of numbers")
    shape = declared_shape(data)
    if math.prod(shape) > budget[0]:
        raise _over_budget(budget, shape)
    try:
        arr = np.array(data)
    except (ValueError, TypeError, RecursionError):
        raise BadValue("np.ndarray 'data' is ragged or not numeric: send a rectangular nested list") from None
    if arr.dtype.kind not in NUMERIC_KINDS:
        raise BadValue(f"np.ndarray 'data' holds {arr.dtype} values; only numbers and booleans are allowed")
    budget[0] -= arr.size
    if budget[0] < 0:
        raise _over_budget(budget, arr.shape)
    return arr


def _over_budget(budget, shape) -> BadValue:
    return BadValue(
        f"arrays in the body have more than {budget[1]} elements in total (one of shape "
        f"{tuple(shape)}); submit smaller values"
    )


def compare(expected, got, rtol: float, atol: float, path: str = "value") -> AnswerVerdict:
    """Correct when `got` has the structure of `expected` and its numbers are close."""
    if isinstance(expected, np.ndarray):
        return _compare_arrays(expected, got, rtol, atol, path)
    if isinstance(expected, list):
        if not isinstance(got, list):
            return AnswerVerdict(False, f"{path}: expected a list, got {_kind(got)}")
        if len(got) != len(expected):
            return AnswerVerdict(False, f"{path}: expected {len(expected)} items, got {len(got)}")
        return _first_wrong((compare(e, g, rtol, atol, f"{path}[{i}]") for i, (e, g) in enumerate(zip(expected, got))))
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            return AnswerVerdict(False, f"{path}: expected a dict with keys {sorted(expected)}")
        return _first_wrong((compare(expected[k], got[k], rtol, atol, f"{path}[{k!r}]") for k in expected))
    if _is_number(expected):
        if isinstance(got, np.ndarray) and got.size == 1 and got.dtype.kind in "iuf":
            got = got.reshape(()).item()  # a one-element array where a number was published
        if not _is_number(got):
            return AnswerVerdict(False, f"{path}: expected a number, got {_kind(got)}")
        if bool(close_mask(np.float64(got), np.float64(expected), rtol, atol)) or _same_nan(got, expected):
            return AnswerVerdict(True)
        return AnswerVerdict(False, f"{path}: wrong number (tolerance rtol={rtol:g}, atol={atol:g})")
    if type(got) is not type(expected) or got != expected:
        return AnswerVerdict(False, f"{path}: wrong {_kind(expected)}")
    return AnswerVerdict(True)


def _compare_arrays(expected, got, rtol, atol, path):
    if _is_number(got) and expected.size == 1:
        got = np.asarray(got)  # a number where a 0-d or one-element array was published
    if not isinstance(got, np.ndarray):
        return AnswerVerdict(False, f"{path}: expected an np.ndarray, got {_kind(got)}")
    if not same_shape(expected.shape, got.shape):
        return AnswerVerdict(False, f"{path}: expected shape {expected.shape}, got {got.shape}")
    got = got.reshape(expected.shape)
    if expected.dtype.kind == "b":
        ok = got.dtype.kind == "b" and bool(np.array_equal(got, expected))
    else:
        ok = _all_close(got.astype(np.float64, copy=False), expected.astype(np.float64, copy=False), rtol, atol)
    if ok:
        return AnswerVerdict(True)
    return AnswerVerdict(False, f"{path}: values differ beyond tolerance (rtol={rtol:g}, atol={atol:g})")


def _all_close(got, exp, rtol, atol) -> bool:
    """np.allclose(..., equal_nan=True) at a third of its cost on the small arrays
    of a submission (this runs once per request on the hot path)."""
    ok = (close_mask(got, exp, rtol, atol) & np.isfinite(exp)) | (got == exp)
    if ok.all():
        return True
    return bool((ok | (np.isnan(got) & np.isnan(exp))).all())


def _first_wrong(verdicts):
    for v in verdicts:
        if not v.correct:
            return v
    return AnswerVerdict(True)


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _same_nan(a, b):
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


def _kind(x):
    if isinstance(x, Tagged):
        return x.kind
    if isinstance(x, np.ndarray):
        return "an np.ndarray"
    return {list: "a list", dict: "a dict", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(x), "a number"
    )
