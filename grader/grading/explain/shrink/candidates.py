"""Smaller calls of the same kind as a case's own (its registry Call).

Each op keeps its arguments valid for the smaller shapes: a broadcast keeps
its new leading axes and stretched size-1 axes, a summation sums the same
kept axes (renumbered), a reshape keeps the element count, a transpose
swaps the same two axes, a matmul keeps which side has batch dims. Values
are small integers in a fixed pattern (distinct neighbours, so a transposed
or misplaced entry shows; never 0 or 1 first, so a missing factor shows;
positive where the case's inputs are). The candidates depend on the case
alone, never on a grading seed: the reference's values for them are
computed once (reference.py).
"""

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MAX_PER_CASE = 24  # candidates per case, the smallest first: one batched run stays short
SIZES = (1, 2, 3)  # an axis shrinks to these lengths (no longer than it was)
SIGNED = (1, 2, 3, 4, 5)  # cycled, with alternating signs; shifted per array so arrays differ
POSITIVE = (2, 3, 4, 5)


@dataclass(frozen=True)
class Candidate:
    case: str  # the case it shrinks
    index: int  # its place among the case's candidates (smallest first)
    kind: str  # Call.kind
    op: str
    shapes: tuple  # of the inputs
    dtypes: tuple
    positive: tuple  # per input: values must stay positive
    kwargs: tuple  # (name, value) pairs
    out_shape: tuple  # the op's output shape (numpy's), for out_grads

    @property
    def id(self) -> str:
        """Its name in the worker's output (cases' NAME rule: [a-z0-9_])."""
        return f"{self.case}_s{self.index}"

    def arrays(self) -> list:
        return [
            pattern(s, d, p, shift=1 + k) for k, (s, d, p) in enumerate(zip(self.shapes, self.dtypes, self.positive))
        ]

    def out_grads(self) -> list:
        """grad1: the output's; grad2: then one per input, shaped like it."""
        if self.kind == "forward":
            return []
        shapes = [self.out_shape] + (list(self.shapes) if self.kind == "grad2" else [])
        return [pattern(s, "float64", False, shift=2 + k) for k, s in enumerate(shapes)]

    @property
    def size(self) -> tuple:
        """Smaller first: fewer entries in all, then fewer axes."""
        return (
            sum(int(np.prod(s)) for s in self.shapes) + int(np.prod(self.out_shape)),
            sum(len(s) for s in self.shapes),
        )


def pattern(shape, dtype, positive, shift=0) -> np.ndarray:
    """Small integers: positive ones from POSITIVE, else SIGNED with
    alternating signs, starting `shift` entries in (so arrays differ)."""
    n = int(np.prod(shape))
    if positive:
        values = [POSITIVE[(i + shift) % len(POSITIVE)] for i in range(n)]
    else:
        values = [SIGNED[(i + shift) % len(SIGNED)] * (-1) ** (i + shift) for i in range(n)]
    return np.array(values, dtype=dtype).reshape(shape)


def _sizes(d):
    return [s for s in SIZES if s <= d] or [d]


def _shrunk(shape):
    """Shapes no larger than `shape`: its trailing axes (fewer of them), each
    no longer than it was (SIZES)."""
    out = []
    for start in range(len(shape) + 1):
        out += itertools.product(*(_sizes(d) for d in shape[start:]))
    return [tuple(s) for s in out]


def _elementwise(shapes, kwargs):
    """Unary ops and binary ops on equal shapes: every input the same shape."""
    if len(set(shapes)) != 1:
        return []
    return [((s,) * len(shapes), kwargs) for s in _shrunk(shapes[0])]


def _summation(shapes, kwargs):
    (shape,), axes = shapes, kwargs.get("axes")
    if axes is None:
        return [((s,), kwargs) for s in _shrunk(shape)]
    if type(axes) is not tuple or any(a < 0 for a in axes):
        return []  # an int or negative axes: beyond the contract, not shrunk
    out = []
    for kept in _subsets(range(len(shape))):
        summed = tuple(i for i, a in enumerate(kept) if a in axes)
        if not summed:
            continue
        for sizes in itertools.product(*(_sizes(shape[a]) for a in kept)):
            out.append(((tuple(sizes),), {**kwargs, "axes": summed}))
    return out


def _broadcast_to(shapes, kwargs):
    (shape,), target = shapes, tuple(kwargs["shape"])
    lead = len(target) - len(shape)
    kinds = ["new"] * lead + ["stretch" if s == 1 and t != 1 else "keep" for s, t in zip(shape, target[lead:])]
    out = []
    for kept in _subsets(range(len(target))):
        options = [[2] if kinds[a] in ("new", "stretch") else _sizes(target[a]) for a in kept]
        for sizes in itertools.product(*options):
            src = tuple(1 if kinds[a] == "stretch" else n for a, n in zip(kept, sizes) if kinds[a] != "new")
            out.append(((src,), {**kwargs, "shape": tuple(sizes)}))
    return out


def _reshape(shapes, kwargs):
    (shape,), target = shapes, tuple(kwargs["shape"])
    out = []
    for src in _shrunk(shape):
        n = int(np.prod(src))
        for m in range(len(target) + 1):
            for dest in _factorizations(n, m):
                if dest != src:
                    out.append(((src,), {**kwargs, "shape": dest}))
    return out


