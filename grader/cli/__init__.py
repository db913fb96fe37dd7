"""Command line: declares every command and its options, and calls one
function per command (COMMANDS names it), with the parsed options.

A command's module is imported only when the command runs (or asks for its
--help), so `grader --help` stays fast and a server-less install can grade.
Exit codes: 0 done, 1 the command failed, 2 usage error (grade: 3, the
submission cannot be read).
"""

import argparse
import importlib
import os
import sys
from importlib import metadata

from grader.cli.options import (  # each command's options
    _classroom50,
    _folders,
    _grade,
    _grade_batch,
    _gradebook,
    _gradescope_bundle,
    _handout,
    _import_batch,
    _none,
    _policy,
    _publish,
    _regrade,
    _serve,
    _similarity,
    _submit,
    _time,
    _users,
)
from grader.core import blas, settings

# command -> (its options, "module:function" it calls with the parsed options, one-line help)
COMMANDS = {
    "grade": (
        _grade,
        "grader.grading.commands:grade_command",
        "grade one submission (folder, .zip, or the student files) in a sandbox",
    ),
    "grade-batch": (
        _grade_batch,
        "grader.grading.commands:grade_batch_command",
        "grade every submission under a folder in parallel into a gradebook",
    ),
    "regrade": (
        _regrade,
        "grader.grading.commands:regrade_command",
        "grade a batch again with the current grader: whose score moves and why (--apply to apply)",
    ),
    "similarity": (
        _similarity,
        "grader.similarity.commands:similarity_command",
        "rank pairs of submissions (and public solutions) by the solution code they share",
    ),
    "gradescope-bundle": (
        _gradescope_bundle,
        "grader.grading.commands:gradescope_bundle_command",
        "build a Gradescope autograder zip",
    ),
    "classroom50": (
        _classroom50,
        "grader.grading.commands:classroom50_command",
        "write a Classroom 50 autograder folder (autograder.py) grading the public cases",
    ),
    "handout": (
        _handout,
        "grader.handout.commands:handout_command",
        "generate handout/ from reference/ (solutions stripped, leak-checked)",
    ),
    "check-handout": (
        _folders,
        "grader.handout.commands:check_handout_command",
        "fail if the committed handout/ differs from a fresh build",
    ),
    "serve": (_serve, "grader.server.commands:serve_command", "run the grading server (mugrade compatible)"),
    "users": (
        _users,
        "grader.server.commands:users_command",
        "add, import (sync a roster), list, reissue-key, revoke or remove users of the grading server",
    ),
    "gradebook": (_gradebook, "grader.server.commands:gradebook_command", "export the server's gradebook as CSV"),
    "policy": (
        _policy,
        "grader.server.commands:policy_command",
        "show or set which grade counts for an assignment (sandboxed, server, best or last)",
    ),
    "course": (
        _time("course"),
        "grader.server.gradebook.timing.commands:course_command",
        "show or set the course's time zone, late-day budget and late penalty",
    ),
    "deadline": (
        _time("deadline"),
        "grader.server.gradebook.timing.commands:deadline_command",
        "set a question's deadline (or every question's of an assignment); earlier answers are re-judged",
    ),
    "extension": (
        _time("extension"),
        "grader.server.gradebook.timing.commands:extension_command",
        "grant, clear or list a student's extension (a new deadline or added time)",
    ),
    "changes": (
        _time("changes"),
        "grader.server.gradebook.timing.commands:changes_command",
        "the log of changes to deadlines, extensions, late policy and verdicts (regrades)",
    ),
    "import-batch": (
        _import_batch,
        "grader.server.gradebook.importer:import_batch_command",
        "import grade-batch results into the server's gradebook",
    ),
    "submit": (
        _submit,
        "grader.client.submit:submit_command",
        "run the submit_* cases here and send the values to the server",
    ),
    "publish": (
        _publish,
        "grader.client.submit:publish_command",
        "run the submit_* cases on reference/ and publish the answers",
    ),
    "demo": (
        _none,
        "grader.grading.demo:demo_command",
        "train one MNIST epoch with the reference and print loss and error",
    ),
}


class _DefaultsFormatter(argparse.HelpFormatter):
    """Show every option's default, unless its help already names one."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)"


def _version() -> str:
    try:
        return metadata.version("needle-grader")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _parser():
    parser = argparse.ArgumentParser(prog="grader", description="needle hw1 autograding harness")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, _, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text, formatter_class=_DefaultsFormatter)
    return parser, sub


def build_parser():
    """The whole parser, every command's options declared (the docs' command reference reads it)."""
    parser, sub = _parser()
    for name, (declare, _, _) in COMMANDS.items():
        declare(sub.choices[name])
    return parser


# Commands whose process ends as soon as their output is flushed: once a
# grade's reports (a batch's gradebook) are written nothing is left to do,
# and the interpreter's teardown (430 modules, numpy's among them) took
# 0.03 s of a 0.9 s grade. A batch's pool has been shut down by then.
ENDS_AT_ONCE = frozenset({"grade", "grade-batch"})
# Work a command starts before importing its module, to go on beside those
# imports: grade-batch's process pool server imports the grader too.
STARTS_FIRST = {"grade-batch": "grader.grading.batch.pool:start_server"}


def run() -> None:
    """The process's entry (`grader`, `python -m grader`): main(), then exit."""
    argv = sys.argv[1:]
    code = main(argv)
    if argv and argv[0] in ENDS_AT_ONCE:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # a reader that left: main has said so already
            pass
        os._exit(code)
    sys.exit(code)


def main(argv=None):
    blas.use_here()  # before any command loads numpy
    try:
        try:
            return _main(sys.argv[1:] if argv is None else list(argv))
        finally:
            # Every way out (argparse's --help and --version exit too): what is
            # still buffered meets a closed pipe here, not at interpreter exit.
            sys.stdout.flush()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `grader ... | head -1`: the reader left; no traceback, and no second
        # error when Python flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def _main(argv: list) -> int:
    if argv and argv[0] in STARTS_FIRST:
        _load(STARTS_FIRST[argv[0]])()
    parser, sub = _parser()
    # Parse the command name first, then declare only that command's options.
    if not argv or argv[0] not in COMMANDS:
        parser.parse_args(argv or ["--help"])
        return 2
    command = argv[0]
    declare, target, _ = COMMANDS[command]
    command_parser = sub.choices[command]
    declare(command_parser)
    run = _load(target)
    # The command's own parser: a bad option gets that command's usage, not the top level's.
    args = command_parser.parse_args(argv[1:])
    problem = settings.first_problem(args, settings.declared(command_parser))  # one line, before any work
    if problem:
        print(f"grader {command}: {problem}", file=sys.stderr)
        return 2
    return int(run(args) or 0)


def _load(target: str):
    """The function a "module:function" target names (its module imported now)."""
    module_name, _, function = target.partition(":")
    return getattr(importlib.import_module(module_name), function)
