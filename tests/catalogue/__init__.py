"""Catalogues of submissions with known verdicts (see tests/test_verdicts.py).

Each entry is data: how to derive the submission's three student files from
the reference (edits), and what the grader must conclude about it.
"""