def _transpose(shapes, kwargs):
    (shape,), axes = shapes, kwargs.get("axes")
    if axes is None:
        return [((s,), kwargs) for s in _shrunk(shape) if len(s) >= 2]
    out = []
    for kept in _subsets(range(len(shape))):
        if not set(axes) <= set(kept):
            continue
        for sizes in itertools.product(*(_sizes(shape[a]) for a in kept)):
            out.append(((tuple(sizes),), {**kwargs, "axes": tuple(kept.index(a) for a in axes)}))
    return out


def _matmul(shapes, kwargs):
    a, b = shapes
    if len(a) < 2 or len(b) < 2:
        return []
    out = []
    for m, k, n in itertools.product(_sizes(a[-2]), _sizes(a[-1]), _sizes(b[-1])):
        for ba, bb in _batches(a[:-2], b[:-2]):
            out.append(((ba + (m, k), bb + (k, n)), kwargs))
    return out


def _batches(ba, bb):
    """Batch dims as small as the originals' kind allows: equal on both
    sides (fewer or shorter), or a 2-D side kept 2-D against fewer or shorter ones."""
    if ba and bb and len(ba) != len(bb):
        return []  # beyond the contract's kinds
    longest = ba or bb
    out = [((), ())]
    for count in range(1, len(longest) + 1):
        for dims in itertools.product(*(_sizes(d) for d in longest[-count:])):
            out.append((dims if ba else (), dims if bb else ()))
    return out


def _subsets(axes):
    axes = list(axes)
    return [c for r in range(len(axes) + 1) for c in itertools.combinations(axes, r)]


def _factorizations(n, m):
    """Ordered m-tuples of positive ints with product n."""
    if m == 0:
        return [()] if n == 1 else []
    return [(d, *rest) for d in range(1, n + 1) if n % d == 0 for rest in _factorizations(n // d, m - 1)]


SHRINKERS = {
    "negate": _elementwise,
    "log": _elementwise,
    "exp": _elementwise,
    "relu": _elementwise,
    "power_scalar": _elementwise,
    "divide_scalar": _elementwise,
    "add_scalar": _elementwise,
    "mul_scalar": _elementwise,
    "divide": _elementwise,
    "power": _elementwise,
    "add": _elementwise,
    "multiply": _elementwise,
    "summation": _summation,
    "broadcast_to": _broadcast_to,
    "reshape": _reshape,
    "transpose": _transpose,
    "matmul": _matmul,
}

# numpy's version of each op, to validate a candidate and give its output shape
NUMPY = {
    "negate": np.negative,
    "log": np.abs,
    "exp": np.abs,
    "relu": np.abs,
    "power_scalar": np.abs,
    "divide_scalar": np.abs,
    "add_scalar": np.abs,
    "mul_scalar": np.abs,
    "divide": np.divide,
    "power": np.add,
    "add": np.add,
    "multiply": np.multiply,
    "matmul": np.matmul,
    "summation": lambda a, axes=None: np.sum(a, axis=axes),
    "broadcast_to": lambda a, shape: np.broadcast_to(a, shape),
    "reshape": lambda a, shape: np.reshape(a, shape),
    "transpose": lambda a, axes=None: np.swapaxes(a, *(axes or (-1, -2))),
}
SHAPE_KWARGS = ("axes", "shape")  # the only keywords the numpy versions take; scalars do not change shapes


def out_shape(op, shapes, kwargs):
    """The output shape numpy gives, or None when the call is not valid."""
    try:
        with np.errstate(all="ignore"):
            value = NUMPY[op](*(np.ones(s) for s in shapes), **{k: v for k, v in kwargs.items() if k in SHAPE_KWARGS})
    except (ValueError, TypeError, IndexError, np.AxisError):
        return None
    return tuple(np.shape(value))


@lru_cache(maxsize=None)
def candidates(case) -> tuple:
    """The case's smaller calls, smallest first (at most MAX_PER_CASE); none
    when the case is not one op call of an op this module knows. Cached: a
    grading asks for every case's (0.1 s in all), a batch for each submission."""
    call = getattr(case, "call", None)
    if call is None or call.op not in SHRINKERS:
        return ()
    shapes = tuple(s for s, _, _ in call.inputs)
    kwargs = dict(call.kwargs)
    dtypes, positive = tuple(d for _, d, _ in call.inputs), tuple(p for _, _, p in call.inputs)
    original = out_shape(call.op, shapes, kwargs)
    found = {}
    for new_shapes, new_kwargs in SHRINKERS[call.op](shapes, kwargs):
        shape = out_shape(call.op, new_shapes, new_kwargs)
        key = (new_shapes, tuple(sorted(new_kwargs.items())))
        if shape is None or key in found or (new_shapes == shapes and new_kwargs == kwargs):
            continue
        found[key] = Candidate(case.name, 0, call.kind, call.op, new_shapes, dtypes, positive, key[1], shape)
    ordered = sorted(found.values(), key=lambda c: (c.size, c.shapes, repr(c.kwargs)))
    ordered = [c for c in ordered if not _larger(c, shapes, original)][:MAX_PER_CASE]
    return tuple(Candidate(**{**c.__dict__, "index": i}) for i, c in enumerate(ordered))


def _larger(candidate, shapes, out):
    """Larger than the original anywhere (more entries in an input or the output)."""
    sizes = [int(np.prod(s)) for s in candidate.shapes] + [int(np.prod(candidate.out_shape))]
    return any(a > b for a, b in zip(sizes, [int(np.prod(s)) for s in shapes] + [int(np.prod(out or ()))]))
