"""Command line: parses arguments and calls one function per command.

Each command lives in a module named in COMMANDS; modules are imported only
when their command runs, so `grader --help` stays fast and a server-less install can grade.
Exit codes: 0 done, 1 the command itself failed, 2 usage error.
"""
import argparse
import importlib
import os
import sys
from importlib import metadata

# command -> (module, one-line help). The module defines
# `add_arguments(parser, command)` and `run(args, command) -> int`.
COMMANDS = {
    "grade": ("grader.grading.grade", "grade one submission (folder, .zip, or the three student files) in a sandbox"),
    "grade-batch": ("grader.grading.batch", "grade every submission under a folder in parallel into a gradebook"),
    "gradescope-bundle": ("grader.grading.gradescope", "build a Gradescope autograder zip"),
    "handout": ("grader.handout.commands", "generate handout/ from reference/ (solutions stripped, leak-checked)"),
    "check-handout": ("grader.handout.commands", "fail if the committed handout/ differs from a fresh build"),
    "serve": ("grader.server.commands", "run the grading server (mugrade compatible)"),
    "users": ("grader.server.commands", "add or import users of the grading server"),
    "gradebook": ("grader.server.commands", "export the server's gradebook as CSV"),
    "import-batch": ("grader.server.importer", "import grade-batch results into the server's gradebook"),
    "submit": ("grader.client.submit", "run the submit_* cases here and send the values to the server"),
    "publish": ("grader.client.submit", "run the submit_* cases on reference/ and publish the answers"),
    "demo": ("grader.bench.demo", "train one MNIST epoch with the reference and print loss and error"),
    "bench": ("grader.bench.speed", "speed benchmarks, reported as ratios measured in one run"),
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
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text,
                       formatter_class=_DefaultsFormatter)
    return parser, sub


def main(argv=None):
    try:
        return _main(sys.argv[1:] if argv is None else list(argv))
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
    parser, sub = _parser()
    # Parse the command name first, then let its module declare its options.
    if not argv or argv[0] not in COMMANDS:
        parser.parse_args(argv or ["--help"])
        return 2
    command = argv[0]
    module = importlib.import_module(COMMANDS[command][0])
    command_parser = sub.choices[command]
    module.add_arguments(command_parser, command)
    # The command's own parser: a bad option gets that command's usage, not the top level's.
    args = command_parser.parse_args(argv[1:])
    args.command = command
    return int(module.run(args, command) or 0)
