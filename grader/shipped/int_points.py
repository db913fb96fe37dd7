"""Whole points from fractional ones, by largest remainder, for gradebooks
that take integers only (Classroom 50's result.json).

A question's public cases are worth fractional points (hw1: Q2's public
cases are worth 15.278). Each question's whole maximum is its exact worth
rounded down, then one more point goes to each question with the largest
remainders (ties: the larger worth, then the earlier question) until the
maxima add up to the exact total rounded half up (hw1: 60.6947 -> 61).

A student's points in a question are first scaled to its whole maximum
(earned * whole_max / exact_max), then apportioned the same way to the
scaled total rounded half up, so the total is as close as one rounding
allows. Nothing changes who gets what:

- a question passed in full gets its whole maximum, and only such a
  question does (a point that would complete a partly passed question goes
  to the next remainder, or is dropped);
- a question with nothing earned gets 0;
- more earned in a question never gives fewer whole points in it for the
  same other questions (the scaled value only grows);
- the test scores add up to the score, and the maxima to the maximum.

Exact arithmetic (fractions) throughout: no float decides a point.
Standard library only; it ships beside student code (Classroom 50's runner).
"""

from fractions import Fraction
from math import ceil, floor


def half_up(value: Fraction) -> int:
    """`value` rounded to the nearest integer, halves up (0.5 -> 1)."""
    return floor(value + Fraction(1, 2))


def apportion(quotas, total: int, caps) -> list:
    """Integers near `quotas` adding up to `total` where the caps allow:
    each quota rounded down (never above its cap), then one more to the
    largest remainders, one each, skipping those at their cap."""
    quotas = [Fraction(q) for q in quotas]
    whole = [min(floor(q), cap) for q, cap in zip(quotas, caps)]
    order = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - floor(quotas[i])), -quotas[i], i))
    left = total - sum(whole)
    for i in order:
        if left <= 0:
            break
        if quotas[i] > whole[i] and whole[i] < caps[i]:
            whole[i] += 1
            left -= 1
    return whole


def whole_maxima(exact) -> list:
    """Each question's whole maximum from its exact one (Fractions or exact
    decimals); they add up to the exact total rounded half up."""
    exact = [Fraction(e) for e in exact]
    return apportion(exact, half_up(sum(exact, Fraction(0))), [ceil(e) for e in exact])


def whole_scores(earned, exact, maxima) -> list:
    """Each question's whole points from the exact points earned, given the
    exact and whole maxima (whole_maxima)."""
    earned = [Fraction(e) for e in earned]
    exact = [Fraction(e) for e in exact]
    for e, x in zip(earned, exact):
        if e < 0 or e > x:
            raise ValueError(f"earned {float(e):g} outside 0..{float(x):g}")
    scaled = [e * m / x if x else Fraction(0) for e, x, m in zip(earned, exact, maxima)]
    caps = [m if e == x else max(m - 1, 0) for e, x, m in zip(earned, exact, maxima)]
    return apportion(scaled, half_up(sum(scaled, Fraction(0))), caps)
