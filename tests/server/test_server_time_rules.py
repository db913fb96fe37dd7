"""The time policy's rules as pure functions: each checker refuses a wrong value in
one line naming the field, the late rules give the credit they declare, late days
are spent only when they make a question on time, and assignment.toml's
[policy.time] is what the server reads when the course set nothing."""

import datetime as dt
import json

import pytest

from grader.core.assignment import AssignmentError, Policy, parse_policy
from grader.server.gradebook import declared, load
from grader.server.gradebook.timing import clock, judge, rules

T0 = dt.datetime(2026, 2, 1, 12, 0)
HOUR = dt.timedelta(hours=1)


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"zone": "Mars/Olympus"}, "field 'policy.time.zone': 'Mars/Olympus' is not a time zone"),
        ({"late_days": -1}, "field 'policy.time.late_days': give a whole number of days, 0-365"),
        ({"late_days": True}, "field 'policy.time.late_days'"),
        ({"penalty": "half"}, "field 'policy.time.penalty': 'half' is not one of 'none', 'per day', 'zero after'"),
        ({"penalty": "per day"}, "field 'policy.time.percent_per_day': give a percent above 0"),
        ({"penalty": "per day", "percent_per_day": 120}, "field 'policy.time.percent_per_day'"),
        ({"penalty": "zero after"}, "field 'policy.time.cutoff': \"zero after\" needs one"),
        ({"cutoff": "1d"}, "field 'policy.time.cutoff': penalty \"none\" has no cutoff"),
        ({"penalty": "zero after", "cutoff": "soon"}, "field 'policy.time.cutoff': 'soon' is not a duration"),
        ({"late": 1}, "unknown field 'policy.time.late'; the fields are zone, late_days"),
    ],
)
def test_each_field_of_policy_time_refuses_a_wrong_value_in_one_line(raw, message):
    with pytest.raises(rules.TimeError) as e:
        rules.parse(raw, "a.toml")
    assert str(e.value).startswith("a.toml: " + message) and "\n" not in str(e.value)


def test_times_and_durations_as_typed():
    assert rules.parse_duration("1d12h", "x") == dt.timedelta(days=1, hours=12)
    for bad in ("0d", "", "2 days", "-1d", "99999d"):
        with pytest.raises(rules.TimeError, match=r"^x: "):
            rules.parse_duration(bad, "x")
    assert rules.parse_when("2026-02-01T23:59", "America/Los_Angeles", "d") == dt.datetime(2026, 2, 2, 7, 59)
    assert rules.parse_when("2026-02-01T23:59Z", "", "d") == dt.datetime(2026, 2, 1, 23, 59)
    with pytest.raises(rules.TimeError, match="has no time zone and the course declares none"):
        rules.parse_when("2026-02-01T23:59", "", "d")
    with pytest.raises(rules.TimeError, match="is out of range"):
        rules.parse_when("1900-01-01T00:00Z", "", "d")
    assert (
        rules.shown(dt.datetime(2026, 7, 1, 10, 0), "Europe/Zurich") == "2026-07-01 12:00 CEST (2026-07-01 10:00 UTC)"
    )
    assert rules.shown(dt.datetime(2026, 7, 1, 10, 0), "") == "2026-07-01 10:00 UTC"


def test_each_late_rule_gives_the_credit_it_declares():
    per_day = rules.LateRule("per day", 25.0)
    assert [per_day.credit(h * HOUR) for h in (1, 24, 25, 72, 100)] == [0.75, 0.75, 0.5, 0.25, 0.0]
    zero = rules.LateRule("zero after", 0.0, dt.timedelta(days=1))
    assert (zero.credit(24 * HOUR), zero.credit(25 * HOUR)) == (1.0, 0.0)
    capped = rules.LateRule("per day", 10.0, dt.timedelta(days=2))
    assert (capped.credit(47 * HOUR), capped.credit(49 * HOUR)) == (0.8, 0.0)
    assert rules.LateRule().credit(1000 * HOUR) == 1.0


