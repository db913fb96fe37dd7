"""The settings of one grading run (`grader grade`, `grade-batch`, `regrade`):
they fill grader.grading.run.config's RunConfig and QuestionLimits, whose
defaults come from here, and the sandbox's time limits
(grader.grading.run.time_limits). Also the instructor client's two
settings that come from the environment."""

import os

from .setting import Setting, number

# The sandbox's tiers, strongest first (grader.sandbox.TIERS; a test holds them equal).
TIERS = ("bwrap", "unshare", "rlimit")

TIME_MULTIPLE = Setting(
    "limits.multiple",
    float,
    10,
    "a question's time limit is this many times the reference's time for it on "
    "this machine now: a correct student epoch takes up to 6x the reference's, and the load changes during a "
    "run",
    unit="x",
    positive=True,
)
TIME_FLOOR = Setting(
    "limits.floor",
    float,
    20,
    "the shortest scaled time limit: the reference's short questions take well under "
    "a second, most of it the sandbox starting, and noise there must not fail honest code",
    unit="s",
    at_least=0,
)
TIMEOUT = Setting(
    "limits.seconds",
    float,
    None,
    "wall-clock and CPU seconds, the same for every question",
    unit="s",
    flag="--timeout",
    metavar="SECONDS",
    positive=True,
    advice="(or leave --timeout out to scale the limits with this machine)",
    shown=f"{number(TIME_MULTIPLE.default)} x the reference's time for the question on this machine now, "
    f"at least {number(TIME_FLOOR.default)} s",
)
MEMORY_MB = Setting(
    "limits.memory_mb",
    int,
    1024,
    "memory in use by all of one question's processes, in MB; a question may ask for a multiple (hw1's Q6: twice)",
    unit="MB",
    flag="--memory-mb",
    at_least=128,
)
TIER = Setting(
    "tier",
    str,
    None,
    "force a sandbox tier",
    flag="--tier",
    choices=TIERS,
    shown="probe: the strongest tier the machine allows",
)
INSECURE = Setting(
    "insecure",
    bool,
    False,
    "grade even where the sandbox cannot hide the reference and answers from student "
    "code (a non-root user without user namespaces); the report says so",
    flag="--insecure",
)
SCORE_ADVISORIES = Setting(
    "score_advisories",
    bool,
    False,
    "also score the checks beyond the course's contract (default: listed, no points)",
    flag="--score-advisories",
)
PACKAGES = Setting(
    "packages",
    str,
    None,
    "run student code and the reference against these pinned packages instead of "
    'assignment.toml\'s [environment], e.g. "numpy==1.26.4 tqdm==4.66.1" to grade an earlier cohort as it '
    "was taught; results record which was used",
    flag="--packages",
    metavar='"NAME==VERSION ..."',
    shown="assignment.toml's [environment]",
)
JOBS = Setting("jobs", int, 2, "questions graded at once", flag="--jobs", at_least=1)
BATCH_JOBS = Setting(
    "batch_jobs",
    int,
    lambda: os.cpu_count() or 1,
    "submissions graded at once (grade-batch: ignored with --cluster)",
    flag="--jobs",
    at_least=1,
    shown="the number of cores",
)

# Where `grader grade` puts its results and how it speaks (grader.grading.commands).
OUT = Setting("out", str, "out", "folder for results.json, junit.xml, report.md", flag="--out", metavar="FOLDER")
OUTPUT_FORMAT = Setting(
    "format",
    str,
    "auto",
    "github: also print annotations on the student's lines and write the job summary ($GITHUB_STEP_SUMMARY); "
    "auto: github on a GitHub Actions runner, else plain",
    flag="--format",
    choices=("auto", "plain", "github"),
)
FAIL_UNDER = Setting(
    "fail_under",
    float,
    None,
    "exit 1 when the score is below this many points (for CI)",
    unit="points",
    flag="--fail-under",
    metavar="POINTS",
    at_least=0,
    shown="never",
)

# grade-batch on a Dask cluster (grader.grading.batch.cluster).
CLUSTER = Setting(
    "cluster",
    str,
    None,
    "grade on this Dask scheduler's workers, one task per submission (the submissions folder must be at the "
    "same path on every worker)",
    flag="--cluster",
    metavar="tcp://HOST:8786",
    valid=lambda v: None if "://" in v else "not a scheduler address; give one such as tcp://HOST:8786",
    shown="none: grade on this machine",
)
NO_WORKER_TIMEOUT = Setting(
    "no_worker_timeout",
    float,
    600,
    "with --cluster: give up the waiting submissions (not graded; a rerun grades them) once the cluster has "
    "had no worker this long",
    unit="s",
    flag="--no-worker-timeout",
    metavar="SECONDS",
    positive=True,
)
BATCH = (CLUSTER, NO_WORKER_TIMEOUT)

# The sandbox options `grade` and `grade-batch` share (grader.grading.run.config.add_limit_arguments).
LIMITS = (TIMEOUT, MEMORY_MB, TIER, INSECURE, SCORE_ADVISORIES, PACKAGES)
GRADE = (OUT, OUTPUT_FORMAT, FAIL_UNDER)  # `grader grade`'s own
GRADING = (JOBS, BATCH_JOBS, *LIMITS, TIME_MULTIPLE, TIME_FLOOR, *GRADE, *BATCH)

# The instructor client (`grader submit`, `grader publish`): the environment gives the defaults.
SERVER_URL = Setting(
    "server_url", str, None, "grading server URL", flag="--server", env="MUGRADE_SERVER", shown="$MUGRADE_SERVER"
)
KEY = Setting("key", str, None, "an instructor key", flag="--key", env="MUGRADE_KEY", shown="$MUGRADE_KEY")
CLIENT = (SERVER_URL, KEY)
