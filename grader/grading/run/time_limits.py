"""Per-question time limits that scale with the machine.

A fixed limit fails correct but slow code on a busy machine, and the course
imposes none of that kind. So each question's limit is a multiple of the
reference's own time for that question, measured on this machine:

- when the expected answers are built (expected.py), each question's worker
  is timed on the reference and recorded in the cache's meta.json, with the
  time a fixed small numpy workload took then;
- when a submission is graded, the same workload is timed again, and the
  ratio (now / then) says how much slower this machine is now than when the
  reference was timed (another machine, or the same one busier); a faster
  machine keeps the limits measured (the ratio is at least 1). A grading
  within RECENT_SECONDS of the grader's last timing (in its own process, or
  another's, kept in the private cache) reuses it (`recent_workload_seconds`).

limit = max(floor, multiple x the reference's time x that ratio); the CPU
time rlimit is the same number of seconds. `--timeout` replaces it with one
fixed number for every question. The defaults (multiple and floor) are
declared, with their reasons, in grader/core/settings/grading.py.

Within its question's limit each case has its own (CaseLimits; hangs.py
enforces it): its share of the question's limit by the reference's time for
the case beyond CASE_NOISE_SECONDS (each case's seconds are recorded too),
at least CASE_FLOOR_SECONDS; and a worker restarted after a case hung may
take RESTART_MULTIPLE x the worker's own start here (the reference's time
for the question beyond its cases'), at least RESTART_FLOOR_SECONDS, to
start, beyond what is left.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.core import settings
from grader.core.background import Background
from grader.grading.run import cache

# A correct student epoch takes up to 6x the reference's (measured on real
# submissions): 10x leaves room for that and for the load changing during a run.
MULTIPLE = settings.TIME_MULTIPLE.default
# The reference's short questions take well under a second, most of it the
# sandbox starting; the floor keeps noise there from failing honest code.
FLOOR_SECONDS = settings.TIME_FLOOR.default
# The reference's cases take milliseconds: a case's own limit never goes below
# this, so that a busy machine's scheduling never stops an honest case.
CASE_FLOOR_SECONDS = 3.0
# A case's share counts its time beyond this, a few scheduler time slices: a
# millisecond case once caught by a busy build must not get a big share.
CASE_NOISE_SECONDS = 0.01
# A restarted worker's start (sandbox, Python, numpy, the library: about
# 0.3 s here) is not charged to its question's cases, up to this allowance.
RESTART_MULTIPLE = 2
RESTART_FLOOR_SECONDS = 2.0
# Only the trusted reference runs under this, while its times are measured:
# a guard against a hang, not a limit anything should reach.
BUILD_SECONDS = 600
# The student's `make test` (the handout's tests/hw1/hw1_cases/limits.json) runs
# each question under the limit these give by the same rule (handout_limits):
# the reference's seconds per question as measured here (2 cores, shared),
# rounded up. Declared, not measured at each build: the handout is committed
# and must rebuild identically, and a student's machine has no reference to time.
HANDOUT_REFERENCE_SECONDS = {
    "forward": 2.5,
    "backward": 2.5,
    "topo_sort": 1.5,
    "compute_gradient": 2.0,
    "softmax_loss_ndl": 2.0,
    "nn_epoch_ndl": 6.5,
}


@dataclass(frozen=True)
class CaseLimits:
    """Each case's own limit within its question's, and a restart's allowance (hangs.py)."""

    seconds: tuple  # (case, seconds) pairs
    restart: float  # seconds a restarted worker may take to start, beyond what its question has left
    why: str  # how the cases' limits were derived, for the report

    def of(self, case: str) -> float | None:
        return dict(self.seconds).get(case)


@dataclass(frozen=True)
class TimeLimit:
    """One question's wall-clock limit and, for the report, how it was derived."""

    seconds: float
    why: str  # "limit: ...", appended to a timeout's reason
    cases: CaseLimits | None = None  # None: no case has a limit of its own, no restart allowance

    @property
    def cpu_seconds(self) -> int:
        return max(1, math.ceil(self.seconds))

    def case_seconds(self, case: str) -> float:
        """`case`'s own limit (never more than the question's)."""
        own = self.cases.of(case) if self.cases is not None else None
        return self.seconds if own is None else min(own, self.seconds)

    @property
    def restart(self) -> float:
        return self.cases.restart if self.cases is not None else 0.0


