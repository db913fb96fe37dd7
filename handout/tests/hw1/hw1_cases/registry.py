# Generated from grader/shipped/cases/registry.py by `make handout`; do not edit.
"""The case registry's data types: questions and cases.

A case is a row of plain data: a name, its question, the contract line it
exercises (cites.py: the course's words it rests on), a description, a weight and tolerances, how its value is checked,
and the function `fn(ndl, simple_ml)` that computes the value on the library
under test. Each case module lists its cases explicitly in `CASES`.

Cases receive the library under test as arguments instead of importing it,
so the grading parent can read every case without importing any needle.
This package imports nothing from `grader` either: the sandboxed worker
loads a copy of it on its own.

`CaseTable` is the one definition of the lookups over questions and cases
(by key, by name, a question's cases, the cases a worker runs): this
package's names below come from it, and the trusted side's Registry
(grader/core/registry.py) extends it for any assignment's cases package.
"""
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Optional


@dataclass(frozen=True)
class Question:
    key: str                 # the `-k` name students use
    label: str               # "Q1"
    points: int
    imports: tuple           # what its worker imports: a broken simple_ml costs Q5/Q6 only
    memory: int = 1          # its worker's memory limit, in multiples of the default
    # Whose inputs its cases get when graded: "submission" (drawn for each
    # submission: its expected answers cost a run of the reference per
    # submission, Q1-Q4 together about 0.3 s of work and one sandbox start) or
    # "course" (drawn once per grading secret: a reference run too long to
    # repeat per submission, Q5's and Q6's read MNIST).
    inputs: str = "submission"


QUESTIONS = (
    Question("forward", "Q1", 10, ("needle",)),
    Question("backward", "Q2", 25, ("needle",)),
    Question("topo_sort", "Q3", 20, ("needle",)),
    Question("compute_gradient", "Q4", 25, ("needle",)),
    Question("softmax_loss_ndl", "Q5", 10, ("needle", "simple_ml"), inputs="course"),  # reads MNIST's test set
    Question("nn_epoch_ndl", "Q6", 10, ("needle", "simple_ml"), memory=2,  # holds MNIST's training set
             inputs="course"),  # a full MNIST epoch: the reference's run is most of a grading's time
)

# How the parent checks a value against the reference's:
#   "close"      structure equal, numbers within rtol/atol whatever the float width
#   "analytic"   like close, on the "analytic" entry of a gradient record (the
#                "numeric" entry only checks the reference itself)
#   "topo"       the "order" entry identical; feedback names the property broken
#   "weights"    each array within rtol of the reference's, as a matrix: the
#                Frobenius norm of the difference (long float32 runs)
#   "test_error" MNIST test error of returned weights (W1, W2) <= threshold
#   "dtype"      every array has the reference's dtype (float width included),
#                and, for a case checking its own value, "close" too
CHECKS = ("close", "analytic", "topo", "weights", "test_error", "dtype")

# What a case's function computes, when it is one op call: "forward"
# (ndl.<op>(*inputs, **kwargs)), "grad1" (its gradient for an out_grad),
# "grad2" (each gradient differentiated again). calls.py evaluates such a
# call on other inputs (the grader's smaller ones: "Smallest failing input").
CALL_KINDS = ("forward", "grad1", "grad2")


@dataclass(frozen=True)
class Call:
    kind: str                # one of CALL_KINDS
    op: str                  # the ndl function: "broadcast_to"
    inputs: tuple            # per input: (shape, dtype name, positive: every entry > 0)
    kwargs: tuple = ()       # (name, value) pairs, plain numbers and tuples of ints only


@dataclass(frozen=True)
class Case:
    name: str                # unique; starts with its question key
    question: str            # a Question key
    contract: str            # the CONTRACT line it exercises (contract.py)
    description: str         # what is exercised (op, inputs), shown in feedback
    fn: Optional[Callable] = None  # computes the value; None: checks `source`'s value
    source: str = ""         # the case whose value this one checks (default: itself)
    weight: float = 1.0
    rtol: float = 1e-5
    atol: float = 1e-6
    check: str = "close"
    hidden: bool = False     # feedback never shows expected values
    advisory: bool = False   # beyond the contract: reported, no points unless asked
    threshold: float = 0.0   # for "test_error"
    exact: float = 0.0       # > 0: a float64 value must be within exact * its scale (gradients; util.EXACT)
    call: Optional[Call] = None  # the op call it computes, as data (None: not one op call)
    cites: tuple = ()        # (course file, quoted words) beyond its contract line's (cites.py)

    @property
    def value_key(self) -> str:
        """The name under which the worker stores the value this case checks."""
        return self.source or self.name


@dataclass(frozen=True)
class CaseTable:
    questions: tuple      # in the handout's order
    cases: tuple          # in the handout's order

    @cached_property
    def question(self) -> dict:
        return {q.key: q for q in self.questions}

    @cached_property
    def by_name(self) -> dict:
        return {c.name: c for c in self.cases}

    def cases_for(self, question: str) -> list:
        return [c for c in self.cases if c.question == question]

    def producers(self, question: str) -> list:
        """The cases of `question` whose function a worker runs (each value once)."""
        return [c for c in self.cases_for(question) if c.fn is not None]


def case(question, name, contract, description, fn=None, **options) -> Case:
    """A Case whose name is prefixed by its question key (`forward_` + name)."""
    return Case(name=f"{question}_{name}", question=question, contract=contract,
                description=description, fn=fn, **options)
