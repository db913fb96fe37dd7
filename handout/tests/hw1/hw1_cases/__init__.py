# Generated from grader/shipped/cases/__init__.py by `make handout`; do not edit.
"""Grading cases for needle hw1, by question: the registry (registry.py), the
contract the scored cases test (contract.py), and one module per question,
each listing its cases in `CASES`."""
import re

from . import autodiff, backward, forward, nn, softmax, topo
from .cites import CITES, FILES, MIN_QUOTE, citations
from .contract import BEYOND, CONTRACT
from .registry import CHECKS, QUESTIONS, Case, CaseTable, Question
from .util import NUMERIC_TOLERANCE, draw_requests, read_test_set

CASES = tuple(forward.CASES + backward.CASES + topo.CASES + autodiff.CASES + softmax.CASES + nn.CASES)
TABLE = CaseTable(QUESTIONS, CASES)
QUESTION, BY_NAME, cases_for, producers = TABLE.question, TABLE.by_name, TABLE.cases_for, TABLE.producers
# Longest first; the others fill the second core while Q6 runs.
RUN_ORDER = ("nn_epoch_ndl", "softmax_loss_ndl", "backward", "forward", "compute_gradient", "topo_sort")
# Graded in one worker, one question after the other, as the course's own suite
# runs them: Q1-Q4 import the same module and their cases take milliseconds, so a
# worker apiece was mostly its start (about 0.3 s of CPU each). Q5 and Q6 keep
# their own: they import simple_ml too, and Q6's epoch is the longest run.
SHARED_WORKERS = (("forward", "backward", "topo_sort", "compute_gradient"),)
NAME = re.compile(r"^[a-z0-9_]+$")  # also the worker's output file stem


class RegistryError(ValueError):
    """A case row is inconsistent: fix it in its module's CASES list."""


def _validate(cases):
    names = set()
    for c in cases:
        where = f"case {c.name!r} ({c.question})"
        if c.name in names or not NAME.match(c.name) or not c.name.startswith(c.question + "_"):
            raise RegistryError(f"{where}: names must be unique, [a-z0-9_], prefixed by the question key")
        names.add(c.name)
        if c.question not in QUESTION or c.check not in CHECKS:
            raise RegistryError(f"{where}: unknown question or check {c.check!r}")
        if c.contract not in (BEYOND if c.advisory else CONTRACT):
            kind = "BEYOND (advisory)" if c.advisory else "CONTRACT"
            raise RegistryError(f"{where}: contract {c.contract!r} is not a line of {kind} in contract.py")
        if (c.fn is None) == (not c.source):
            raise RegistryError(f"{where}: give exactly one of fn and source")
        if c.weight <= 0:
            raise RegistryError(f"{where}: weight must be positive")
        quotes = citations(c)
        if not c.advisory and not quotes:
            raise RegistryError(f"{where}: a scored case cites the course's words (cites.py)")
        if any(f not in FILES or len(q) < MIN_QUOTE for f, q in quotes):
            raise RegistryError(f"{where}: a citation is (one of {FILES}, words of one line, >= {MIN_QUOTE} chars)")
    for c in cases:
        src = next((s for s in cases if s.name == c.source), None) if c.source else c
        if src is None or src.fn is None or src.question != c.question:
            raise RegistryError(f"case {c.name!r}: source {c.source!r} is not a computing case of its question")


_validate(CASES)


__all__ = ["BEYOND", "BY_NAME", "CASES", "CITES", "citations", "CHECKS", "CONTRACT", "QUESTION", "QUESTIONS", "NUMERIC_TOLERANCE", "draw_requests",
           "RUN_ORDER", "SHARED_WORKERS", "TABLE", "Case", "CaseTable", "Question", "read_test_set", "RegistryError", "cases_for",
           "producers"]