@dataclass(frozen=True)
class ReferenceTimes:
    """What building the expected answers measured: the reference's wall
    seconds per question (its worker's) and per case (question -> case ->
    seconds, as its worker timed each), and the calibration workload's
    seconds then."""

    question_seconds: dict
    workload_seconds: float
    case_seconds: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "question_seconds": self.question_seconds,
            "workload_seconds": self.workload_seconds,
            "case_seconds": self.case_seconds,
        }

    @classmethod
    def from_json(cls, doc: dict) -> ReferenceTimes:
        cases = {q: {c: float(s) for c, s in times.items()} for q, times in doc.get("case_seconds", {}).items()}
        return cls(dict(doc["question_seconds"]), float(doc["workload_seconds"]), cases)


def _workload(rounds: int = 100) -> None:
    """A fixed small job in the style of the homework: elementwise numpy on
    one MNIST-sized batch, in a Python loop. No matrix product: BLAS may use
    more threads here than in the single-threaded workers."""
    x = np.linspace(-1.0, 1.0, 100 * 784, dtype=np.float32).reshape(100, 784)
    for _ in range(rounds):
        z = np.exp(x - x.max(axis=1, keepdims=True))
        x = x + np.float32(0.01) * (z / z.sum(axis=1, keepdims=True))


def workload_seconds(repeats: int = 3) -> float:
    """Wall seconds the workload takes here, now (about 9 ms on a quiet
    core, a few scheduler time slices): the median of `repeats` runs, so
    that one lucky or unlucky run does not set the limits, after a shorter
    one that warms the caches and spends the head start the scheduler gives
    a process that was sleeping (the grader mostly waits on its workers).
    The first worker of a grading waits for it: 4 x 18 ms with twice the
    rounds, 0.04 s a grading saved here."""
    _workload(25)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        _workload()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# How old a timing of the machine may be and still stand for "now". A batch's
# pool process grades a submission every few seconds, and a TA or a CI job
# runs `grader grade` after `grader grade`; timing the machine for each took
# 0.1 s of CPU (8% of a grading process's own) and held its first worker back
# as long. Load that grows within this window is caught at the next timing;
# until then the limits keep their 10x margin.
RECENT_SECONDS = 30.0
# The last timing, kept in the private cache for this user's next grading
# (its modification time: when it was taken). Only the grader writes there.
KEPT = "machine-timing"
_recent: tuple | None = None  # (time.time() when timed, seconds): this process's last timing
_timing = threading.Lock()  # one timing at a time: two at once would slow each other down


def recent_workload_seconds(folder: Path | None = None, clock=time.time) -> float:
    """workload_seconds(), timed again only when the last timing is older
    than RECENT_SECONDS: this process's (a forked process keeps its
    parent's), else the one kept in `folder` (the private cache) by another
    grading, which a new timing replaces."""
    global _recent
    with _timing:
        now = clock()
        if _recent is None or not _fresh(now, _recent[0]):
            kept = (folder or cache.private_root()) / KEPT
            _recent = _read_kept(kept, now)
            if _recent is None:
                _recent = (now, workload_seconds())
                _keep(kept, *_recent)
        return _recent[1]


def _fresh(now: float, when: float) -> bool:
    return 0 <= now - when <= RECENT_SECONDS


def _read_kept(path: Path, now: float) -> tuple | None:
    """(when, seconds) of the kept timing if it is fresh and a sane number, else None."""
    try:
        seconds, when = float(path.read_text(encoding="utf-8")), path.stat().st_mtime
    except (OSError, ValueError):
        return None
    return (when, seconds) if _fresh(now, when) and 0 < seconds < 60 else None  # a timing takes milliseconds


