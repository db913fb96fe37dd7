"""The grading commands: `grader grade`, `grade-batch`, `regrade`,
`gradescope-bundle` and `classroom50`. Each parses what the CLI gave it,
calls the module that does the work, prints the outcome and returns the
exit status; nothing imports from here.
"""

import sys
import time
from pathlib import Path

from grader.core import datadir, settings
from grader.core.assignment import Assignment
from grader.grading.batch import cluster
from grader.grading.batch import record as batch_record
from grader.grading.batch.names import GRADEBOOK, find_submissions
from grader.grading.batch.regrade import regrade, summary
from grader.grading.batch.run import grade_batch
from grader.grading.platforms import ci
from grader.grading.platforms.classroom50 import Classroom50Error, write_autograder
from grader.grading.platforms.gradescope import BundleError, build_bundle
from grader.grading.report import results as report
from grader.grading.report.orchestrate import grade_to, refusal
from grader.grading.report.writing import RESULTS
from grader.grading.run import seeds
from grader.grading.run.config import config_from_args

EXIT_REFUSED = 3  # `grader grade`: the submission cannot be read (the reason is one line on stderr)


def grade_command(args) -> int:
    """`grader grade`: one submission (or, with none, the reference and the handout)."""
    try:
        config = config_from_args(args, max(1, args.jobs), Assignment.option(args.assignment))
        datadir.ensure(config.assignment)
    except ValueError as exc:
        print(f"grader grade: {exc}", file=sys.stderr)
        return 2
    if args.submission is None:  # the demo: 100 for the reference, 0 for the handout
        assignment = config.assignment
        targets = [
            (assignment.reference, Path(args.out) / "reference"),
            (assignment.handout, Path(args.out) / "handout"),
        ]
    elif not Path(args.submission).exists():
        print(f"grader grade: {args.submission}: no such file or folder", file=sys.stderr)
        return 2
    else:
        targets = [(Path(args.submission), Path(args.out))]
    status = 0
    for submission, out in targets:
        rep, ok = grade_to(submission, out, config)
        status = max(status, _show(rep, ok, submission, out, args))
    return status


def _show(rep, ok, submission, out, args) -> int:
    """Print one submission's outcome (and its GitHub outputs); its exit status."""
    if not ci.wanted(getattr(args, "format", "auto")):
        return _print_outcome(rep, ok, submission, out, args)
    ci.emit_github(rep)  # our own lines, every message escaped
    with ci.commands_stopped():  # the rest quotes paths and reasons we do not control
        return _print_outcome(rep, ok, submission, out, args)


def _print_outcome(rep, ok, submission, out, args) -> int:
    if refusal(rep):
        print(f"grader grade: {refusal(rep)} (results in {out}/{RESULTS})", file=sys.stderr)
        return EXIT_REFUSED
    print(
        f"{submission}: {report.fmt_points(rep.score)}/{rep.max_score}  (sandbox {rep.tier}, "
        f"{rep.execution_time:.1f} s, reports in {out}/)"
    )
    print(report.score_table(rep))
    if not ok:
        print(rep.error, file=sys.stderr)
        return 1
    fail_under = getattr(args, "fail_under", None)
    if fail_under is not None and rep.score < fail_under:
        print(
            f"grader grade: score {report.fmt_points(rep.score)} is below --fail-under {report.fmt_points(fail_under)}",
            file=sys.stderr,
        )
        return 1
    return 0


def _batch_usage_error(args):
    """One line saying what is wrong with grade-batch's arguments, or None."""
    folder = Path(args.folder)
    if not folder.is_dir():
        return f"{folder}: not a folder; pass the folder holding one subfolder or .zip per submission"
    out = Path(args.out)
    if out.resolve() == folder.resolve():
        return f"--out {out}: is the submissions folder; pass a folder of its own for the results"
    if (out / GRADEBOOK).is_dir():
        return f"--out {out}: {GRADEBOOK} there is a folder (left by an older grader); move it away"
    problem = settings.first_problem(args, settings.BATCH)  # also for a caller that skipped the CLI
    if problem:
        return problem
    try:
        if not find_submissions(folder, exclude=[args.out]):
            return f"{folder}: no subfolder or .zip in it; put one per submission there"
    except ValueError as exc:
        return f"{folder}: {exc}"
    return None


