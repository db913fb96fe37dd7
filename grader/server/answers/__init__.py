"""Submitted answers: the mugrade wire format decoded under limits, and the
comparison of a submitted value with the published one.

The core idea: an answer is judged from its value alone, against the
expected value and tolerance of its case; nothing here touches the database
or HTTP, so the hot path and the gradebook's recomputed reasons agree.
"""