def _keep(path: Path, when: float, seconds: float) -> None:
    """Write the timing atomically, dated `when`; a cache that cannot be written keeps nothing."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{KEPT}-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(repr(seconds))
        os.utime(tmp, (when, when))
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


class Measuring(Background, Mapping):
    """question -> TimeLimit, computed by `compute()` in a thread started
    now: the workload (0.1 s here, unless a recent timing stands) runs
    while the submission's copy and the runner are built, and the first
    worker waits for it only if it is not done yet. A failure is raised
    where a limit is first read."""

    def __init__(self, compute):
        super().__init__(compute, name="time-limits")

    def __getitem__(self, question):
        return self.value()[question]

    def __iter__(self):
        return iter(self.value())

    def __len__(self):
        return len(self.value())


def given(seconds: float) -> TimeLimit:
    """--timeout: the same fixed limit for every question."""
    return TimeLimit(seconds, f"limit: {seconds:g} s, set by --timeout")


def building() -> TimeLimit:
    return TimeLimit(BUILD_SECONDS, f"limit: {BUILD_SECONDS} s, the guard while the reference's times are measured")


def scaled(
    reference: ReferenceTimes,
    multiple: float = MULTIPLE,
    floor: float = FLOOR_SECONDS,
    now: float | None = None,
    fixed: float | None = None,
    case_floor: float = CASE_FLOOR_SECONDS,
) -> dict:
    """question -> TimeLimit for a run starting now, each with its cases'
    own limits. `now`: the workload's seconds here now (when None, the
    grader's recent timing: recent_workload_seconds). `fixed` (--timeout):
    every question's limit, in seconds (then the machine is not timed: a
    restart's allowance is as measured)."""
    if now is None:
        now = reference.workload_seconds if fixed is not None else recent_workload_seconds()
    # Never below 1: the parent's workload feels other load more than the
    # workers in their control groups do, so a build timed while the machine
    # was busy could otherwise make a quiet machine's limits too tight.
    slower = max(1.0, now / reference.workload_seconds)
    limits = {}
    for question, then in reference.question_seconds.items():
        here = then * slower
        how = f"{multiple:g} x the reference's {here:.1f} s on this machine"
        if slower > 1:  # no parentheses: the report puts this text in some
            how += f" now: {then:.1f} s when its answers were built, x {slower:.2f} as the machine is slower now"
        limit = given(fixed) if fixed is not None else _limit(here, multiple, floor, how)
        cases = reference.case_seconds.get(question, {})
        limits[question] = with_cases(limit, cases, max(0.0, then - sum(cases.values())) * slower, case_floor)
    return limits


def with_cases(limit: TimeLimit, cases: dict, start: float, case_floor: float = CASE_FLOOR_SECONDS) -> TimeLimit:
    """`limit` with its cases' own limits: each case's share of it by
    `cases` (case -> the reference's seconds), at least `case_floor`; and
    the restart allowance for a worker that starts in `start` seconds."""
    counted = {case: max(0.0, s - CASE_NOISE_SECONDS) for case, s in cases.items()}
    total = sum(counted.values())
    own = tuple(
        (case, round(min(limit.seconds, max(case_floor, limit.seconds * s / total if total > 0 else 0.0)), 1))
        for case, s in counted.items()
    )
    restart = round(max(RESTART_FLOOR_SECONDS, RESTART_MULTIPLE * start), 1)
    why = (
        f"its share of its question's {limit.seconds:g} s by the reference's time for it, "
        f"at least {min(case_floor, limit.seconds):g} s"
    )
    return dataclasses.replace(limit, cases=CaseLimits(own, restart, why))


def together(limits: dict) -> TimeLimit:
    """One worker's limit for the questions of `limits` (question ->
    TimeLimit) run in it one after the other: the longest of theirs, each
    case keeping its own, the longest restart allowance. Hangs cost at most
    what they cost when each question had a worker running beside the
    others; honest code needs a fraction of it (the light questions' limits
    are the floor, many times what the reference takes)."""
    seconds = max(t.seconds for t in limits.values())
    return _one_worker(limits, seconds, f"limit: {seconds:g} s, the longest of its questions' limits")


def shared(limits: dict) -> TimeLimit:
    """The limit of a submission's worker shared by the questions of `limits`
    (question -> TimeLimit), run one after the other: the sum of theirs (each
    question's time is its own, as in a worker apiece), each case keeping
    its own limit."""
    seconds = round(sum(t.seconds for t in limits.values()), 1)
    return _one_worker(limits, seconds, f"limit: {seconds:g} s, the sum of its questions' limits")


def _one_worker(limits: dict, seconds: float, how: str) -> TimeLimit:
    """A TimeLimit of `seconds` for the questions of `limits` in one worker: each case keeps its own."""
    why = f"{how} ({', '.join(limits)}), run in one worker"
    owned = [t.cases for t in limits.values() if t.cases is not None]
    if not owned:
        return TimeLimit(seconds, why)
    cases = CaseLimits(tuple(pair for c in owned for pair in c.seconds), max(c.restart for c in owned), owned[0].why)
    return TimeLimit(seconds, why, cases)


def _limit(here: float, multiple: float, floor: float, how: str) -> TimeLimit:
    if multiple * here >= floor:
        return TimeLimit(round(multiple * here, 1), f"limit: {how}")
    return TimeLimit(floor, f"limit: the {floor:g} s floor, more than {how}")


def handout_limits(multiple: float = MULTIPLE, floor: float = FLOOR_SECONDS) -> dict:
    """question -> TimeLimit for the student's own run: the grader's rule on the declared reference times."""
    return {
        q: _limit(s, multiple, floor, f"{multiple:g} x the reference's {s:g} s, its time on the grader's machine")
        for q, s in HANDOUT_REFERENCE_SECONDS.items()
    }
