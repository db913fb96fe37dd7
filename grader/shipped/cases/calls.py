"""One op call as data: how a case describes what it computes (registry.Call),
and how the worker evaluates such a call on other inputs.

The grader proposes smaller inputs for a failing case (its "Smallest failing
input" line) as a spec of plain data: per candidate the call's kind and op,
its inputs and out_grads as nested lists with their dtype, and its keyword
arguments. The sandboxed worker evaluates every candidate with this module,
on the reference and on the student's library alike, so both see the same
code; the grader decides what fails. Runs inside the worker: numpy only.
"""
import numpy as np

from .backward import gradient_record, second_order_record
from .forward import forward_value


def _array(doc):
    return np.array(doc["data"], dtype=np.dtype(doc["dtype"]))


def _kwargs(doc):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in doc.items()}


def evaluate(ndl, entry):
    """The value of one candidate (a spec entry) on the library `ndl`, in
    the structure the case it shrinks returns (its check compares them)."""
    arrays = [_array(a) for a in entry["inputs"]]
    out_grads = [_array(g) for g in entry.get("out_grads", [])]
    kwargs = _kwargs(entry.get("kwargs", {}))
    if entry["kind"] == "forward":
        return forward_value(ndl, entry["op"], arrays, kwargs)

    def given(k, shape):  # the spec's k-th out_grad (the grader shaped it; a wrong gradient shape raises)
        return out_grads[k]

    if entry["kind"] == "grad1":
        return gradient_record(ndl, entry["op"], arrays, given, numeric=False, **kwargs)
    if entry["kind"] == "grad2":
        return second_order_record(ndl, entry["op"], arrays, given, **kwargs)
    raise ValueError(f"unknown call kind {entry['kind']!r}")
