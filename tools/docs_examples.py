"""Example outputs in docs/ and README.md, produced by running the code that prints them.

    python tools/docs_examples.py                 # rewrite every stale example block
    python tools/docs_examples.py --check         # exit 1, naming the blocks, when one is stale
    python tools/docs_examples.py --only NAME     # one kind of block (repeatable; time-policy: that page's)

A block in a page is a fenced code block (text or console) between two comments:

    <!-- example: make-grade -->
    ```text
    ...
    ```
    <!-- /example -->

Its NAME says which function below makes its text. The check ignores what
changes from run to run and machine to machine (seconds taken, sandbox
tier, the time a change was made); everything else must match exactly.

The time-policy blocks (docs/instructor/time-policy.md) are one session
against a real `grader serve` on a loopback port with a fresh SQLite
database: the page's commands, run in the page's order.
"""

import argparse
import contextlib
import functools
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(
    r"(<!-- example: (?P<name>[a-z0-9-]+) -->\n```(?:text|console)\n)(?P<body>.*?)(```\n<!-- /example -->)", re.S
)


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


# docs/instructor/time-policy.md: one session against a real server, its blocks in the order they run
# (the refused deadline runs before the zone is set, as the page tells). A command is a tuple of
# `grader` arguments, run with the --db and --by prof the page leaves out, or a shell line the
# page shows as is, run by bash with $SERVER and $KEY (prof's) set.
REPUBLISH = """curl -X POST "$SERVER/publish?assignment=hw1&problem=forward&deadline=2026-02-08T23:59" \\
    -H "Authorization: Bearer $KEY" -d '[1,2,4]'"""
TIME_POLICY = (
    ("time-deadline-without-zone", [("deadline", "hw1/forward", "2026-02-01T23:59")]),
    ("time-set-zone", [("course", "set-zone", "Europe/Zurich")]),
    ("time-deadline", [("deadline", "hw1/forward", "2026-02-01T23:59")]),
    (
        "time-extensions",
        [
            ("extension", "grant", "ann", "--extra", "2d"),
            ("extension", "grant", "ann", "--question", "forward", "--until", "2026-02-05T12:00"),
            ("extension", "list"),
            ("extension", "clear", "ann", "--question", "forward"),
        ],
    ),
    ("time-penalty", [("course", "set-penalty", "per day", "--percent", "10", "--cutoff", "3d")]),
    ("time-late-days", [("course", "set-late-days", "3")]),
    ("time-republish", [REPUBLISH]),
    ("time-changes", [("changes",)]),
    ("time-bad-value", [("course", "set-penalty", "half")]),
)


def _env(**extra) -> dict:
    """This environment without what would point a command elsewhere (a key, a server, an assignment)."""
    drop = ("MUGRADE_KEY", "MUGRADE_SERVER", "GRADER_ASSIGNMENT")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "OPENBLAS_NUM_THREADS": "1", **extra}


def _grader(*args: str) -> subprocess.CompletedProcess:
    """`python -m grader ARGS`, as a user runs it from the checkout."""
    cmd = [sys.executable, "-m", "grader", *args]
    return subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)


def _shown(args) -> str:
    """A command line as the page shows it (an argument with a space in double quotes)."""
    return " ".join(f'"{a}"' if re.search(r"\s", a) else a for a in args)


@contextlib.contextmanager
def _server(db: str, folder: Path):
    """`grader serve` on a free loopback port; yields its URL (ending in a slash) once it answers."""
    import requests

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url, log = f"http://127.0.0.1:{port}/", folder / "server.log"
    cmd = [sys.executable, "-m", "grader", "serve", "--db", db, "--host", "127.0.0.1", "--port", str(port)]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=out, stderr=subprocess.STDOUT)
    try:
        give_up = time.monotonic() + 60
        while True:
            if proc.poll() is not None or time.monotonic() > give_up:
                raise SystemExit(f"grader serve did not start:\n{log.read_text()[-2000:]}")
            try:
                if requests.get(url + "healthz", timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@functools.lru_cache(maxsize=None)
def time_policy_session() -> dict:
    """Every time-policy block: a fresh database and server; prof (instructor) and ann (student) added with
    `grader users add`; hw1/forward published with 3 cases (1, 2, 3) and ann's right answers sent over the
    mugrade protocol; then the page's commands."""
    import requests

    with tempfile.TemporaryDirectory() as tmp:
        db, keys = f"sqlite:///{Path(tmp) / 'grader.db'}", {}
        for name, role in (("prof", "instructor"), ("ann", "student")):
            proc = _grader("users", "add", name, "--role", role, "--db", db)
            if proc.returncode != 0:
                raise SystemExit(f"grader users add {name} failed:\n{proc.stderr}")
            keys[name] = proc.stdout.split()[-1]  # the key, its own last line
        with _server(db, Path(tmp)) as url:

            def post(path, key, body=None, **params):
                data = None if body is None else json.dumps(body)
                r = requests.post(url + path, params=params, data=data, headers={"Authorization": f"Bearer {key}"})
                if r.status_code != 200:
                    raise SystemExit(f"POST /{path}: {r.status_code} {r.text}")
                return r.json()

            post("publish", keys["prof"], [1, 2, 3], assignment="hw1", problem="forward")
            submission = post("submit", keys["ann"], assignment="hw1", problem="forward")["submission_id"]
            for index, value in enumerate([1, 2, 3]):
                post("submit_test", keys["ann"], value, submission_id=submission, test_case_index=index)
            made = {}
            for name, commands in TIME_POLICY:
                text = ""
                for command in commands:
                    if isinstance(command, str):
                        env = _env(SERVER=url.rstrip("/"), KEY=keys["prof"])
                        proc = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True)
                        if proc.returncode != 0:
                            raise SystemExit(f"{command} failed ({proc.returncode}):\n{proc.stderr}")
                        text += f"$ {command}\n{proc.stdout.rstrip()}\n"  # stdout only: curl's meter is not shown
                    else:
                        proc = _grader(*command, "--db", db, "--by", "prof")
                        text += f"$ grader {_shown(command)}\n{proc.stdout}{proc.stderr}"
                made[name] = text
    return made


MAKERS = {
    "make-grade": make_grade,
    "handout-full-marks": handout_full_marks,
    "classroom50-points": classroom50_points,
    **{name: functools.partial(lambda n: time_policy_session()[n], name) for name, _ in TIME_POLICY},
}
GROUPS = {"time-policy": [name for name, _ in TIME_POLICY]}  # --only time-policy: every block of the session


def normalised(text: str) -> str:
    """What may differ between two honest runs: seconds taken, the sandbox tier, when a change was made."""
    text = re.sub(r"\(sandbox [\w-]+, [\d.]+ s,", "(sandbox TIER, N s,", text)
    text = re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC  ", "TIME  ", text, flags=re.M)  # grader changes
    return re.sub(r"\(granted \d{4}-\d\d-\d\d \d\d:\d\d UTC by ", "(granted TIME by ", text)  # grader extension list


def blocks(page: Path):
    return [(m.group("name"), m) for m in BLOCK.finditer(page.read_text())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a block is stale; write nothing")
    parser.add_argument(
        "--only", action="append", choices=sorted([*MAKERS, *GROUPS]), help="only blocks of this kind (repeatable)"
    )
    options = parser.parse_args(argv)
    wanted = {name for only in options.only or MAKERS for name in GROUPS.get(only, [only])}
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
            if name not in made or normalised(match.group("body")) == normalised(made[name]):
                return match.group(0)  # kept as it is: only a stale block is rewritten
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
