"""The settings of one grading run, read when a command runs (never at
import): how many questions at once, the sandbox tier, memory and time
limits, whether advisory checks score, the assignment, and the secret seed
with the inputs drawn from it. `grade` and `grade-batch` share the options
that fill them (add_limit_arguments, config_from_args). Each setting is
declared once, with its default, unit, check and help, in
grader/core/settings/grading.py: the defaults below and the flags come from there."""

from dataclasses import dataclass, field

from grader import sandbox
from grader.core import settings
from grader.core.assignment import Assignment
from grader.grading.run import time_limits
from grader.grading.run.inputs import Drawn
from grader.grading.run.slots import Slots


# Memory is what a run's processes really use, together (a control group;
# address space, at twice that, only where no group can be made). A question
# may ask for a multiple: hw1's Q6 holds the MNIST training set (the
# reference peaks near 480 MB resident; correct solutions up to 1.5 GB) and
# gets twice the others' limit; Q5 reads only the test set (~100 MB), the
# others need about 60 MB. Time scales with the machine (time_limits.py).
@dataclass(frozen=True)
class QuestionLimits:
    memory_mb: int = settings.MEMORY_MB.default  # sandbox.Limits.memory_mb too (a test holds them equal)
    seconds: float | None = None  # --timeout: one fixed limit for every question; None: scaled
    multiple: float = time_limits.MULTIPLE
    floor: float = time_limits.FLOOR_SECONDS
    case_floor: float = time_limits.CASE_FLOOR_SECONDS  # a case's own limit (hangs.py), at least


@dataclass(frozen=True)
class RunConfig:
    jobs: int = settings.JOBS.default  # questions run at once (2 cores here)
    tier: str | None = settings.TIER.default  # None: the strongest tier the machine allows
    insecure: bool = settings.INSECURE.default  # grade even where the tier cannot hide our files
    limits: QuestionLimits = QuestionLimits()
    score_advisories: bool = settings.SCORE_ADVISORIES.default  # checks beyond the contract cost points too
    assignment: Assignment = field(default_factory=lambda: Assignment.hw1())  # its handout, data and cases
    overrides: dict = field(default_factory=dict)  # question -> TimeLimit, replacing the computed one
    # The secret seed the scored inputs are drawn from (grading/seeds.py):
    # None for the machine's, "" (seeds.PUBLIC) for the handout's fixed inputs.
    # It never leaves the trusted side: workers get `inputs`, the arrays drawn
    # from it (grading/inputs.py), set with the seed (expected.settled).
    seed: str | None = None
    inputs: Drawn | None = None  # the drawn inputs (None: the public inputs)
    # A batch's shared question slots (grading/run/slots.py): a question's
    # worker runs only holding one, its setup holding a stage pass; or a
    # single grade's (slots.local), shared by all its runs. None: each
    # run_all bounds its own workers by `jobs`.
    slots: Slots | None = None

    def time_limits_now(self, reference: time_limits.ReferenceTimes) -> dict:
        """question -> TimeLimit for a run starting now: --timeout's, else
        scaled from the reference's times (this times the machine now),
        with its cases' own limits (time_limits.with_cases)."""
        limits = self.limits
        computed = time_limits.scaled(
            reference, limits.multiple, limits.floor, fixed=limits.seconds, case_floor=limits.case_floor
        )
        return {**computed, **self.overrides}

    def memory_mb(self, question: str) -> int:
        return self.assignment.registry().memory(question) * self.limits.memory_mb

    def limits_for(self, question: str, time: time_limits.TimeLimit) -> sandbox.Limits:
        return sandbox.Limits(
            memory_mb=self.memory_mb(question), wall_seconds=time.seconds, cpu_seconds=time.cpu_seconds
        )


def add_limit_arguments(parser):
    """The sandbox options shared by `grade` and `grade-batch` (settings.LIMITS)."""
    for setting in settings.LIMITS:
        settings.add_argument(parser, setting)


def add_packages_argument(parser):
    """--packages: the environment student code runs against, for one run (grade, grade-batch, regrade)."""
    settings.add_argument(parser, settings.PACKAGES)


def config_from_args(args, jobs, assignment: Assignment):
    """The RunConfig the parsed options give; ValueError (one line naming the flag) for a bad value."""
    problem = settings.first_problem(args, settings.GRADING)
    if problem:
        raise ValueError(problem)
    return RunConfig(
        jobs=jobs,
        tier=args.tier,
        limits=QuestionLimits(args.memory_mb, args.timeout),
        insecure=args.insecure,
        score_advisories=args.score_advisories,
        assignment=assignment.with_packages(getattr(args, "packages", None)),
    )
