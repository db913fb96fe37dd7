#!/usr/bin/env python3
# Generated from reference/tools/graded_with.py by `make handout`; do not edit.
"""Which package versions `make test` installs: the grader's own, when pip
has a wheel of each for this Python; otherwise, said in one line, the newest
release of the same major version that has one.

Run with the .venv's Python before anything is downloaded: pip is asked for
a dry run (the index and each wheel's metadata, no wheel), so a Python the
grader's numpy has no wheel for learns it at once instead of after minutes
of building numpy from source. Standard library only: it ships in the
student handout.

Usage: python graded_with.py [--python-version X.Y] NAME==VERSION ...
(--python-version: decide for another Python than this one, as pip's own
option does.) Prints one requirement per line on stdout (for pip install -r); exits 1
with one line on stderr when some package has no wheel for this Python in
its major version at all.
"""
import atexit
import re
import shutil
import subprocess
import sys
import tempfile

PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\d+)([A-Za-z0-9.+!_-]*)$")
DRY_RUN = ("-m", "pip", "install", "--dry-run", "--quiet", "--no-deps", "--ignore-installed",
           "--only-binary=:all:", "--disable-pip-version-check", "--no-input")
NO_WHEEL = ("No matching distribution found", "Could not find a version that satisfies")
FOR_PYTHON = []  # pip's options for another Python than this one (--python-version)


def python_name() -> str:
    return "Python " + (FOR_PYTHON[1] if FOR_PYTHON else "%d.%d" % sys.version_info[:2])


def has_wheel(requirement: str):
    """True or False: pip finds a wheel of it for this Python; None: pip
    cannot tell (too old for --dry-run, no network), so the real install,
    wheels only, will say what is wrong."""
    proc = subprocess.run([sys.executable, *DRY_RUN, *FOR_PYTHON, *requirement.split()], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    if proc.returncode == 0:
        return True
    return False if any(words in proc.stdout + proc.stderr for words in NO_WHEEL) else None


def same_major(pin: str) -> str:
    """numpy==2.0.2 -> numpy>=2.0.2,<3: a release that keeps the behaviour students are graded on."""
    name, major, rest = PINNED.match(pin).groups()
    return f"{name}>={major}{rest},<{int(major) + 1}"


def choose(pins: list) -> list:
    """The requirements to install, in the order given (SystemExit(1) when none fits)."""
    if has_wheel(" ".join(pins)) is not False:  # one dry run for all when each has its wheel
        return list(pins)
    chosen = []
    for pin in pins:
        if has_wheel(pin) is not False:
            chosen.append(pin)
            continue
        instead = same_major(pin)
        if has_wheel(instead) is False:
            print(f"{pin} (the grader's version) has no wheel for {python_name()}, nor does any {instead}: "
                  "delete .venv and run make with a python3 that has one first on PATH, or pass "
                  "PYTHON=/path/to/python", file=sys.stderr)
            raise SystemExit(1)
        print(f"{pin} (the grader's version) has no wheel for {python_name()}: installing the newest {instead} "
              "instead; your points here may differ from the grader's in rare cases", file=sys.stderr)
        chosen.append(instead)
    return chosen


def main(argv: list) -> int:
    if argv[:1] == ["--python-version"] and len(argv) > 1:
        target = tempfile.mkdtemp(prefix="graded-with-")  # pip wants one with --python-version; stays empty
        atexit.register(shutil.rmtree, target, True)
        FOR_PYTHON[:] = ["--python-version", argv[1], "--target", target]
        argv = argv[2:]
    bad = [a for a in argv if not PINNED.match(a)]
    if not argv or bad:
        print(f"usage: graded_with.py NAME==VERSION ... ({bad[0]!r} is not pinned)" if bad
              else "usage: graded_with.py NAME==VERSION ...", file=sys.stderr)
        return 2
    print("\n".join(choose(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
