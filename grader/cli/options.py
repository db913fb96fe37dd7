"""Each command's options, declared for the command line (grader/cli/__init__.py
maps each command to one of these and to the function it calls). Options
that are settings come from their declarations (grader/core/settings)."""

import importlib

from grader.core import settings
from grader.core.policy import COUNTS, PICKS

# One meaning of --assignment in every command (Assignment.option reads it).
ASSIGNMENT_HELP = "the assignment: a folder holding an assignment.toml, or hw1 for this repository's (default: hw1)"


def _assignment(parser):
    parser.add_argument("--assignment", metavar="FOLDER|hw1", help=ASSIGNMENT_HELP)


def _grade(parser):
    from grader.grading.run.config import add_limit_arguments

    parser.add_argument(
        "submission",
        nargs="?",
        help="handout folder, .zip of one, or folder with the "
        "student files (omitted: grade the reference and the empty handout)",
    )
    for setting in (settings.OUT, settings.JOBS, settings.OUTPUT_FORMAT, settings.FAIL_UNDER):
        settings.add_argument(parser, setting)
    _assignment(parser)
    add_limit_arguments(parser)


def _grade_batch(parser):
    from grader.grading.run.config import add_limit_arguments

    parser.add_argument("folder", help="folder holding one subfolder or .zip per submission")
    parser.add_argument("--out", required=True, help="folder for one result folder per submission and gradebook.csv")
    settings.add_argument(parser, settings.BATCH_JOBS)
    for setting in settings.BATCH:
        settings.add_argument(parser, setting)
    parser.add_argument("--force", action="store_true", help="regrade submissions already graded")
    _assignment(parser)
    add_limit_arguments(parser)


def _regrade(parser):
    from grader.grading.run.config import add_packages_argument

    parser.add_argument("outdir", help="the --out folder of grader grade-batch (it remembers the submissions folder)")
    parser.add_argument(
        "--apply",
        action="store_true",
        help="put the new results in place (old ones kept as results.prev-TIME.json), rewrite "
        "gradebook.csv and append to audit.log (default: a dry run writing regrade.csv only)",
    )
    settings.add_argument(parser, settings.BATCH_JOBS)
    add_packages_argument(parser)


def _similarity(parser):
    parser.add_argument("folder", help="folder holding one subfolder or .zip per submission (as grade-batch's)")
    parser.add_argument(
        "--against",
        metavar="PUBLIC_DIR",
        help="also compare each submission with these public solutions (one subfolder or .zip each)",
    )
    parser.add_argument("--out", required=True, help="folder for similarity.csv, index.html and fingerprints.json")
    settings.add_argument(parser, settings.THRESHOLD)
    parser.add_argument(
        "--decisions",
        metavar="FILE",
        help="CSV of confirmed/dismissed pairs with a note, kept across runs (created if missing; "
        "a decision holds until either side's code changes)",
    )
    _assignment(parser)


def _gradescope_bundle(parser):
    parser.add_argument("out", help="the zip to write, e.g. autograder.zip (upload it to Gradescope)")


def _classroom50(parser):
    parser.add_argument(
        "outdir",
        help="the folder to write (absent or empty); put it at "
        "CLASSROOM/autograders/ASSIGNMENT/ in your classroom50 repository",
    )
    _assignment(parser)


def _db(parser):
    settings.add_argument(parser, settings.DB_URL)


def _serve(parser):
    for setting in settings.SERVE_FLAGS:  # declared in grader/core/settings/server.py
        settings.add_argument(parser, setting)


def _users(parser):
    _db(parser)
    parser.add_argument(
        "action",
        choices=["add", "import", "list", "reissue-key", "revoke", "remove"],
        help="add NAME; import ROSTER (adds new people, updates changed ones, lists who is "
        "missing, removes nobody); list; reissue-key NAME (a new key, the old one ends); "
        "revoke NAME (the key ends until reissued); remove NAME (for good, history kept)",
    )
    parser.add_argument(
        "target",
        nargs="?",
        help="the user name, or the roster CSV (import) with columns name[,role][,email][,student_id]",
    )
    parser.add_argument(
        "--role",
        choices=["student", "ta", "instructor"],
        default="student",
        help="add: their role (a TA reads the gradebook and students' pages, and changes nothing)",
    )
    parser.add_argument("--email", help="add: their e-mail (import-batch matches result folders by it)")
    parser.add_argument("--student-id", help="add: their student (SIS) ID, which the Canvas and Moodle exports carry")
    parser.add_argument(
        "--out", help="import: write the new people's name,role,key CSV here (mode 600) instead of stdout"
    )
    parser.add_argument("--dry-run", action="store_true", help="import: print what would change, change nothing")


