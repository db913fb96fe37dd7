"""Points arithmetic: how a question's points are shared among its cases.

Case scores are whole multiples of 1e-4 points (UNIT per point), shared by
largest remainder, so per-question and overall totals add up exactly. The
grader and the handout's `make test` (grader/handout/cases.py) both count
with these.
"""

UNIT = 10_000  # case scores are whole multiples of 1e-4 points, so totals add up exactly


def split_points(points, weights):
    """Integer units (1e-4 points) per weight, summing exactly to `points`
    (largest remainder), so Gradescope's test scores add up to the total."""
    total, whole = sum(weights), points * UNIT
    shares = [whole * w / total for w in weights]
    units = [int(s) for s in shares]
    by_remainder = sorted(range(len(weights)), key=lambda i: units[i] - shares[i])
    for i in by_remainder[: round(whole - sum(units))]:
        units[i] += 1
    return units


def max_scores(registry, strict=False):
    """case name -> its points: each question's points split by weight over
    its scored cases (advisory cases too when `strict`); advisory ones 0."""
    out = {}
    for question in registry.questions:
        scored = [c for c in registry.cases_for(question.key) if strict or not c.advisory]
        for c, units in zip(scored, split_points(question.points, [c.weight for c in scored])):
            out[c.name] = units / UNIT
    return {c.name: out.get(c.name, 0.0) for c in registry.cases}
