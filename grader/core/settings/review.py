"""The settings of the instructor's other commands: similarity's review
threshold (grader.similarity), the gradebook export's format
(grader.server.gradebook.exports) and the tolerances `grader publish` sends."""

from .setting import Setting

THRESHOLD = Setting(
    "threshold",
    float,
    0.7,
    "flag pairs at or above this similarity for review (a flag is never a verdict)",
    flag="--threshold",
    positive=True,
    at_most=1,
)
# grader.server.gradebook.exports.FORMATS (a test holds them equal)
EXPORT_FORMATS = ("percent", "plain", "canvas", "moodle")
EXPORT_FORMAT = Setting(
    "export_format",
    str,
    "percent",
    "percent: the gradebook as it shows; plain, canvas, moodle: points per assignment with "
    "e-mail and student ID, in the columns each LMS's gradebook import documents",
    flag="--format",
    choices=EXPORT_FORMATS,
)
PUBLISH_RTOL = Setting(
    "rtol",
    float,
    None,
    "relative tolerance of the published problems",
    flag="--rtol",
    at_least=0,
    shown="the server's (grader/shipped/tolerance.py: RTOL)",
)
PUBLISH_ATOL = Setting(
    "atol",
    float,
    None,
    "absolute tolerance of the published problems",
    flag="--atol",
    at_least=0,
    shown="the server's (grader/shipped/tolerance.py: ATOL)",
)
REVIEW = (THRESHOLD, EXPORT_FORMAT, PUBLISH_RTOL, PUBLISH_ATOL)
