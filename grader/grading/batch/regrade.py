"""`grader regrade OUTDIR [--apply]`: grade a batch again with the current
grader, and say whose score moves and why.

grade-batch recorded in OUTDIR/batch.json the submissions folder and its
options; it graded on the course secret (or, for a batch of an earlier
grader, on the seed it kept in OUTDIR/.grading-seed), so that an unchanged
submission draws the same inputs. For each submission, the
inputs grading it now would record (provenance.INPUTS: its files' sha256,
the cases', the reference's, the grader's version and environment, the
seed's id, the scoring mode) are compared with those its results.json
records: when they match, the result stands and is not graded again;
otherwise it is graded into a staging folder, and the reasons are the
inputs that differ (submission, cases, reference, grader changed).

A dry run (the default) changes no result: it writes OUTDIR/regrade.csv,
one row per submission whose score or any case's verdict changed (name,
old total, new total, the cases whose verdict changed, why), prints a
summary, and keeps the results it graded in OUTDIR/.regrade-staged.
`--apply` puts the new results in place, keeping each replaced
results.json beside it as results.prev-<time>.json, rewrites gradebook.csv
and appends what changed to OUTDIR/audit.log (who, when). It grades
nothing that the dry run already graded on the same inputs (a staged
result whose provenance inputs equal those of grading it now is applied as
it is; a submission or case changed since is graded again), so a dry run
followed by --apply costs one grading. A new result that is a grader error
never replaces a graded one.
"""

import dataclasses
import datetime as dt
import getpass
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.core import csvsafe
from grader.core.assignment import packages_option
from grader.core.files import write_atomic
from grader.grading.batch import record as batch_record
from grader.grading.batch import setup as batch_setup
from grader.grading.batch.book import BatchGradebook
from grader.grading.batch.jobs import Job
from grader.grading.batch.names import AUDIT_LOG, GRADEBOOK, REGRADE_CSV, STAGED, find_submissions
from grader.grading.batch.run import Progress, run_jobs
from grader.grading.report import provenance
from grader.grading.report import results as report
from grader.grading.report.orchestrate import submission_digest
from grader.grading.report.writing import REPORT_FILES, RESULTS
from grader.grading.run import cache, expected, seeds

NEW_SUBMISSION = "new submission"
HEADER = ["submission", "old total", "new total", "cases changed", "why"]


@dataclass(frozen=True)
class Pending:
    """A submission whose recorded inputs differ from the current ones."""

    name: str
    path: Path
    old: dict | None  # its parsed results.json (None: never graded)
    reasons: tuple


@dataclass(frozen=True)
class Change:
    """One submission graded again: its old and new result."""

    name: str
    old_total: float | None  # None: no earlier result
    new_total: float
    cases: tuple  # "square_range: passed -> failed", per case whose verdict changed
    reasons: tuple
    grader_error: bool = False  # the new result is a grader error (never applied over a graded one)

    @property
    def moved(self) -> bool:
        return self.old_total != self.new_total or bool(self.cases)


@dataclass(frozen=True)
class Outcome:
    changes: tuple  # Change per submission graded again
    standing: tuple  # names whose result stands (not graded again)
    orphans: tuple  # result folders with no submission in the folder any more (kept)
    reused: tuple = ()  # --apply: names whose dry-run result was applied without grading again


def _read_results(folder: Path):
    try:
        doc = json.loads((folder / RESULTS).read_text(encoding="utf-8"))
        return doc if isinstance(doc, dict) and "score" in doc else None
    except (OSError, ValueError):
        return None


def current_inputs(config, submission: Path) -> dict:
    """The provenance inputs grading `submission` now would record."""
    digest = submission_digest(submission, config.assignment)
    scoring = report.STRICT_MODE if config.score_advisories else report.CONTRACT_MODE
    made = provenance.make(config.assignment, submission, digest, seeds.seed_id(config.seed), "", scoring)
    return provenance.current_inputs(made)


def pending(out_root: Path, folder: Path, config) -> tuple:
    """(Pending per submission to grade again, names whose result stands, orphan result folders)."""
    todo, standing = [], []
    found = find_submissions(folder, exclude=[out_root])
    for name, path in found:
        old = _read_results(out_root / name)
        if old is None:
            todo.append(Pending(name, path.resolve(), None, (NEW_SUBMISSION,)))
            continue
        reasons = provenance.why_changed(provenance.inputs(old), current_inputs(config, path))
        if reasons:
            todo.append(Pending(name, path.resolve(), old, reasons))
        else:
            standing.append(name)
    names = {name for name, _ in found}
    orphans = sorted(
        p.name
        for p in out_root.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name not in names and (p / RESULTS).is_file()
    )
    return tuple(todo), tuple(standing), tuple(orphans)


