"""Example outputs in docs/ and README.md, produced by running the code that prints them.

    python tools/docs_examples.py                 # rewrite every example block
    python tools/docs_examples.py --check         # exit 1, naming the blocks, when one is stale
    python tools/docs_examples.py --only NAME     # one kind of block (repeatable)

A block in a page is a fenced code block between two comments:

    <!-- example: make-grade -->
    ```text
    ...
    ```
    <!-- /example -->

Its NAME says which function below makes its text. The check ignores what
changes from run to run and machine to machine (seconds taken, sandbox
tier); everything else must match exactly.
"""

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"(<!-- example: (?P<name>[a-z0-9-]+) -->\n```text\n)(?P<body>.*?)(```\n<!-- /example -->)", re.S)


def _module(name: str, *candidates: str):
    """Load a module from the first path that exists (grader's layout moves; the file is the same)."""
    path = next(ROOT / c for c in candidates if (ROOT / c).exists())
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_grade() -> str:
    """What `make grade` prints: the reference and the empty handout, graded in the sandbox."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
        proc = subprocess.run(
            [sys.executable, "-m", "grader", "grade", "--out", str(out)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if proc.returncode != 0:
            raise SystemExit(f"grader grade failed ({proc.returncode}):\n{proc.stderr}")
        text = proc.stdout.replace(f"{ROOT}/", "").replace(f"{out}/", "out/")
    return text.rstrip("\n") + "\n"


def handout_full_marks() -> str:
    """The end of the handout's `make test` for a complete, correct solution (handout/conftest.py's table)."""
    conftest = _module("handout_conftest", "handout/conftest.py")
    points = json.loads((ROOT / "handout/tests/hw1/hw1_cases/points.json").read_text())
    return "\n".join(conftest.points_table({name: True for name in points["cases"]}, points)) + "\n"


def classroom50_points() -> str:
    """Each question's whole points in Classroom 50 (largest remainder over the public cases' worth)."""
    int_points = _module("int_points", "grader/shipped/int_points.py", "grader/untrusted/int_points.py")
    points = json.loads((ROOT / "handout/tests/hw1/hw1_cases/points.json").read_text())
    cases, questions = points["cases"], points["questions"]
    exact = [
        sum(
            (
                Fraction(round(cases[n] * 10_000), 10_000)
                for n in cases
                if n.startswith(q["key"] + "_") and cases[n] > 0
            ),
            Fraction(0),
        )
        for q in questions
    ]
    whole = int_points.whole_maxima(exact)
    lines = [f"{'question':<22}{'exact':>8}{'whole':>7}"]
    lines += [f"{q['label'] + ' ' + q['key']:<22}{float(e):>8.2f}{w:>7}" for q, e, w in zip(questions, exact, whole)]
    lines.append(f"{'total':<22}{float(sum(exact)):>8.2f}{sum(whole):>7}")
    return "\n".join(lines) + "\n"


MAKERS = {"make-grade": make_grade, "handout-full-marks": handout_full_marks, "classroom50-points": classroom50_points}


def normalised(text: str) -> str:
    """What may differ between two honest runs: seconds taken and the sandbox tier."""
    return re.sub(r"\(sandbox [\w-]+, [\d.]+ s,", "(sandbox TIER, N s,", text)


def blocks(page: Path):
    return [(m.group("name"), m) for m in BLOCK.finditer(page.read_text())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a block is stale; write nothing")
    parser.add_argument("--only", action="append", choices=sorted(MAKERS), help="only blocks of this kind")
    options = parser.parse_args(argv)
    wanted = set(options.only or MAKERS)
    used = {name for page in PAGES for name, _ in blocks(page)}
    unknown = used - set(MAKERS)
    if unknown:
        print(f"unknown example blocks: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 1
    made = {name: MAKERS[name]() for name in sorted(used & wanted)}
    stale = []
    for page in PAGES:
        text = page.read_text()

        def replace(match):
            name = match.group("name")
            if name not in made:
                return match.group(0)
            if normalised(match.group("body")) != normalised(made[name]):
                stale.append(f"{page.relative_to(ROOT)}: {name}")
            return match.group(1) + made[name] + match.group(4)

        new = BLOCK.sub(replace, text)
        if not options.check and new != text:
            page.write_text(new)
            print(f"updated {page.relative_to(ROOT)}")
    if options.check and stale:
        print("stale examples (run `make docs-examples` and commit):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
