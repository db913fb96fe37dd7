"""Every setting declared once: its name, type, default, unit, check, help,
command-line flag and environment variable (`Setting`, setting.py). The
flags of `grader grade`, `grade-batch`, `regrade`, `serve` and the client
are generated from these declarations (add_argument), checked by them
(first_problem, one line naming the flag, the value and the fix),
ServerConfig and RunConfig take their defaults from them, and
docs/reference/settings.md is written from them (page.py:
`python -m grader.core.settings`; a test keeps it fresh).

Declared in server.py (SERVER: ServerConfig's fields; SERVE: how `grader
serve` runs) and grading.py (GRADING: one grading run; CLIENT)."""

from .grading import (
    BATCH_JOBS,
    CLIENT,
    GRADING,
    INSECURE,
    JOBS,
    KEY,
    LIMITS,
    MEMORY_MB,
    PACKAGES,
    SCORE_ADVISORIES,
    SERVER_URL,
    TIER,
    TIERS,
    TIME_FLOOR,
    TIME_MULTIPLE,
    TIMEOUT,
)
from .server import DB_URL, PORT, RATE, SERVE, SERVE_FLAGS, SERVER
from .setting import Setting, add_argument, declared, defaults, field_values, first_problem

ALL = (*GRADING, *SERVE, *SERVER, *CLIENT)

__all__ = [
    "ALL",
    "BATCH_JOBS",
    "CLIENT",
    "DB_URL",
    "GRADING",
    "INSECURE",
    "JOBS",
    "KEY",
    "LIMITS",
    "MEMORY_MB",
    "PACKAGES",
    "PORT",
    "RATE",
    "SCORE_ADVISORIES",
    "SERVE",
    "SERVE_FLAGS",
    "SERVER",
    "SERVER_URL",
    "Setting",
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