def _verdicts(doc) -> dict:
    tests = doc.get("tests") if isinstance(doc, dict) else None
    return {t.get("name"): t.get("status") for t in tests or [] if isinstance(t, dict)}


def compare(item: Pending, new: dict) -> Change:
    """What grading again changed for one submission (pure)."""
    old, fresh = _verdicts(item.old or {}), _verdicts(new)
    cases = tuple(
        f"{name}: {old.get(name) or 'absent'} -> {fresh.get(name) or 'absent'}"
        for name in sorted(set(old) | set(fresh), key=str)
        if old.get(name) != fresh.get(name)
    )
    error = provenance.inputs(new).get("status") == provenance.GRADER_ERROR
    old_total = None if item.old is None else float(item.old.get("score", 0.0))
    return Change(item.name, old_total, float(new.get("score", 0.0)), cases if item.old else (), item.reasons, error)


def _total(value) -> str:
    return "" if value is None else report.fmt_points(value)


def render_csv(changes) -> str:
    """regrade.csv (pure): a row per submission whose score or a verdict changed, by name."""
    rows = [
        [
            c.name,
            "" if c.old_total is None else csvsafe.Number(_total(c.old_total)),
            csvsafe.Number(_total(c.new_total)),
            "; ".join(c.cases),
            "; ".join(c.reasons),
        ]
        for c in sorted(changes, key=lambda c: c.name)
        if c.moved
    ]
    return csvsafe.render([HEADER, *rows])


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def audit_entry(changes, applied: tuple, when: str, user: str, out_root: str) -> str:
    """The lines --apply appends to audit.log (pure): one for the run, one
    per result replaced, tab-separated: time, user, submission, old -> new, why, cases."""
    moved = [c for c in changes if c.name in applied]
    lines = [
        f"{when}\t{_one_line(user)}\tregrade --apply {_one_line(out_root)}: {len(moved)} result(s) replaced, "
        f"{sum(c.moved for c in moved)} score(s) or verdicts changed"
    ]
    for c in sorted(moved, key=lambda c: c.name):
        lines.append(
            f"{when}\t{_one_line(user)}\t{c.name}\t{_total(c.old_total) or '-'} -> {_total(c.new_total)}"
            f"\t{'; '.join(c.reasons)}\t{'; '.join(c.cases)}"
        )
    return "\n".join(lines) + "\n"


def who() -> str:
    """The user from the environment (and who ran sudo, if anyone)."""
    user = os.environ.get("USER") or os.environ.get("LOGNAME") or getpass.getuser()
    sudo = os.environ.get("SUDO_USER")
    return f"{user} (sudo by {sudo})" if sudo and sudo != user else user


