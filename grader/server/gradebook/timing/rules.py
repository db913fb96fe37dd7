"""The time policy as data, and times and durations as people type them.

assignment.toml declares it once, under [policy.time]:

    [policy.time]
    zone = "Europe/Zurich"   # the course's zone: a deadline typed without one is in it
    late_days = 3            # each student's budget over the course, spent on late questions
    penalty = "per day"      # "none" (default), "per day" or "zero after"
    percent_per_day = 10     # per day: each started day late costs this percent of a late answer
    cutoff = "3d"            # late answers after the deadline + this earn nothing ("zero after": required)

The server may override the zone and budget for the course, and the rule per
assignment (`grader course ...`). Every error is one line naming the field.
"""

import datetime as dt
import json
import math
import re
from dataclasses import dataclass
from typing import Optional
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

PENALTIES = ("none", "per day", "zero after")
FIELDS = ("zone", "late_days", "penalty", "percent_per_day", "cutoff")
DURATION = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$")
DAY = dt.timedelta(days=1)
SHOWN = "%Y-%m-%d %H:%M"


class TimeError(ValueError):
    """A time policy, time, zone or duration that does not read; one line naming the field and the fix."""


@dataclass(frozen=True)
class LateRule:
    penalty: str = "none"
    percent_per_day: float = 0.0
    cutoff: Optional[dt.timedelta] = None  # None: none

    def credit(self, late_by: dt.timedelta) -> float:
        """The share of its points an answer keeps when it arrived `late_by` after its deadline (> 0)."""
        if self.cutoff is not None and late_by > self.cutoff:
            return 0.0
        if self.penalty == "per day":
            return max(0.0, 1.0 - self.percent_per_day / 100.0 * math.ceil(late_by / DAY))
        return 1.0

    def to_dict(self) -> dict:
        doc = {"penalty": self.penalty}
        if self.penalty == "per day":
            doc["percent_per_day"] = self.percent_per_day
        if self.cutoff is not None:
            doc["cutoff"] = duration_text(self.cutoff)
        return doc

    def describe(self) -> str:
        if self.penalty == "none":
            return "none: late answers count in full (and are marked late)"
        after = f"; nothing after {duration_text(self.cutoff)} late" if self.cutoff is not None else ""
        if self.penalty == "per day":
            return f"per day: {self.percent_per_day:g}% of a late answer per started day late{after}"
        return f"zero after: late answers count in full until {duration_text(self.cutoff)} late, nothing after"


@dataclass(frozen=True)
class TimePolicy:
    zone: str = ""  # "": none declared
    late_days: int = 0
    rule: LateRule = LateRule()


def parse(raw, where: str) -> TimePolicy:
    """A [policy.time] table (or its JSON) as a TimePolicy."""
    if not isinstance(raw, dict):
        raise TimeError(f"{where}: field 'policy.time': give a table ([policy.time])")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise TimeError(f"{where}: unknown field 'policy.time.{unknown[0]}'; the fields are {', '.join(FIELDS)}")
    zone = raw.get("zone", "")
    if zone:
        check_zone(zone, f"{where}: field 'policy.time.zone'")
    days = raw.get("late_days", 0)
    if not isinstance(days, int) or isinstance(days, bool) or not 0 <= days <= 365:
        raise TimeError(f"{where}: field 'policy.time.late_days': give a whole number of days, 0-365")
    return TimePolicy(zone, days, parse_rule(raw, where))


