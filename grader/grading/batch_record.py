"""OUTDIR/batch.json: what a grade-batch graded and how, so that `grader
regrade OUTDIR` can grade the same submissions folder again with the same
options (the batch's seed stays in OUTDIR/.grading-seed, never here).

    {"format": 1, "submissions": "/abs/path/of/DIR", "assignment": null,
     "options": {"memory_mb": 1024, "timeout": null, "tier": null,
                 "insecure": false, "score_advisories": false}}

`assignment` is null for this repository's hw1, else the assignment folder.
"""
import json
from dataclasses import dataclass
from pathlib import Path

from grader.assignment import Assignment
from grader.paths import ROOT
from grader.files import write_atomic
from grader.grading.batch_names import RECORD
from grader.grading.workers import QuestionLimits, RunConfig

FORMAT = 1


class RecordError(ValueError):
    """batch.json is missing or wrong; the message names the file and field."""


@dataclass(frozen=True)
class BatchRecord:
    submissions: str           # the submissions folder, absolute
    assignment: str | None     # None: hw1 (this repository's assignment.toml)
    memory_mb: int = QuestionLimits.memory_mb
    timeout: float | None = None
    tier: str | None = None
    insecure: bool = False
    score_advisories: bool = False

    def config(self) -> RunConfig:
        """The RunConfig the batch graded with (one question at a time, its seed settled later)."""
        return RunConfig(jobs=1, tier=self.tier, insecure=self.insecure,
                         limits=QuestionLimits(self.memory_mb, self.timeout),
                         score_advisories=self.score_advisories, assignment=Assignment.option(self.assignment))


def from_config(folder, config: RunConfig) -> BatchRecord:
    toml = config.assignment.toml
    assignment = None if toml == ROOT / "assignment.toml" else str(toml.parent)
    return BatchRecord(str(Path(folder).resolve()), assignment, config.limits.memory_mb, config.limits.seconds,
                       config.tier, config.insecure, config.score_advisories)


def render(record: BatchRecord) -> str:
    """The file's text (pure)."""
    options = {"memory_mb": record.memory_mb, "timeout": record.timeout, "tier": record.tier,
               "insecure": record.insecure, "score_advisories": record.score_advisories}
    doc = {"format": FORMAT, "submissions": record.submissions, "assignment": record.assignment, "options": options}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def write(out_root: Path, record: BatchRecord) -> Path:
    path = Path(out_root) / RECORD
    write_atomic(path, render(record))
    return path


def _field(path, doc, name, kinds, required=True):
    value = doc.get(name)
    if (value is None and required) or (value is not None and not isinstance(value, kinds)) \
            or isinstance(value, bool) and bool not in kinds:
        raise RecordError(f"{path}: field {name!r}: missing or of the wrong type; "
                          "run `grader grade-batch DIR --out OUTDIR` again to rewrite it")
    return value


def read(out_root: Path) -> BatchRecord:
    path = Path(out_root) / RECORD
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(f"{path}: missing (the batch was graded by an older grader); run `grader grade-batch "
                          f"DIR --out {out_root}` once (it skips what is graded and records DIR)") from None
    except (OSError, ValueError) as exc:
        raise RecordError(f"{path}: unreadable ({exc}); run `grader grade-batch DIR --out {out_root}` "
                          "again to rewrite it") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise RecordError(f"{path}: field 'format': not {FORMAT}; run `grader grade-batch DIR --out {out_root}` "
                          "again to rewrite it")
    options = _field(path, doc, "options", (dict,))
    return BatchRecord(_field(path, doc, "submissions", (str,)), _field(path, doc, "assignment", (str,), False),
                       _field(path, options, "memory_mb", (int,)), _field(path, options, "timeout", (int, float), False),
                       _field(path, options, "tier", (str,), False), _field(path, options, "insecure", (bool,)),
                       _field(path, options, "score_advisories", (bool,)))