def _stamp(now: dt.datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ")


def _append(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _put_in_place(staged: Path, dest: Path, stamp: str) -> None:
    """The staged reports replace dest's; the old results.json stays as results.prev-<stamp>.json."""
    dest.mkdir(parents=True, exist_ok=True)
    old = dest / RESULTS
    if old.is_file():
        write_atomic(dest / f"results.prev-{stamp}.json", old.read_bytes())
    for name in REPORT_FILES:
        if (staged / name).is_file():
            os.replace(staged / name, dest / name)


def regrade(out_root: Path, jobs: int, apply: bool, stream=None, packages: str | None = None) -> Outcome:
    """Grade again what changed; write regrade.csv, and with `apply` the new
    results. `packages` ("numpy==1.26.4 ...") replaces the environment the
    batch was graded in (batch.json keeps the new one once applied)."""
    out_root = Path(out_root)
    chosen = packages_option(packages)  # a bad --packages says so before anything is read
    record = batch_record.read(out_root)
    if chosen is not None:
        record = dataclasses.replace(record, packages=chosen)
    folder = Path(record.submissions)
    if not folder.is_dir():
        raise batch_record.RecordError(
            f"{out_root / batch_record.RECORD}: field 'submissions': {folder} is not "
            "a folder any more; put the submissions back there"
        )
    seed = seeds.batch_seed(out_root, cache.cache_root())  # the batch's inputs: the course's (or its own)
    config = dataclasses.replace(record.config(), seed=seed)
    todo, standing, orphans = pending(out_root, folder, config)
    changes = []
    staging = Path(tempfile.mkdtemp(prefix=".regrade-", dir=out_root))
    try:
        reused = _reuse_staged(out_root / STAGED, staging, todo, config) if apply else ()
        grade = [p for p in todo if p.name not in reused]
        if grade:
            config = expected.settled(config)  # the course's inputs, drawn once here
            setup = batch_setup.start(config, jobs)  # answers, feedback values: cached, else built alongside
            progress = Progress(len(grade), stream)
            try:
                run_jobs([Job(p.name, p.path, staging / p.name, config) for p in grade], jobs, on_done=progress.update)
            finally:
                setup.finish()
        for item in todo:
            new = _read_results(staging / item.name)
            if new is not None:
                changes.append(compare(item, new))
        write_atomic(out_root / REGRADE_CSV, render_csv(changes))
        if apply:
            _apply(out_root, staging, changes, config)
            batch_record.write(out_root, record)  # a --packages regrade: later ones keep its environment
            shutil.rmtree(out_root / STAGED, ignore_errors=True)
        else:
            _keep_staged(out_root, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Outcome(tuple(changes), standing, orphans, tuple(sorted(reused)))


def _reuse_staged(staged: Path, staging: Path, todo, config) -> tuple:
    """Move into `staging` each result of the last dry run that grading now
    would reproduce (the same provenance inputs, graded); their names."""
    reused = []
    for item in todo:
        doc = _read_results(staged / item.name)
        found = provenance.inputs(doc) if doc is not None else {}
        if not found or found.get("status") != provenance.GRADED:
            continue
        if provenance.why_changed(found, current_inputs(config, item.path)) == ():
            shutil.move(staged / item.name, staging / item.name)
            reused.append(item.name)
    return tuple(reused)


def _keep_staged(out_root: Path, staging: Path) -> None:
    """The dry run's results replace the previous dry run's, for --apply."""
    old = out_root / STAGED
    if old.exists():
        trash = Path(tempfile.mkdtemp(prefix=".regrade-old-", dir=out_root))
        os.replace(old, trash / "x")
        shutil.rmtree(trash, ignore_errors=True)
    os.replace(staging, old)
    staging.mkdir()  # (the finally clause removes it again)


def _apply(out_root: Path, staging: Path, changes, config) -> None:
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    stamp = _stamp(now)
    applied = tuple(c.name for c in changes if not (c.grader_error and c.old_total is not None))
    for name in applied:
        _put_in_place(staging / name, out_root / name, stamp)
    BatchGradebook(out_root, config.assignment.registry().questions).write()
    when = now.isoformat().replace("+00:00", "Z")
    _append(out_root / AUDIT_LOG, audit_entry(changes, applied, when, who(), str(out_root)))


def summary(outcome: Outcome, out_root: Path, apply: bool) -> str:
    """The few lines `grader regrade` prints."""
    changes = outcome.changes
    moved = sorted((c for c in changes if c.moved), key=lambda c: c.name)
    lines = [
        f"regrade of {out_root}: {len(changes) + len(outcome.standing)} submission(s): "
        f"{len(changes)} graded again (inputs changed), {len(outcome.standing)} unchanged (result reused)"
    ]
    lines.append(f"{len(moved)} score(s) or verdicts change" + (":" if moved else ""))
    width = max((len(c.name) for c in moved), default=0)
    for c in moved:
        lines.append(
            f"  {c.name:<{width}}  {_total(c.old_total) or '-':>6} -> {_total(c.new_total):<6}  {'; '.join(c.reasons)}"
        )
    kept = [c.name for c in changes if c.grader_error and c.old_total is not None]
    if kept:
        lines.append(f"the grader failed on {', '.join(kept)}: {'kept the old result' if apply else 'not applied'}")
    if outcome.orphans:
        lines.append(
            f"{len(outcome.orphans)} result(s) without a submission any more, kept: {', '.join(outcome.orphans)}"
        )
    if apply:
        lines.append(
            f"{len(outcome.reused)} taken from the dry run as it graded them, "
            f"{len(changes) - len(outcome.reused)} graded now"
        )
        lines.append(
            f"applied: new results in place (old ones kept as results.prev-*.json), "
            f"{out_root / GRADEBOOK} rewritten, logged in {out_root / AUDIT_LOG}"
        )
    else:
        lines.append(
            f"dry run: no result changed; the list is in {out_root / REGRADE_CSV}; "
            f"apply it with `grader regrade {out_root} --apply`"
        )
    return "\n".join(lines)
