"""Feedback beyond pass/fail: the likely cause (known-bug catalogue), the
smallest failing input, the student's line, and the words for cases with
no value."""
