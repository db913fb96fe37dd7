"""`make bench --only similarity`: `grader similarity` on a class of 300
submissions (a third of them zipped), time (CPU and wall) and peak memory
of the command as an instructor runs it (its own process), beside the raw work it cannot
avoid (reading and tokenizing the same files, in a process of its own), in
the same run.

The class is the reference with personal lines (statements built from a
vocabulary of names and attributes, drawn per submission) scattered through
its solution blocks, so that submissions share runs of code and differ
elsewhere, as a real class does: identical copies would all weigh nothing,
and the bench would measure nothing.

Also runnable alone: `python -m benchmarks.similarity --tokenize-only DIR`
is the baseline's process.
"""

import io
import os
import random
import subprocess
import sys
import tempfile
import time
import tokenize
import zipfile
from pathlib import Path

from grader import REFERENCE
from grader.core.assignment import Assignment
from grader.core.blas import one_thread_env
from grader.core.markers import BEGIN_SOLUTION, END_SOLUTION

SUBMISSIONS = 300
SECONDS_TARGET = 30.0
RSS_TARGET_MB = 500.0
PERSONAL = 0.25  # chance of a personal line before each statement of a block
NAMES = ("tmp", "count", "shape_now", "scale", "acc", "idx", "first", "rest", "dims", "out_val")
ATTRS = (
    "shape",
    "dtype",
    "ndim",
    "inputs",
    "op",
    "grad",
    "size",
    "T",
    "data",
    "cached_data",
    "numpy",
    "sum",
    "reshape",
    "transpose",
    "copy",
    "astype",
    "max",
    "min",
    "mean",
    "item",
)


def _personal(rng: random.Random, indent: str) -> str:
    name, other = rng.choice(NAMES), rng.choice(NAMES)
    attr = rng.choice(ATTRS)
    forms = (
        f"{name} = {other}.{attr}",
        f"{name} = {other}.{attr}()",
        f"{name} = len({other}.{attr})",
        f"assert {other}.{attr} is not None",
        f"print({name}, {other}.{attr})",
        f"{name} = [{other} for {other} in range({rng.randint(1, 9)})]",
    )
    return indent + rng.choice(forms)


def _statement_starts(text: str) -> set:
    """Numbers (1-based) of the lines a statement begins on: outside every
    bracket, string and backslash continuation, so a line put before one
    cannot split a statement."""
    starts, depth, previous, seen = set(), 0, None, 0
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        line = tok.start[0]
        if line != seen and tok.type not in (tokenize.NL, tokenize.COMMENT, tokenize.DEDENT, tokenize.ENDMARKER):
            seen = line
            if depth == 0 and (
                previous is None
                or previous in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT)
            ):
                starts.add(line)
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        previous = tok.type
    return starts


def personalised(text: str, rng: random.Random) -> str:
    """`text` with personal lines  inserted before
    statements of its solution blocks, never inside one: a solution's
    statement may span lines (the reference's `tuple(... for ...\n if ...)`),
    and a line put into it would leave the class's file unparseable."""
    out, inside, starts = [], False, _statement_starts(text)
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped == END_SOLUTION:
            inside = False
        elif inside and number in starts and rng.random() < PERSONAL:
            out.append(_personal(rng, line[: len(line) - len(line.lstrip())]))
        inside = inside or stripped == BEGIN_SOLUTION
        out.append(line)
    return "\n".join(out) + "\n"


def synthetic_class(root: Path, count: int = SUBMISSIONS, seed: int = 300) -> Path:
    rng = random.Random(seed)
    files = Assignment.hw1().student_files
    sources = {rel: (REFERENCE / rel).read_text(encoding="utf-8") for rel in files}
    folder = root / "class"
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        name = f"student{k:03d}"
        texts = {rel: personalised(text, rng) for rel, text in sources.items()}
        if k % 3 == 0:
            with zipfile.ZipFile(folder / f"{name}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
                for rel, text in texts.items():
                    archive.writestr(f"{name}/{rel}", text)
        else:
            for rel, text in texts.items():
                path = folder / name / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    return folder


# Runs a module as __main__ and reports its own peak RSS (VmHWM) last on
# stderr: the kernel's rusage of a child starts from the RSS of the process
# that forked it (a test runner's gigabyte), /proc's high-water mark of the
# exec'd image does not.
PEAK = "PEAK_RSS_KB"
_WRAPPER = f"""import runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
finally:
    hwm = [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")]
    sys.stderr.write("\\n{PEAK} " + (hwm[0] if hwm else "0") + "\\n")
"""


def _measured(module, *args) -> tuple:
    """(wall seconds, CPU seconds, peak RSS in MB) of `python -m module args`."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRAPPER, module, *map(str, args)],
        env=one_thread_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    errors = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(
            f"python -m {module} {' '.join(map(str, args[:3]))}... exited {proc.returncode}: {errors[-500:]}"
        )
    peak_kb = int(errors.rsplit(PEAK, 1)[1].split()[0])
    return seconds, usage.ru_utime + usage.ru_stime, peak_kb / 1024


def tokenize_only(folder: Path) -> int:
    """The baseline: read every student file of every submission and tokenize it."""
    from grader.similarity.corpus import CLASS, read_folder
    from grader.similarity.tokens import scan

    subs, _ = read_folder(folder, CLASS, Assignment.hw1().student_files)
    return sum(len(scan(text, rel).tokens) for sub in subs for rel, text in sub.files.items())


def speed(count: int = SUBMISSIONS) -> bool:
    """Time and peak RSS of `grader similarity` on `count` submissions; True if
    on target. The command is one single-threaded process, so its CPU time
    is its wall time on a quiet machine: the time target is judged on CPU
    seconds (wall seconds, printed beside them, grow with the load that
    other work puts on these shared cores)."""
    with tempfile.TemporaryDirectory(prefix="bench-similarity-") as tmp:
        folder = synthetic_class(Path(tmp), count)
        base = _measured("benchmarks.similarity", "--tokenize-only", folder)
        run = _measured("grader", "similarity", folder, "--out", Path(tmp) / "out")
    pairs = count * (count - 1) // 2
    ok = run[1] <= SECONDS_TARGET and run[2] <= RSS_TARGET_MB
    print(
        f"grader similarity, {count} submissions ({pairs} pairs): {run[1]:.1f} CPU s ({run[0]:.1f} s wall), "
        f"peak RSS {run[2]:.0f} MB (targets <= {SECONDS_TARGET:g} s, <= {RSS_TARGET_MB:g} MB) "
        f"{'ok' if ok else 'MISSED'}; reading and tokenizing alone {base[1]:.1f} CPU s, {base[2]:.0f} MB: "
        f"ratio {run[1] / base[1]:.1f} (load {os.getloadavg()[0]:.1f})"
    )
    return ok


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--tokenize-only":
        print(tokenize_only(Path(sys.argv[2])))
    else:
        print("usage: python -m benchmarks.similarity --tokenize-only DIR", file=sys.stderr)
        sys.exit(2)