def parse_rule(raw: dict, where: str) -> LateRule:
    penalty = raw.get("penalty", "none")
    if penalty not in PENALTIES:
        raise TimeError(
            f"{where}: field 'policy.time.penalty': {str(penalty)[:40]!r} is not one of "
            + ", ".join(repr(p) for p in PENALTIES)
        )
    percent = raw.get("percent_per_day", 0)
    if penalty == "per day" and (
        isinstance(percent, bool) or not isinstance(percent, (int, float)) or not 0 < percent <= 100
    ):
        raise TimeError(f"{where}: field 'policy.time.percent_per_day': give a percent above 0, at most 100, e.g. 10")
    cutoff = raw.get("cutoff")
    if penalty == "zero after" and cutoff is None:
        raise TimeError(f'{where}: field \'policy.time.cutoff\': "zero after" needs one, e.g. cutoff = "2d"')
    if penalty == "none" and cutoff is not None:
        raise TimeError(
            f'{where}: field \'policy.time.cutoff\': penalty "none" has no cutoff; use penalty = "zero after"'
        )
    span = None if cutoff is None else parse_duration(cutoff, f"{where}: field 'policy.time.cutoff'")
    return LateRule(penalty, float(percent) if penalty == "per day" else 0.0, span)


def rule_json(rule: LateRule) -> str:
    return json.dumps(rule.to_dict(), sort_keys=True)


def check_zone(zone, where: str) -> str:
    try:
        if not isinstance(zone, str) or not zone or zone != zone.strip():
            raise ValueError
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise TimeError(
            f"{where}: {str(zone)[:40]!r} is not a time zone; give an IANA name such as "
            "Europe/Zurich or America/Los_Angeles"
        ) from None
    return zone


def parse_duration(text, where: str) -> dt.timedelta:
    """'2d', '36h', '1d12h', '90m' as a timedelta (positive)."""
    m = DURATION.match(str(text).strip().lstrip("+")) if isinstance(text, str) else None
    if not m or not any(m.groups()) or not any(int(g or 0) for g in m.groups()):
        raise TimeError(
            f"{where}: {str(text)[:40]!r} is not a duration; give days, hours and/or minutes such as 2d, 36h or 1d12h"
        )
    d, h, mins = (int(g or 0) for g in m.groups())
    if d > 3650:
        raise TimeError(f"{where}: {text!r} is more than ten years; give a shorter duration")
    return dt.timedelta(days=d, hours=h, minutes=mins)


def duration_text(span: dt.timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    d, rest = divmod(minutes, 1440)
    h, m = divmod(rest, 60)
    return "".join(f"{n}{u}" for n, u in ((d, "d"), (h, "h"), (m, "m")) if n) or "0m"


def parse_when(text: str, zone: str, where: str) -> dt.datetime:
    """An ISO 8601 time as naive UTC; one typed without a zone is in the course's `zone`, and
    refused when the course declares none."""
    try:
        t = dt.datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        raise TimeError(f"{where}: {str(text)[:40]!r} is not a time; give ISO 8601 such as 2026-02-01T23:59") from None
    if t.tzinfo is None:
        if not zone:
            raise TimeError(
                f"{where}: {str(text)[:40]!r} has no time zone and the course declares none; add one "
                f"({t:%Y-%m-%dT%H:%M}+01:00) or declare the course's (grader course set-zone "
                "Europe/Zurich)"
            )
        t = t.replace(tzinfo=ZoneInfo(zone))
    try:
        utc = t.astimezone(dt.timezone.utc).replace(tzinfo=None)
    except OverflowError:
        raise TimeError(f"{where}: {str(text)[:40]!r} is out of range; give a year between 1970 and 2999") from None
    if not 1970 <= utc.year <= 2999:
        raise TimeError(f"{where}: {str(text)[:40]!r} is out of range; give a year between 1970 and 2999")
    return utc


def shown(when: Optional[dt.datetime], zone: str) -> str:
    """A stored (naive UTC) time in the course's zone and in UTC: '2026-02-01 23:59 CET (2026-02-01 22:59 UTC)'."""
    if when is None:
        return "none"
    utc = when.replace(tzinfo=dt.timezone.utc)
    if not zone:
        return f"{utc:{SHOWN}} UTC"
    local = utc.astimezone(ZoneInfo(zone))
    return f"{local:{SHOWN}} {local.tzname()} ({utc:{SHOWN}} UTC)"
