"""Autograding harness for the needle hw1 homework.

ROOT is the repository; REFERENCE, HANDOUT and DATA are hw1's folders, read
from the one Assignment object (grader/assignment.py). Code that grades takes
its assignment from RunConfig instead."""
from grader.assignment import ROOT, Assignment

_HW1 = Assignment.hw1()
REFERENCE, HANDOUT, DATA = _HW1.reference, _HW1.handout, _HW1.data
