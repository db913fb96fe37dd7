"""Lateness, penalties and late days, derived from each answer's arrival time and
the clock in force (pure: tested without a server).

A server answer (a case result) is late when it arrived after its student's
deadline in force for its question: the question's deadline, or the student's
extension (clock.py). A late right answer keeps the share of its points the
assignment's late rule gives (rules.LateRule.credit). An attempt's score is
the sum of its right answers' credits over its cases; `on_time` counts the
answers that arrived in time only; `penalty` is what the rule took.

Late days: each student has the course's budget. Oldest deadline first, a
question whose late answers raised its best score above its on-time best gets
the fewest whole days (at most what is left) that make those answers on time;
when what is left does not suffice, none is spent on it and its penalty stands.
Only questions whose server answers count (the policy in force) spend them.
Imported (sandboxed) results carry no arrival time and are never late here.
"""

from dataclasses import replace

from .rules import DAY

EPS = 1e-12


def attempt(a, due, rule, days: int = 0):
    """One server attempt judged against `due` (None: no deadline) moved by `days` late days."""
    if due is not None and days:
        due = due + days * DAY
    score = on_time = raw = before = 0.0
    late = False
    for arrived, right, right_then in a.arrivals:
        raw += right
        if due is None or arrived <= due:
            credit = 1.0
            on_time += right
        else:
            credit = rule.credit(arrived - due)
            late = late or right > 0
        score += right * credit
        before += right_then * credit
    n = a.total

    def share(x):
        return x / n if n else 0.0

    previous = share(before) if abs(share(before) - share(score)) > EPS else None
    return replace(
        a,
        score=share(score),
        on_time=share(on_time),
        late=late,
        due=due,
        penalty=share(raw - score),
        previous=previous,
        late_days=days,
    )


def _needs_days(judged) -> bool:
    """Late answers raised the best score above the best on-time score."""
    return max(j.on_time for j in judged) < max(j.score + j.penalty for j in judged) - EPS


def judge(attempts, clock, counts_server=lambda label: True) -> list:
    """`attempts` with every server attempt judged, late days spent; others as they are."""
    judged = {}
    groups = {}
    for a in attempts:
        if a.source != "server":
            continue
        due = clock.due(a.student, a.question)
        judged[a.key] = attempt(a, due, clock.rule(a.question.partition("/")[0]))
        groups.setdefault((a.student, a.question), []).append(a)
    if clock.late_days:
        _spend_late_days(groups, judged, clock, counts_server)
    return [judged.get(a.key, a) for a in attempts]


def _spend_late_days(groups, judged, clock, counts_server):
    by_student = {}
    for (student, label), mine in groups.items():
        due = clock.due(student, label)
        if due is not None and counts_server(label):
            by_student.setdefault(student, []).append((due, label, mine))
    for student, questions in by_student.items():
        left = clock.late_days
        for due, label, mine in sorted(questions, key=lambda q: (q[0], q[1])):
            if left <= 0:
                break
            if not _needs_days([judged[a.key] for a in mine]):
                continue
            rule = clock.rule(label.partition("/")[0])
            for days in range(1, left + 1):
                trial = [attempt(a, due, rule, days) for a in mine]
                if not _needs_days(trial):
                    judged.update((a.key, t) for a, t in zip(mine, trial))
                    left -= days
                    break


def spent(attempts) -> dict:
    """(student, question) -> late days spent on it (pure; from judged attempts)."""
    return {(a.student, a.question): a.late_days for a in attempts if getattr(a, "late_days", 0)}
