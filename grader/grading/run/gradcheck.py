"""Numeric gradient checking by central differences, in float64.

Everything here takes plain callables on numpy arrays, so the grader can
check any implementation's gradients (the reference's, a student's, run in
a worker) without importing needle. A check compares the analytic gradient
of sum(f(*xs) * out_grad) with respect to each input against central
differences of f, and reports the op, the input shapes, the worst element's
analytic and numeric values, and the max absolute and relative errors.
"""

from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

EPS = 1e-6  # float64 step: truncation error ~EPS**2, round-off ~1e-16/EPS
RTOL = 1e-5
ATOL = 1e-7

# Message texts, kept as constants so tests can check what users see.
SHAPE_MISMATCH = "{op}: gradient of input {index} has shape {got}, the input has shape {want}"
COUNT_MISMATCH = "{op}: {got} gradients for {want} inputs"
VALUE_MISMATCH = (
    "{op} (input shapes {shapes}): gradient of input {index} is wrong at {where}: "
    "analytic {analytic:.10g} vs numeric {numeric:.10g}; max abs error {abs_err:.3g}, "
    "max rel error {rel_err:.3g} (tolerance atol={atol:g}, rtol={rtol:g})"
)


class GradientCheckError(AssertionError):
    """An analytic gradient disagrees with central differences."""


@dataclass(frozen=True)
class InputCheck:
    """The comparison for one input: its worst element and the max errors."""

    index: int
    shape: Tuple[int, ...]
    max_abs_error: float
    max_rel_error: float
    where: Tuple[int, ...]
    analytic: float
    numeric: float
    ok: bool


def numeric_gradients(
    fn: Callable, arrays: Sequence[np.ndarray], out_grad: np.ndarray, eps: float = EPS
) -> List[np.ndarray]:
    """Central differences of sum(fn(*arrays) * out_grad) for each array.

    The arrays are copied to float64 and perturbed one element at a time,
    so fn sees exactly the inputs it would otherwise see, up to the step.
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    out_grad = np.asarray(out_grad, dtype=np.float64)

    def objective():
        return float(np.sum(np.asarray(fn(*arrays), dtype=np.float64) * out_grad))

    grads = []
    for x in arrays:
        grad = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            saved = x[index]
            x[index] = saved + eps
            plus = objective()
            x[index] = saved - eps
            minus = objective()
            x[index] = saved
            grad[index] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return grads


def compare(
    analytic: np.ndarray, numeric: np.ndarray, index: int, rtol: float = RTOL, atol: float = ATOL
) -> InputCheck:
    """How far one analytic gradient is from the numeric one (same shape)."""
    analytic = np.asarray(analytic, dtype=np.float64)
    diff = np.abs(analytic - numeric)
    if diff.size == 0:
        return InputCheck(index, numeric.shape, 0.0, 0.0, (), 0.0, 0.0, True)
    # The worst element is the one furthest outside its tolerance.
    excess = diff - (atol + rtol * np.abs(numeric))
    where = np.unravel_index(int(np.argmax(excess)), numeric.shape)
    rel = diff / np.maximum(np.abs(numeric), np.finfo(np.float64).tiny)
    ok = bool(np.all(excess <= 0))  # NaN never passes
    return InputCheck(
        index,
        numeric.shape,
        float(np.max(diff)),
        float(np.max(rel)),
        tuple(int(i) for i in where),
        float(analytic[where]),
        float(numeric[where]),
        ok,
    )


def check_gradients(
    op: str,
    fn: Callable,
    grad_fn: Callable,
    arrays: Sequence[np.ndarray],
    out_grad: Optional[np.ndarray] = None,
    *,
    rtol: float = RTOL,
    atol: float = ATOL,
    eps: float = EPS,
    seed: int = 0,
) -> List[InputCheck]:
    """Check grad_fn(*arrays, out_grad) against central differences of fn.

    grad_fn returns one gradient per input (the adjoint of each input when
    the output's adjoint is out_grad). out_grad defaults to a seeded
    standard normal array of the output's shape. Returns one InputCheck
    per input; raises GradientCheckError with a full report on the first
    mismatch (count, shape or values).
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    if out_grad is None:
        out_shape = np.shape(fn(*[a.copy() for a in arrays]))
        out_grad = np.random.default_rng(seed).standard_normal(out_shape)
    analytic = list(grad_fn(*[a.copy() for a in arrays], out_grad))
    if len(analytic) != len(arrays):
        raise GradientCheckError(COUNT_MISMATCH.format(op=op, got=len(analytic), want=len(arrays)))
    numeric = numeric_gradients(fn, arrays, out_grad, eps)
    shapes = [a.shape for a in arrays]
    checks = []
    for index, (got, want) in enumerate(zip(analytic, numeric)):
        if np.shape(got) != want.shape:
            raise GradientCheckError(SHAPE_MISMATCH.format(op=op, index=index, got=np.shape(got), want=want.shape))
        check = compare(got, want, index, rtol, atol)
        if not check.ok:
            raise GradientCheckError(
                VALUE_MISMATCH.format(
                    op=op,
                    shapes=shapes,
                    index=index,
                    where=check.where,
                    analytic=check.analytic,
                    numeric=check.numeric,
                    abs_err=check.max_abs_error,
                    rel_err=check.max_rel_error,
                    atol=atol,
                    rtol=rtol,
                )
            )
        checks.append(check)
    return checks
