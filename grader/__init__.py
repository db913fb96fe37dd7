"""Autograding harness for the needle hw1 homework.

ROOT is where the package is imported from: a checkout, or site-packages for an installed wheel
(grader/core/paths.py). REFERENCE, HANDOUT and DATA are hw1's folders, read on first use from the
one Assignment object (grader/core/assignment.py, from the checkout's assignment.toml or the copy a
wheel carries), so importing the package reads no file. Code that grades takes its assignment from
RunConfig instead."""

from grader.core.assignment import Assignment
from grader.core.paths import ROOT

_HW1_FOLDERS = {"REFERENCE": "reference", "HANDOUT": "handout", "DATA": "data"}


def __getattr__(name):
    if name in _HW1_FOLDERS:
        return getattr(Assignment.hw1(), _HW1_FOLDERS[name])
    raise AttributeError(f"module 'grader' has no attribute {name!r}")


__all__ = ["ROOT", "Assignment", *_HW1_FOLDERS]