def grade_batch_command(args) -> int:
    """`grader grade-batch`: every submission under a folder, into one gradebook."""
    problem = _batch_usage_error(args)
    if problem:
        print(f"grader grade-batch: {problem}", file=sys.stderr)
        return 2
    try:
        # one question at a time: N submissions use N cores
        config = config_from_args(args, 1, Assignment.option(args.assignment))
        datadir.ensure(config.assignment)
    except ValueError as exc:
        print(f"grader grade-batch: {exc}", file=sys.stderr)
        return 2
    start = time.monotonic()
    try:
        results, skipped = grade_batch(
            args.folder,
            args.out,
            args.jobs,
            args.force,
            config=config,
            address=args.cluster,
            patience=args.no_worker_timeout,
        )
    except cluster.ClusterError as exc:  # the cluster cannot be reached or used
        print(f"grader grade-batch: {exc}", file=sys.stderr)
        return 1
    if skipped:
        print(f"skipped {len(skipped)} already graded (use --force to regrade them)", file=sys.stderr)
    failed = [d for d in results if not d.ok]
    for done in failed:
        print(f"{done.name}: {done.error}", file=sys.stderr)
    ungraded = sum(not d.graded for d in results)
    print(
        f"graded {len(results) - ungraded} submission(s) in {time.monotonic() - start:.1f} s"
        f"{f', {len(failed) - ungraded} with a grader error' if len(failed) > ungraded else ''}"
        f"{f', {ungraded} not graded (run again to retry them)' if ungraded else ''}; "
        f"gradebook: {Path(args.out) / GRADEBOOK}"
    )
    return 1 if ungraded else 0


def regrade_command(args) -> int:
    """`grader regrade`: a batch graded again with the current grader."""
    out_root = Path(args.outdir)
    if not out_root.is_dir():
        print(f"grader regrade: {out_root}: not a folder; pass the --out folder of grader grade-batch", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print(f"grader regrade: --jobs {args.jobs}: must be at least 1", file=sys.stderr)
        return 2
    start = time.monotonic()
    try:
        outcome = regrade(out_root, args.jobs, args.apply, packages=args.packages)
    except (batch_record.RecordError, seeds.SeedError, ValueError) as exc:
        print(f"grader regrade: {exc}", file=sys.stderr)
        return 2
    print(summary(outcome, out_root, args.apply))
    print(f"({time.monotonic() - start:.1f} s)", file=sys.stderr)
    return 0


def gradescope_bundle_command(args) -> int:
    """`grader gradescope-bundle`: the autograder zip to upload to Gradescope."""
    if not args.out.endswith(".zip"):
        print(
            f"grader gradescope-bundle: {args.out}: the bundle must end in .zip; e.g. autograder.zip", file=sys.stderr
        )
        return 2
    try:
        count = build_bundle(Path(args.out))
    except BundleError as exc:
        print(f"grader gradescope-bundle: {exc}", file=sys.stderr)
        return 1
    size = Path(args.out).stat().st_size
    print(f"{args.out}: {count} files, {size / 1024:.0f} KB; upload it as the Gradescope autograder")
    return 0


def classroom50_command(args) -> int:
    """`grader classroom50 OUTDIR`: Classroom 50's autograder folder for the public cases."""
    try:
        count = write_autograder(Path(args.outdir), Assignment.option(args.assignment))
    except Classroom50Error as exc:
        print(f"grader classroom50: {exc}", file=sys.stderr)
        return 2
    print(
        f"{args.outdir}: {count} files; commit it as CLASSROOM/autograders/ASSIGNMENT/ in your "
        "classroom50 repository (docs: instructor/ci/classroom50.md)"
    )
    return 0
