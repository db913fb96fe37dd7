"""Command line: parses arguments and calls one function per command.

Each command lives in a module named in COMMANDS; modules are imported only
when their command runs, so `grader --help` stays fast and a server-less install can grade.
Exit codes: 0 done, 1 the command itself failed, 2 usage error.
"""
import argparse
import importlib
import sys

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


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="grader", description="needle hw1 autograding harness")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text)
    # Parse the command name first, then let its module declare its options.
    if not argv or argv[0] not in COMMANDS:
        parser.parse_args(argv or ["--help"])
        return 2
    command = argv[0]
    module = importlib.import_module(COMMANDS[command][0])
    module.add_arguments(sub.choices[command], command)
    args = parser.parse_args(argv)
    try:
        return int(module.run(args, command) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
