"""Whole points by largest remainder (grader/shipped/int_points.py): hw1's
maxima, and the rules that keep who gets what."""

import random
from fractions import Fraction

import pytest

from grader.shipped.int_points import apportion, half_up, whole_maxima, whole_scores

# hw1's public worth per question (points.json): 6.25, 15.278, 12.5, 12.5, 7.5, 6.6667
HW1 = [
    Fraction(62500, 10_000),
    Fraction(152780, 10_000),
    Fraction(125000, 10_000),
    Fraction(125000, 10_000),
    Fraction(75000, 10_000),
    Fraction(66667, 10_000),
]


def test_hw1_maxima_round_each_question_down_or_up_and_add_up_to_the_rounded_total():
    maxima = whole_maxima(HW1)
    assert maxima == [6, 15, 13, 13, 7, 7]  # 0.6667 first, then the 0.5s of the larger questions
    assert sum(maxima) == half_up(sum(HW1)) == 61
    assert all(int(x) <= m <= int(x) + 1 for x, m in zip(HW1, maxima))


def test_half_up_rounds_halves_up():
    assert [half_up(Fraction(n, 2)) for n in range(-1, 4)] == [0, 0, 1, 1, 2]


def test_apportion_never_passes_a_cap_and_drops_what_no_one_may_take():
    assert apportion([Fraction(29, 10), Fraction(1, 10)], 3, [2, 5]) == [2, 1]
    assert apportion([Fraction(29, 10)], 3, [2]) == [2]


def _sample(rng):
    """Exact points earned per question: none, all, or a multiple of 1e-4 between."""
    return [rng.choice([Fraction(0), x, Fraction(rng.randint(1, int(x * 10_000) - 1), 10_000)]) for x in HW1]


def test_whole_scores_keep_who_gets_what():
    rng, maxima = random.Random(35), whole_maxima(HW1)
    for _ in range(3000):
        earned = _sample(rng)
        scores = whole_scores(earned, HW1, maxima)
        for e, x, s, m in zip(earned, HW1, scores, maxima):
            assert (s == m) == (e == x), (earned, scores)  # full marks exactly for a question passed in full
            if e == 0:
                assert s == 0
        scaled = [e * m / x for e, x, m in zip(earned, HW1, maxima)]
        total = half_up(sum(scaled, Fraction(0)))
        assert sum(scores) <= total, (earned, scores)
        # the total is the scaled total rounded, unless a point would have completed a partly passed question
        if not any(e < x and q > m - 1 for e, x, q, m in zip(earned, HW1, scaled, maxima)):
            assert sum(scores) == total, (earned, scores)


def test_more_earned_in_a_question_never_gives_fewer_points_in_it():
    rng, maxima = random.Random(7), whole_maxima(HW1)
    for _ in range(2000):
        earned = _sample(rng)
        q = rng.randrange(len(HW1))
        more = list(earned)
        more[q] = min(HW1[q], earned[q] + Fraction(rng.randint(1, 20_000), 10_000))
        assert whole_scores(more, HW1, maxima)[q] >= whole_scores(earned, HW1, maxima)[q], (earned, more, q)


def test_points_outside_the_question_are_refused():
    with pytest.raises(ValueError, match="outside 0..6.25"):
        whole_scores([Fraction(7)] + [Fraction(0)] * 5, HW1, whole_maxima(HW1))
