"""Which batch an OUTDIR of `grade-batch` holds, for `import-batch`.

A batch is identified by the assignment it is imported as and by what
grade-batch recorded in OUTDIR/batch.json (the submissions folder it graded
and the assignment folder it graded against): never by the OUTDIR's name.
Two OUTDIRs both named `out/` are two batches; the same OUTDIR moved or
renamed is the same batch; one batch imported as hw1 and as hw2 is two.
An imported result is (assignment, batch, student); importing touches only
the results of its own assignment and batch.

Results imported before batches had an identity (revision 0007) carry their
label as their batch ("label:<label>"); an import of the same assignment
under the same label takes them over (`BatchIdentity.legacy`).
"""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from grader.grading.batch import record as batch_record

RUN, LEGACY = "run:", "label:"


class BatchUnknown(ValueError):
    """An OUTDIR without a readable batch.json; the message names the file and the fix."""


@dataclass(frozen=True)
class BatchIdentity:
    assignment: str  # the assignment's name on the server
    batch: str  # "run:" + sha256 of the provenance batch.json records
    label: str  # how the gradebook names the batch (--source, else the OUTDIR's name)
    graded_from: str  # the submissions folder batch.json records

    @property
    def legacy(self) -> str:
        """The batch of this label's results imported before revision 0007."""
        return LEGACY + self.label


def provenance_key(submissions: str, assignment_folder) -> str:
    """The batch of a grade-batch run, from what its batch.json records (pure)."""
    doc = json.dumps({"submissions": submissions, "assignment": assignment_folder}, sort_keys=True)
    return RUN + hashlib.sha256(doc.encode("utf-8", "surrogatepass")).hexdigest()


def identify(outdir: Path, assignment: str, label: str) -> BatchIdentity:
    try:
        record = batch_record.read(outdir)
    except batch_record.RecordError as e:
        raise BatchUnknown(str(e)) from None
    return BatchIdentity(assignment, provenance_key(record.submissions, record.assignment), label, record.submissions)
