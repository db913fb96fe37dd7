"""OUTDIR/batch.json: what a grade-batch graded and how, so that `grader
regrade OUTDIR` can grade the same submissions folder again with the same
options (never a seed: it grades on the course secret, grading/run/seeds.py).

    {"format": 1, "submissions": "/abs/path/of/DIR", "assignment": null,
     "options": {"memory_mb": 1024, "timeout": null, "tier": null,
                 "insecure": false, "score_advisories": false, "packages": null}}

`assignment` is null for this repository's hw1, else the assignment folder;
`packages` is null for the assignment's declared [environment], else the
list --packages gave (a record without it: null).
"""

import json
from dataclasses import dataclass
from pathlib import Path

from grader.core.assignment import Assignment
from grader.core.files import write_atomic
from grader.grading.batch.names import RECORD
from grader.grading.run.config import QuestionLimits, RunConfig

FORMAT = 1


class RecordError(ValueError):
    """batch.json is missing or wrong; the message names the file and field."""


@dataclass(frozen=True)
class BatchRecord:
    submissions: str  # the submissions folder, absolute
    assignment: str | None  # None: hw1 (this repository's assignment.toml)
    memory_mb: int = QuestionLimits.memory_mb
    timeout: float | None = None
    tier: str | None = None
    insecure: bool = False
    score_advisories: bool = False
    packages: tuple | None = None  # None: the assignment's [environment]; else --packages

    def config(self) -> RunConfig:
        """The RunConfig the batch graded with (one question at a time, its seed settled later)."""
        assignment = Assignment.hw1() if self.assignment is None else Assignment.option(self.assignment)
        if self.packages is not None:
            assignment = assignment.with_packages(" ".join(self.packages))
        return RunConfig(
            jobs=1,
            tier=self.tier,
            insecure=self.insecure,
            limits=QuestionLimits(self.memory_mb, self.timeout),
            score_advisories=self.score_advisories,
            assignment=assignment,
        )


def from_config(folder, config: RunConfig) -> BatchRecord:
    toml = config.assignment.toml
    assignment = None if config.assignment.is_hw1 else str(toml.parent)
    chosen = config.assignment.packages_from == "--packages"
    return BatchRecord(
        str(Path(folder).resolve()),
        assignment,
        config.limits.memory_mb,
        config.limits.seconds,
        config.tier,
        config.insecure,
        config.score_advisories,
        tuple(config.assignment.packages) if chosen else None,
    )


def render(record: BatchRecord) -> str:
    """The file's text (pure)."""
    options = {
        "memory_mb": record.memory_mb,
        "timeout": record.timeout,
        "tier": record.tier,
        "insecure": record.insecure,
        "score_advisories": record.score_advisories,
        "packages": None if record.packages is None else list(record.packages),
    }
    doc = {"format": FORMAT, "submissions": record.submissions, "assignment": record.assignment, "options": options}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def write(out_root: Path, record: BatchRecord) -> Path:
    path = Path(out_root) / RECORD
    write_atomic(path, render(record))
    return path


def _field(path, doc, name, kinds, required=True):
    value = doc.get(name)
    if (
        (value is None and required)
        or (value is not None and not isinstance(value, kinds))
        or isinstance(value, bool)
        and bool not in kinds
    ):
        raise RecordError(
            f"{path}: field {name!r}: missing or of the wrong type; "
            "run `grader grade-batch DIR --out OUTDIR` again to rewrite it"
        )
    return value


def read(out_root: Path) -> BatchRecord:
    path = Path(out_root) / RECORD
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(
            f"{path}: missing (the batch was graded by an older grader); run `grader grade-batch "
            f"DIR --out {out_root}` once (it skips what is graded and records DIR)"
        ) from None
    except (OSError, ValueError) as exc:
        raise RecordError(
            f"{path}: unreadable ({exc}); run `grader grade-batch DIR --out {out_root}` again to rewrite it"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise RecordError(
            f"{path}: field 'format': not {FORMAT}; run `grader grade-batch DIR --out {out_root}` again to rewrite it"
        )
    options = _field(path, doc, "options", (dict,))
    return BatchRecord(
        _field(path, doc, "submissions", (str,)),
        _field(path, doc, "assignment", (str,), False),
        _field(path, options, "memory_mb", (int,)),
        _field(path, options, "timeout", (int, float), False),
        _field(path, options, "tier", (str,), False),
        _field(path, options, "insecure", (bool,)),
        _field(path, options, "score_advisories", (bool,)),
        _packages(path, options),
    )


def _packages(path, options) -> tuple | None:
    value = _field(path, options, "packages", (list,), False)
    if value is not None and not all(isinstance(p, str) and p for p in value):
        raise RecordError(f"{path}: field 'packages': give a list of NAME==VERSION strings, or null")
    return None if value is None else tuple(value)
