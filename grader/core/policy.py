"""An assignment's [policy] table: which grade counts, declared once (the
server may override it per course), and the error every assignment.toml
problem raises. Read by grader/core/assignment.py and the server."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # an assignment or question key; also a Python package prefix


class AssignmentError(ValueError):
    """assignment.toml is missing or wrong; the message names the file and field."""


def check_fields(path, raw, known, prefix):
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise AssignmentError(f"{path}: unknown field '{prefix}{unknown[0]}'; the fields are {', '.join(known)}")


# [policy]: which grade counts, declared once per assignment (the server may override it per course).
#   counts: "auto" (a sandboxed grade, grade-batch imported or Gradescope, once the assignment has one,
#           else the server's submit cases), "sandboxed", "server", or "best of both" (declared, never a default)
#   pick:   "best" or "last" submission of the counted source
#   [policy.questions.KEY] counts/pick for one question
#   [policy.time] zone, late days, late penalty: kept as JSON here, read by grader.server.gradebook.timing.rules
COUNTS = ("auto", "sandboxed", "server", "best of both")
PICKS = ("best", "last")


@dataclass(frozen=True)
class Policy:
    counts: str = "auto"
    pick: str = "best"
    questions: tuple = ()  # (question key, counts, pick), sorted by key
    # (question key, server case indexes): the server's submit cases the grader calls advisory
    # (beyond the assignment): answered and shown, never scored. [policy.questions.KEY] advisory_server_cases
    advisory: tuple = ()
    time: str = ""  # [policy.time] as JSON ("": none); its fields are checked by grader.server.gradebook.timing.rules

    def of(self, question: str) -> tuple:
        """(counts, pick) for one question key."""
        return next(((c, p) for k, c, p in self.questions if k == question), (self.counts, self.pick))

    def to_dict(self) -> dict:
        """The [policy] table as data (parse_policy reads it back)."""
        doc = {"counts": self.counts, "pick": self.pick}
        if self.questions:
            doc["questions"] = {k: {"counts": c, "pick": p} for k, c, p in self.questions}
        for key, cases in self.advisory:
            doc.setdefault("questions", {}).setdefault(key, {})["advisory_server_cases"] = list(cases)
        if self.time:
            doc["time"] = json.loads(self.time)
        return doc

    def advisory_cases(self, question: str) -> frozenset:
        """The server case indexes of one question that earn no points."""
        return frozenset(next((c for k, c in self.advisory if k == question), ()))


def parse_policy(raw, where) -> Policy:
    """A [policy] table (or the same as JSON) as a Policy; AssignmentError names the field and the choices."""
    if not isinstance(raw, dict):
        raise AssignmentError(f"{where}: field 'policy': give a table ([policy])")
    check_fields(where, raw, ("counts", "pick", "questions", "time"), "policy.")
    if not isinstance(raw.get("time", {}), dict):
        raise AssignmentError(f"{where}: field 'policy.time': give a table ([policy.time])")
    time = json.dumps(raw["time"], sort_keys=True, default=str) if "time" in raw else ""
    counts = _choice(raw, "counts", COUNTS, "auto", where, "policy.")
    pick = _choice(raw, "pick", PICKS, "best", where, "policy.")
    questions = raw.get("questions", {})
    if not isinstance(questions, dict):
        raise AssignmentError(f"{where}: field 'policy.questions': give tables [policy.questions.KEY]")
    out, advisory = [], []
    for key, entry in sorted(questions.items()):
        prefix = f"policy.questions.{key}."
        if not NAME.match(key) or not isinstance(entry, dict):
            raise AssignmentError(f"{where}: field 'policy.questions.{key}': give a table named by a question key")
        check_fields(where, entry, ("counts", "pick", "advisory_server_cases"), prefix)
        out.append(
            (
                key,
                _choice(entry, "counts", COUNTS, counts, where, prefix),
                _choice(entry, "pick", PICKS, pick, where, prefix),
            )
        )
        cases = entry.get("advisory_server_cases", [])
        if not isinstance(cases, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in cases
        ):
            raise AssignmentError(
                f"{where}: field '{prefix}advisory_server_cases': give a list of server case "
                "indexes (0, 1, ...), as /me numbers them"
            )
        if cases:
            advisory.append((key, tuple(sorted(set(cases)))))
    return Policy(counts, pick, tuple(out), tuple(advisory), time)


def _choice(raw, field, choices, default, where, prefix):
    value = raw.get(field, default)
    if value not in choices:
        raise AssignmentError(
            f"{where}: field '{prefix}{field}': {str(value)[:40]!r} is not one of {', '.join(repr(c) for c in choices)}"
        )
    return value
