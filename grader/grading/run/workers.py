"""Run the case workers for one library copy, one sandboxed process per
question, and collect their outcomes.

The same path serves the reference (expected values) and submissions: a
fresh copy of the pristine handout with the library files overlaid (the
worker's working directory, with MNIST read-only in its data/), the worker
script and a copy of the cases package in a folder of their own, and a
control group per submission so that concurrent submissions share the CPU
fairly. The parent never imports the library.
"""

import dataclasses
import hashlib
import json
import os
import shutil
import signal
import stat
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from grader import sandbox
from grader.core import markers
from grader.core.assignment import Assignment, AssignmentError, shown
from grader.core.files import write_atomic
from grader.core.paths import SHIPPED
from grader.grading.run import cache, hangs, slots, time_limits
from grader.grading.run.config import RunConfig
from grader.grading.run.outcomes import Budget, read_import_error, read_outcome
from grader.sandbox.files import compiled, copy_regular
from grader.sandbox.scratch import scratch_dir
from grader.shipped.cases.util import HANDED_FILE

WORKER = SHIPPED / "worker.py"
WHERE = SHIPPED / "where.py"  # the worker's `where:` (also shipped in the handout)
CASES_PACKAGE = "assignment_cases"  # what the worker imports the runner's copy of the cases as
SEVERAL = "+"  # joins questions a worker runs in one process (the worker's SEVERAL: the reference's runs)
ONLY = "@"  # QUESTION@case,case: the worker runs only those cases (the worker's ONLY)


def only(question: str, names) -> str:
    """The worker argument that runs only `names` of `question`."""
    return f"{question}{ONLY}{','.join(names)}"


COMPLETE = ".complete"  # the marker of a built compiled_code folder
STUDENT_CODE = "student_code.json"  # beside the worker: student files and their given functions (where:)


@dataclass(frozen=True)
class QuestionRun:
    question: str
    outcomes: dict  # computing case name -> Outcome
    problem: str  # "" or why the worker ended badly (timeout, crash, ...)
    log: str
    tier: str
    import_error: str = ""  # "" or why the library could not be imported
    seconds: float = 0.0  # the worker's wall time
    limit: time_limits.TimeLimit | None = None  # the time limit it ran under
    hung: tuple = ()  # the cases the workers were stopped in (hangs.isolate), each lost alone
    started: tuple = ()  # cases the worker marked as running and never reported (a hint: hangs.blamed)


def case_names(registry, key: str) -> list:
    """The cases a worker for `key` (a question, or several joined by SEVERAL) computes, in its order."""
    return [c.name for q in key.split(SEVERAL) for c in registry.producers(q)]


def split_run(run: QuestionRun, names: dict) -> dict:
    """question -> its part of `run`, a worker's run of several questions
    (`names`: question -> its cases): its outcomes and hung cases; the rest
    (problem, log, seconds, limit) is the worker's, shared."""
    return {
        q: dataclasses.replace(
            run,
            question=q,
            outcomes={n: run.outcomes[n] for n in mine},
            hung=tuple(n for n in run.hung if n in mine),
            started=tuple(n for n in run.started if n in mine),
        )
        for q, mine in names.items()
    }


