"""The case registry: a table of named cases, each a small function
`fn(ndl, simple_ml)` returning plain data (numbers, arrays, lists, dicts).

Cases receive the library under test as arguments instead of importing it,
so the grading parent can read this table (names, questions, weights,
tolerances) without importing any needle. This package imports nothing from
`grader` either: the sandboxed worker loads a copy of it on its own.
"""
from dataclasses import dataclass

# question key -> (label, points). Keys are the `-k` names students use.
QUESTIONS = {
    "forward": ("Q1", 10),
    "backward": ("Q2", 25),
    "topo_sort": ("Q3", 20),
    "compute_gradient": ("Q4", 25),
    "softmax_loss_ndl": ("Q5", 10),
    "nn_epoch_ndl": ("Q6", 10),
}

# How the parent compares a value with the reference's:
#   "close"    structure equal, arrays of equal shape within rtol/atol
#   "analytic" like close, on the "analytic" entry only (backward cases also
#              return a numeric gradient, used to check the reference itself)
#   "topo"     the "order" entry identical; feedback names the property broken
#   "norms"    Frobenius norms of the arrays within rtol (long float32 runs)
#   "test_error" MNIST test error of returned weights (W1, W2) <= threshold
CHECKS = ("close", "analytic", "topo", "norms", "test_error")


@dataclass(frozen=True)
class Case:
    name: str            # graded entry name; starts with its question key
    question: str        # a key of QUESTIONS
    fn: str              # "module.function" in this package computing the value
    description: str     # what is exercised (op, inputs), shown in feedback
    weight: float = 1.0
    rtol: float = 1e-5
    atol: float = 1e-6
    check: str = "close"
    hidden: bool = False      # feedback never shows expected values
    exact_dtype: bool = False  # dtype must match exactly, not just its kind
    threshold: float = 0.0    # for "test_error"


CASES = []


def case(question, description, *, name=None, **options):
    """Register the decorated function as a case of `question`."""

    def register(fn):
        module = fn.__module__.rsplit(".", 1)[-1]
        CASES.append(Case(name=name or fn.__name__, question=question,
                          fn=f"{module}.{fn.__name__}", description=description, **options))
        return fn

    return register


def also(question, name, description, fn_name, module, **options):
    """Register a second graded check on an already registered function's value."""
    CASES.append(Case(name=name, question=question, fn=f"{module}.{fn_name}",
                      description=description, **options))


def table(question, module_globals, rows, **options):
    """Register one case per row (name, description, fn(ndl, simple_ml)).

    The functions are bound as module attributes so the worker can find
    them by name like any decorated case.
    """
    for name, description, fn in rows:
        fn.__name__ = name
        fn.__module__ = module_globals["__name__"]
        module_globals[name] = fn
        case(question, description, **options)(fn)
