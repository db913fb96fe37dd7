"""`grader similarity DIR [--against PUBLIC_DIR] --out OUT`: which
submissions share unusual code, with each other and with public solutions.

Writes OUT/similarity.csv, OUT/clusters.csv, OUT/index.html and
OUT/fingerprints.json (and, with --decisions FILE, FILE with its blank codes
pinned), each
atomically and only once everything was computed. Exit status: 0 done
(submissions that could not be read are named on stderr and left out), 1
nothing to compare or the handout is unusable, 2 usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grader.core import settings
from grader.core.assignment import Assignment, AssignmentError
from grader.core.files import write_atomic
from grader.similarity import report
from grader.similarity.analysis import Settings, analyse
from grader.similarity.cluster_report import clusters_csv
from grader.similarity.decisions import DISMISSED, STALE, DecisionsError, decisions_csv, read_decisions
from grader.similarity.template import TemplateError, load_template

CSV, HTML, PRINTS, CLUSTERS = "similarity.csv", "index.html", "fingerprints.json", "clusters.csv"


def _usage_error(args):
    folder, out = Path(args.folder), Path(args.out)
    if not folder.is_dir():
        return f"{folder}: not a folder; pass the folder holding one subfolder or .zip per submission"
    if args.against is not None and not Path(args.against).is_dir():
        return f"--against {args.against}: not a folder; pass a folder of public solutions, one subfolder or .zip each"
    if out.exists() and not out.is_dir():
        return f"--out {out}: a file is there; pass a folder for the report"
    if out.resolve() in (folder.resolve(), Path(args.against or folder).resolve()):
        return f"--out {out}: is an input folder; pass a folder of its own for the report"
    decisions = getattr(args, "decisions", None)
    if decisions is not None and Path(decisions).is_dir():
        return f"--decisions {decisions}: a folder; pass a CSV file (created if missing)"
    return settings.first_problem(args, [settings.THRESHOLD])  # also for a caller that skipped the CLI


def write_report(analysis, out: Path) -> None:
    """The four files, each replaced atomically once all four are rendered."""
    texts = {
        CSV: report.csv_text(analysis),
        HTML: report.html_text(analysis),
        PRINTS: report.fingerprints_json(analysis),
        CLUSTERS: clusters_csv(analysis),
    }
    out.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        write_atomic(out / name, text)


def _summary(analysis, out: Path) -> str:
    flagged = [p for p in analysis.pairs if p.flagged]
    top = analysis.pairs[0] if analysis.pairs else None
    best = f"; most similar: {top.a} and {top.b}, {top.similarity:.2f}" if top else ""
    odd = len({f.name for f in analysis.flags})
    decided = [p for p in analysis.pairs if p.decision]
    kept = (
        (
            f"{sum(p.decision == DISMISSED for p in decided)} dismissed, {sum(p.decision == STALE for p in decided)} "
            "decided on older code; "
        )
        if decided
        else ""
    )
    groups = (
        f"{len(analysis.clusters)} clusters (largest {len(analysis.clusters[0].members)}); "
        if analysis.clusters
        else ""
    )
    return (
        f"{len(analysis.pairs)} pairs compared, {len(flagged)} flagged for review{best}; "
        f"{kept}{groups}{odd} submissions to review whatever they score; "
        f"open {out / HTML}"
    )


def similarity_command(args) -> int:
    """`grader similarity`: compare, then write the report."""
    problem = _usage_error(args)
    if problem:
        print(f"grader similarity: {problem}", file=sys.stderr)
        return 2
    try:
        assignment = Assignment.option(args.assignment)
    except AssignmentError as exc:
        print(f"grader similarity: {exc}", file=sys.stderr)
        return 2
    try:
        template = load_template(assignment.handout, assignment.student_files)
    except TemplateError as exc:
        print(f"grader similarity: {exc}", file=sys.stderr)
        return 1
    decisions_path = Path(args.decisions) if getattr(args, "decisions", None) else None
    try:
        decided = read_decisions(decisions_path) if decisions_path else ()
    except DecisionsError as exc:
        print(f"grader similarity: --decisions {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    against = Path(args.against) if args.against else None
    analysis = analyse(
        Path(args.folder), against, template, Settings(threshold=args.threshold), exclude=[out], decided=decided
    )
    for note in analysis.notes:
        print(note, file=sys.stderr)
    for flag in analysis.flags:
        print(report.flag_line(flag), file=sys.stderr)
    if not analysis.pairs:
        print(
            f"grader similarity: {args.folder}: fewer than two readable submissions (and no public one "
            "to compare with); nothing written",
            file=sys.stderr,
        )
        return 1
    write_report(analysis, out)
    if decisions_path is not None:
        write_atomic(decisions_path, decisions_csv(analysis.decisions))
    print(_summary(analysis, out))
    return 0