def _gradebook(parser):
    _db(parser)
    parser.add_argument("--out", required=True, help="CSV file to write (replaced atomically)")
    settings.add_argument(parser, settings.EXPORT_FORMAT)
    parser.add_argument(
        "--roster",
        metavar="FILE",
        help="a roster CSV whose student_id column gives each student's (SIS) ID (default: the "
        "IDs stored on the accounts by `grader users`)",
    )


def _policy(parser):
    parser.add_argument(
        "action",
        choices=("show", "set", "clear"),
        help="show the policy in force, set the course's override, or clear it (back to the "
        "assignment.toml's [policy], else the default)",
    )
    _db(parser)
    parser.add_argument("--assignment", default="hw1", metavar="NAME", help="the assignment's name on the server")
    parser.add_argument(
        "--counts",
        choices=COUNTS,
        help="set: which grade counts: auto (a sandboxed grade once the question has one, else "
        "the server's cases), sandboxed, server, or best of both",
    )
    parser.add_argument("--pick", choices=PICKS, help="set: the best or the last submission of what counts")
    parser.add_argument("--question", metavar="KEY", help="set: for this question only (e.g. forward)")


def _import_batch(parser):
    parser.add_argument("outdir", help="the --out folder of grader grade-batch (one folder per student)")
    _db(parser)
    parser.add_argument(
        "--assignment",
        default="hw1",
        metavar="NAME",
        help="the assignment's name on the server, as `grader publish` and the students' "
        "submit name it (for a folder's assignment: the name in its assignment.toml)",
    )
    parser.add_argument(
        "--source",
        help="label the gradebook shows for this batch (default: the folder's "
        "name); the batch itself is identified by its batch.json and "
        "--assignment, and its regraded results replace its earlier ones",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what the import would change (new, replaced and unchanged results, old "
        "and new scores) and write nothing",
    )
    parser.add_argument(
        "--map",
        metavar="CSV",
        help="folder,user lines: the student account (name or e-mail) "
        "of each result folder that its name, e-mail or key does not match",
    )
    parser.add_argument(
        "--create-missing",
        action="store_true",
        help="make a student account for each folder that matches none (default: refuse and list them)",
    )


def _client_common(parser):
    parser.add_argument("-k", dest="select", help="pytest -k expression choosing submit_* functions (default: all)")
    settings.add_argument(parser, settings.SERVER_URL)
    parser.add_argument("--tests", help="test files, relative to --dir (default: tests/ASSIGNMENT)")


def _submit(parser):
    parser.add_argument("key", help="your key")
    parser.add_argument("assignment", help="assignment name, e.g. hw1")
    parser.add_argument("--dir", default=".", help="project folder whose code computes the values")
    _client_common(parser)


def _publish(parser):
    settings.add_argument(parser, settings.KEY)
    parser.add_argument(
        "--assignment",
        default="hw1",
        metavar="FOLDER|NAME",
        help=ASSIGNMENT_HELP + "; or a name only the server knows (then pass --dir)",
    )
    parser.add_argument("--dir", help="folder with the reference solution (default: the assignment's reference)")
    parser.add_argument(
        "--deadline",
        help="ISO 8601 deadline of each problem published (with -k: only those), e.g. 2026-02-01T23:59:00+00:00",
    )
    settings.add_argument(parser, settings.PUBLISH_RTOL)
    settings.add_argument(parser, settings.PUBLISH_ATOL)
    _client_common(parser)


def _none(parser):
    pass


def _folders(parser):
    parser.add_argument("src", nargs="?", help="the reference folder (default: the assignment's, reference/)")
    parser.add_argument("dest", nargs="?", help="the handout folder (default: the assignment's, handout/)")
    _assignment(parser)


def _handout(parser):
    _folders(parser)
    parser.add_argument(
        "--skip-tests", action="store_true", help="skip running the public tests (leak check still runs)"
    )


def _time(name):
    """The options of a time-policy command, declared by grader.server.gradebook.timing.commands."""
    return lambda parser: importlib.import_module("grader.server.gradebook.timing.commands").declare(name, parser)
