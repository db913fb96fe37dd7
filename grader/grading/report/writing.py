"""The report files of one graded submission, written atomically into its
folder. Their names are defined here only; grade-batch, regrade, the Dask
cluster and the server's importer read them by these names."""

from pathlib import Path

from grader.core.files import write_atomic
from grader.grading.report import results as report

RESULTS = "results.json"  # Gradescope's schema; the one file every reader of a result folder needs
JUNIT = "junit.xml"
MARKDOWN = "report.md"
REPORT_FILES = (RESULTS, JUNIT, MARKDOWN)


def write_reports(rep, out_dir: Path):
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(out_dir / RESULTS, report.gradescope_json(rep))
    write_atomic(out_dir / JUNIT, report.junit_xml(rep))
    write_atomic(out_dir / MARKDOWN, report.markdown(rep))