def build_copy(base: Path, files: dict, dest: Path) -> Path:
    """The library copy a worker runs in: the top folders of `base` that hold
    the student files (hw1: python/ and apps/), with `files` (handout-relative
    path -> source) overlaid. The sandbox copies it again, regular files only,
    for each run, and adds data/."""
    folders = list(dict.fromkeys(Path(rel).parts[0] for rel in files))
    for sub in folders:
        if not (base / sub).is_dir():
            raise FileNotFoundError(
                f"{base / sub}: missing; the grader builds each submission's copy "
                f"from the pristine handout: run `make handout`"
            )
    for sub in folders:
        shutil.copytree(base / sub, dest / sub, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for rel, src in files.items():
        _copy_nofollow(Path(src), dest / rel)
    return dest


def _copy_nofollow(src: Path, dest: Path) -> None:
    """Copy a student file only if it is still a plain file (not a link swapped in since it was checked)."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{src}: not a regular file")
        dest.write_bytes(f.read())


def student_code(assignment: Assignment) -> dict:
    """What the worker's `where:` needs to find the student's line: the
    student files and, in each, the reference's functions that hold no
    student code (given code, which a `where:` skips over). Parsing them
    takes a tenth of a second, on every grade's critical path: kept in the
    private cache, keyed by the texts and the parser."""
    texts = {}
    for rel in assignment.student_files:
        path = assignment.reference / rel
        texts[rel] = path.read_text(encoding="utf-8") if path.is_file() else ""
    digest = hashlib.sha256(Path(markers.__file__).read_bytes() + json.dumps(texts, sort_keys=True).encode())
    kept = cache.private_root() / f"student-code-{digest.hexdigest()[:16]}.json"
    try:
        return json.loads(kept.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    found = {
        "files": {rel: {"given": markers.given_functions(text, rel) if text else []} for rel, text in texts.items()}
    }
    write_atomic(kept, json.dumps(found, sort_keys=True))
    return found


def build_runner(dest: Path, assignment: Assignment, inputs: Path | None = None) -> Path:
    """The worker's folder: the worker, where.py, the cases package and,
    for drawn inputs, their arrays (never the seed they come from)."""
    copy_regular(compiled_code(assignment), dest, skip={COMPLETE}, bytecode=True)
    if inputs is not None:
        shutil.copyfile(inputs, dest / HANDED_FILE)
    (dest / STUDENT_CODE).write_text(json.dumps(student_code(assignment), sort_keys=True), encoding="utf-8")
    return dest


def compiled_code(assignment: Assignment) -> Path:
    """The runner's code (the worker, where.py, the cases package) with its
    bytecode, compiled by hash once per change of any of it: each worker
    would compile the cases package again, and compiling it for every
    grading took the parent 15-50 ms before its first worker could start.
    A cache folder of no secret: the cases are what the handout ships."""
    cases = sorted(
        p
        for p in assignment.cases_dir.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    digest = hashlib.sha256()
    for path in (WORKER, WHERE, *cases):
        digest.update(str(path.relative_to(path.parents[1])).encode() + b"\0" + path.read_bytes() + b"\0")

    def build(folder: Path) -> None:
        shutil.copyfile(WORKER, folder / "worker_boot.py")
        shutil.copyfile(WHERE, folder / "where.py")
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(assignment.cases_dir, folder / CASES_PACKAGE, ignore=ignore)
        compiled(folder, by_hash=True)
        (folder / COMPLETE).write_text("")

    return cache.built_once(cache.cache_root() / f"runner-code-{digest.hexdigest()[:16]}", COMPLETE, build, "", "")


def run_question(
    question, copy_dir, runner, out_parent, config, time, keep=None, group=None, names=None, limits=None, watch=None
) -> QuestionRun:
    """One worker run; `question` may also be a worker mode (then `names`:
    the values it writes, and `limits`: its sandbox.Limits). `watch`:
    sandbox.run's (hangs.CaseWatch). In a batch, the run's setup holds its
    submission's stage pass and its worker one of the batch's slots
    (slots.py); the teardown and the values read out of it hold neither."""
    if config.seed is None or (config.seed and not (runner / HANDED_FILE).is_file()):
        raise ValueError("run_question: settle the seed and draw its inputs first (expected.settled)")
    key, _, chosen = question.partition(ONLY)
    parts = key.split(SEVERAL)
    out_dir = sandbox.make_out_dir(out_parent)
    result = sandbox.run(
        runner / "worker_boot.py",
        [question, sandbox.OUT],
        student_dir=copy_dir,
        out_dir=out_dir,
        shared={"data": config.assignment.data},
        limits=limits or config.limits_for(max(parts, key=config.memory_mb), time),  # the most memory of them
        tier=config.tier,
        group=group,
        packages=config.assignment.packages,
        watch=watch,
        turn=config.slots,
    )
    budget = Budget(out_dir)
    import_error = read_import_error(budget)
    if names is None:
        names = chosen.split(",") if chosen else case_names(config.assignment.registry(), key)
    outcomes = {name: read_outcome(budget, name) for name in names}
    started = tuple(n for n in names if not outcomes[n].ok and (out_dir / (n + hangs.STARTED)).is_file())
    if keep is not None:
        shutil.move(out_dir, keep / key)
    else:
        shutil.rmtree(out_dir, ignore_errors=True)
    problem = result.reason
    if result.timed_out or result.signal == signal.SIGXCPU:  # out of time: say what the limit was, and why
        problem = f"{problem}; {time.why}"
    return QuestionRun(
        question, outcomes, problem, result.log, result.tier, import_error, result.wall_seconds, time, (), started
    )


def sandbox_environment(assignment: Assignment) -> Path:
    """The sandbox's Python with the assignment's packages, built once per
    machine (pip, the first time); a package pip cannot install names the field."""
    try:
        return sandbox.environment(assignment.packages)
    except sandbox.PackageError as exc:
        where = (
            "--packages"
            if assignment.packages_from == "--packages"
            else f"{shown(assignment.toml)}: field 'environment.packages'"
        )
        raise AssignmentError(f"{where}: {exc}") from None


def run_mode(
    files: dict,
    config: RunConfig,
    mode: str,
    names: list,
    time: time_limits.TimeLimit,
    limits: sandbox.Limits,
    runner_files: dict,
    base: Path | None = None,
    keep_outputs: Path | None = None,
) -> QuestionRun:
    """One extra worker run in `mode` (not a question) for the library of
    `base` + `files`, with `runner_files` (name -> text) beside the worker;
    its outcomes are `names`' values."""
    sandbox_environment(config.assignment)
    group = sandbox.Group.create(cpu_tasks=1)
    try:
        with tempfile.TemporaryDirectory(prefix="grader-", dir=scratch_dir()) as tmp:
            tmp = Path(tmp)
            copy_dir = build_copy(base or config.assignment.handout, files, tmp / "copy")
            runner = build_runner(tmp / "runner", config.assignment, config.inputs and config.inputs.path)
            for name, text in runner_files.items():
                (runner / name).write_text(text, encoding="utf-8")
            return run_question(mode, copy_dir, runner, tmp, config, time, keep_outputs, group, names, limits)
    finally:
        if group is not None:
            group.remove()


def run_all(
    files: dict,
    config: RunConfig,
    times: dict,
    base: Path | None = None,
    questions=None,
    keep_outputs: Path | None = None,
    on_done=None,
    isolate_hangs: bool = False,
    together: bool = False,
) -> dict:
    """question -> QuestionRun for the library made of `base` + `files`,
    each question in a worker of its own (config.jobs at a time) under its
    TimeLimit in `times` (RunConfig.time_limits_now); with keep_outputs,
    each question's raw worker output is moved there. on_done(question,
    run), when given, is called in the pool as each question finishes (work
    that needs some questions' results can start while the longest still
    runs). isolate_hangs (a submission's grading): a case that hangs or
    stops its worker costs that case, not its question (hangs.isolate);
    keep_outputs is for a single run per question (the reference's).
    together (with isolate_hangs; a run only a diagnosis reads): the
    questions' cases one after the other in one worker, under the longest
    of their limits (time_limits.together), its hangs isolated as one
    question's, the result split by question: one sandbox start, not one
    per question."""
    if isolate_hangs and keep_outputs is not None:
        raise ValueError("run_all: keep_outputs keeps one run per question; hang isolation may make several")
    if together and not isolate_hangs:
        raise ValueError("run_all: together is for a submission's run, its hangs isolated")
    registry = config.assignment.registry()
    questions = list(questions or registry.run_order)
    if together and len(questions) > 1:
        joined = SEVERAL.join(questions)
        runs = run_all(
            files,
            config,
            {joined: time_limits.together({q: times[q] for q in questions})},
            base,
            [joined],
            isolate_hangs=True,
        )
        split = split_run(runs[joined], {q: case_names(registry, q) for q in questions})
        for q, result in split.items():
            if on_done is not None:
                on_done(q, result)
        return split
    sandbox_environment(config.assignment)  # before the questions' threads, which would wait on it
    # One control group per submission: concurrent submissions share the CPU
    # fairly, however many processes one of them starts.
    group = sandbox.Group.create(cpu_tasks=max(1, config.jobs))
    # --jobs workers at once, in the batch's slots or in this grade's own, and
    # questions under way beside them, longest first (slots.py: `ahead`). Not
    # with --jobs 1 alone: that is one core's work, and the setup would take a second.
    turns = config.slots or (slots.local(config.jobs) if config.jobs > 1 else None)
    ahead = 0 if turns is None else turns.ahead
    try:
        with tempfile.TemporaryDirectory(prefix="grader-", dir=scratch_dir()) as tmp:
            tmp = Path(tmp)
            copy_dir = build_copy(base or config.assignment.handout, files, tmp / "copy")
            runner = build_runner(tmp / "runner", config.assignment, config.inputs and config.inputs.path)

            def worker(q, chosen, time, watch=None):
                key = q if chosen is None else only(q, chosen)
                turn = None if turns is None else turns.for_question(questions.index(q))
                mine = config if turn is None else dataclasses.replace(config, slots=turn)
                return run_question(
                    key, copy_dir, runner, tmp, config=mine, time=time, keep=keep_outputs, group=group, watch=watch
                )

            def run(q):
                if isolate_hangs:
                    result = hangs.isolate(
                        case_names(registry, q), times[q], lambda *a, q=q: worker(q, *a), registry.by_name
                    )
                else:
                    result = worker(q, None, times[q])
                if on_done is not None:
                    on_done(q, result)
                return result

            with ThreadPoolExecutor(max_workers=max(1, min(len(questions), config.jobs + ahead))) as pool:
                futures = {q: pool.submit(run, q) for q in questions}
                return {q: f.result() for q, f in futures.items()}
    finally:
        if group is not None:
            group.remove()
