"""Smallest failing input: for a failing case that is one op call, smaller
inputs of the same kind that still fail, shown under the case.

candidates.py proposes the smaller calls (fewer and shorter axes, size-1
and size-2 axes, small integer values, the op's arguments kept valid) as
plain data; spec.py writes them as the worker's validated spec file;
reference.py runs the reference on every case's candidates once per
machine and change (cached like the expected answers); run.py has the
student's code evaluate the failing cases' candidates in one extra
sandboxed run, checks each with the case's own check and names the
smallest that still fails the same way; line.py words the result.
"""
