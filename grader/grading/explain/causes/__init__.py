"""Likely causes: known bugs of the reference, recognised in a student's values.

catalogue.py lists known bugs as edits of the reference's solution regions
(edits.py), each with the words a student acts on; store.py runs each
mutated reference through the same sandboxed worker on a grading seed's
inputs, once per seed, and caches its values beside the expected answers;
diagnose.py names a failing case's cause when exactly one known bug gives
the student's values.
"""