def attempt(key, student, arrivals, total=4):
    right = sum(r for _, r, _ in arrivals)
    return load.Attempt(
        key, student, "hw1/p", "server", arrivals[0][0], right / total, right, total, False, arrivals=tuple(arrivals)
    )


def test_an_answer_is_judged_against_the_deadline_in_force_for_its_student():
    a = attempt("s1", "ann", [(T0 - HOUR, 2, 2), (T0 + 30 * HOUR, 2, 1)])  # 2 right in time, 2 a day+ late
    c = clock.Clock(rules={"hw1": rules.LateRule("per day", 10.0)}, deadlines={"hw1/p": T0})
    j = judge.judge([a], c)[0]
    assert (j.score, j.on_time, j.late, j.penalty) == (pytest.approx(0.5 + 0.5 * 0.8), 0.5, True, pytest.approx(0.1))
    assert j.previous == pytest.approx(0.5 + 0.25 * 0.8)  # one of the late answers was wrong before a regrade
    extended = clock.Clock(deadlines={"hw1/p": T0}, extensions={("ann", "hw1", ""): (None, dt.timedelta(days=2))})
    assert judge.judge([a], extended)[0].late is False
    assert judge.judge(
        [a], clock.Clock(deadlines={"hw1/p": T0}, extensions={("bob", "hw1", ""): (None, dt.timedelta(days=2))})
    )[0].late


def test_late_days_are_spent_oldest_first_and_only_when_they_make_a_question_on_time():
    c = clock.Clock(
        late_days=2,
        deadlines={"hw1/p": T0, "hw1/q": T0 + 24 * HOUR},
        rules={"hw1": rules.LateRule("zero after", 0.0, HOUR / 2)},
    )
    p = attempt("s1", "ann", [(T0 + 30 * HOUR, 4, 4)])  # needs 2 days
    q = load.Attempt(
        "s2", "ann", "hw1/q", "server", T0, 0.0, 4, 4, False, arrivals=((T0 + 25 * HOUR, 4, 4),)
    )  # needs 1 day, but p's deadline is older
    jp, jq = judge.judge([p, q], c)
    assert (jp.late_days, jp.score, jq.late_days, jq.score) == (2, 1.0, 0, 0.0)
    practice = judge.judge([p, q], c, counts_server=lambda label: label != "hw1/p")  # p's answers are practice
    assert (practice[0].late_days, practice[1].late_days, practice[1].score) == (0, 1, 1.0)
    on_time = attempt("s3", "bob", [(T0 - HOUR, 4, 4)])
    late_again = attempt("s4", "bob", [(T0 + 30 * HOUR, 4, 4)])  # a late resubmission of a full score
    assert [x.late_days for x in judge.judge([on_time, late_again], c)] == [0, 0]


def test_assignment_toml_declares_the_time_policy_and_the_server_reads_it(monkeypatch):
    raw = {"time": {"zone": "Europe/Zurich", "late_days": 2, "penalty": "per day", "percent_per_day": 10}}
    policy = parse_policy(raw, "a.toml")
    assert json.loads(policy.time)["late_days"] == 2 and parse_policy(policy.to_dict(), "a.toml") == policy
    with pytest.raises(AssignmentError, match=r"^a\.toml: field 'policy\.time': give a table"):
        parse_policy({"time": 3}, "a.toml")
    monkeypatch.setattr(declared, "of", lambda name: declared.Declared(policy=policy))
    found = clock.declared("hw1")
    assert (found.zone, found.late_days, found.rule.penalty, found.rule.percent_per_day) == (
        "Europe/Zurich",
        2,
        "per day",
        10.0,
    )
    monkeypatch.setattr(declared, "of", lambda name: declared.Declared(policy=Policy(time='{"late_days": -3}')))
    with pytest.raises(rules.TimeError, match="late_days"):
        clock.declared("hw1")
