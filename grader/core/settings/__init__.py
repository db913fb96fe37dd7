"""Every setting declared once: its name, type, default, unit, check, help,
command-line flag and environment variable (`Setting`, setting.py). The
flags of `grader grade`, `grade-batch`, `regrade`, `serve` and the client
are generated from these declarations (add_argument), checked by them
(first_problem, one line naming the flag, the value and the fix),
ServerConfig and RunConfig take their defaults from them, and
docs/reference/settings.md is written from them (page.py:
`python -m grader.core.settings`; a test keeps it fresh).

Declared in server.py (SERVER: ServerConfig's fields; SERVE: how `grader
serve` runs), grading.py (GRADING: one grading run; CLIENT) and review.py
(REVIEW: similarity, the gradebook export, publish's tolerances)."""

from .grading import (
    BATCH,
    BATCH_JOBS,
    CLIENT,
    CLUSTER,
    FAIL_UNDER,
    GRADE,
    GRADING,
    INSECURE,
    JOBS,
    KEY,
    LIMITS,
    MEMORY_MB,
    NO_WORKER_TIMEOUT,
    OUT,
    OUTPUT_FORMAT,
    PACKAGES,
    SCORE_ADVISORIES,
    SERVER_URL,
    TIER,
    TIERS,
    TIME_FLOOR,
    TIME_MULTIPLE,
    TIMEOUT,
)
from .review import EXPORT_FORMAT, EXPORT_FORMATS, PUBLISH_ATOL, PUBLISH_RTOL, REVIEW, THRESHOLD
from .server import DB_URL, PORT, RATE, SERVE, SERVE_FLAGS, SERVER
from .setting import Setting, add_argument, declared, defaults, field_values, first_problem

ALL = (*GRADING, *SERVE, *SERVER, *CLIENT, *REVIEW)

__all__ = [
    "ALL",
    "BATCH",
    "BATCH_JOBS",
    "CLIENT",
    "CLUSTER",
    "EXPORT_FORMAT",
    "EXPORT_FORMATS",
    "FAIL_UNDER",
    "GRADE",
    "DB_URL",
    "GRADING",
    "INSECURE",
    "JOBS",
    "KEY",
    "LIMITS",
    "MEMORY_MB",
    "NO_WORKER_TIMEOUT",
    "OUT",
    "OUTPUT_FORMAT",
    "PACKAGES",
    "PUBLISH_ATOL",
    "PUBLISH_RTOL",
    "PORT",
    "RATE",
    "REVIEW",
    "SCORE_ADVISORIES",
    "SERVE",
    "SERVE_FLAGS",
    "SERVER",
    "SERVER_URL",
    "Setting",
    "THRESHOLD",
    "TIER",
    "TIERS",
    "TIME_FLOOR",
    "TIME_MULTIPLE",
    "TIMEOUT",
    "add_argument",
    "declared",
    "defaults",
    "field_values",
    "first_problem",
]
