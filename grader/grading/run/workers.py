"""Run the case workers for one library copy, one sandboxed process per
question (or per group of the registry's SHARED_WORKERS), and collect their
outcomes.

The same path serves the reference (expected values) and submissions: a
fresh copy of the pristine handout with the library files overlaid (the
worker's working directory, with MNIST read-only in its data/), the worker
script and a copy of the cases package in a folder of their own (both
made by worker_dirs.py), and a control group per submission so that
concurrent submissions share the CPU fairly. The parent never imports the
library.
"""

import dataclasses
import shutil
import signal
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from grader import sandbox
from grader.core.assignment import Assignment, AssignmentError, shown
from grader.grading.run import hangs, slots, time_limits
from grader.grading.run.config import RunConfig
from grader.grading.run.outcomes import Budget, read_import_error, read_outcome
from grader.grading.run.worker_dirs import build_copy, build_runner
from grader.sandbox.scratch import scratch_dir
from grader.shipped.cases.util import HANDED_FILE

SEVERAL = "+"  # joins questions a worker runs in one process (the worker's SEVERAL: the reference's runs)
ONLY = "@"  # QUESTION@case,case: the worker runs only those cases (the worker's ONLY)


def only(question: str, names) -> str:
    """The worker argument that runs only `names` of `question`."""
    return f"{question}{ONLY}{','.join(names)}"


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
    skip: frozenset = frozenset(),
) -> dict:
    """question -> QuestionRun for the library made of `base` + `files`,
    each question in a worker of its own (config.jobs at a time) under its
    TimeLimit in `times` (RunConfig.time_limits_now), or, a submission's
    (isolate_hangs), the questions of a shared worker in one (`shared`); with keep_outputs,
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
    per question. skip (with together): cases not to run, which then have
    no outcome (a diagnosis's run leaves out the cases that stopped the
    grading's workers: they would stop it again, and explain nothing)."""
    if isolate_hangs and keep_outputs is not None:
        raise ValueError("run_all: keep_outputs keeps one run per question; hang isolation may make several")
    if together and not isolate_hangs:
        raise ValueError("run_all: together is for a submission's run, its hangs isolated")
    if skip and not together:
        raise ValueError("run_all: skip is for a run only a diagnosis reads (together)")
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
            together=True,
            skip=skip,
        )
        names = {q: [n for n in case_names(registry, q) if n not in skip] for q in questions}
        split = split_run(runs[joined], names)
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
                turn = (
                    None
                    if turns is None
                    else turns.for_question(questions.index(q if q in questions else q.split(SEVERAL)[0]))
                )
                mine = config if turn is None else dataclasses.replace(config, slots=turn)
                return run_question(
                    key, copy_dir, runner, tmp, config=mine, time=time, keep=keep_outputs, group=group, watch=watch
                )

            def alone(q):
                if not isolate_hangs:
                    return worker(q, None, times[q])
                every = case_names(registry, q)
                names = [n for n in every if n not in skip]
                first = None if len(names) == len(every) else names  # the first run's cases
                return hangs.isolate(
                    names, times[q], lambda c, *a, q=q: worker(q, first if c is None else c, *a), registry.by_name
                )

            def run(unit):
                results = shared(unit, times, registry, worker) if len(unit) > 1 else {unit[0]: alone(unit[0])}
                if results is None:  # the shared worker did not end cleanly: each question alone, side by side
                    with ThreadPoolExecutor(max_workers=min(len(unit), max(1, config.jobs))) as each:
                        results = dict(zip(unit, each.map(alone, unit)))
                for q in unit:
                    if on_done is not None:
                        on_done(q, results[q])
                return results

            units = registry.workers(questions) if isolate_hangs else [(q,) for q in questions]
            with ThreadPoolExecutor(max_workers=max(1, min(len(units), config.jobs + ahead))) as pool:
                futures = [pool.submit(run, unit) for unit in units]
                done = {q: result for f in futures for q, result in f.result().items()}
                return {q: done[q] for q in questions}
    finally:
        if group is not None:
            group.remove()


def shared(unit: tuple, times, registry, worker) -> dict | None:
    """question -> QuestionRun of the questions of `unit` run in one worker,
    one after the other, under the sum of their limits, each case keeping
    its own (a case past it stops the worker). None unless that worker gave
    every case a value or an error of its own: after a stop, a crash, a
    limit, an import failure or an early exit, each question runs alone, as
    if it had never shared, so what went wrong costs what it costs in a
    worker of the question's own (a broken import: one worker more)."""
    limit = time_limits.shared({q: times[q] for q in unit})
    run = worker(SEVERAL.join(unit), None, limit, hangs.CaseWatch(limit))
    if run.problem or run.import_error or hangs.missing(run.outcomes, list(run.outcomes)):
        return None
    split = split_run(run, {q: case_names(registry, q) for q in unit})
    return {q: dataclasses.replace(result, limit=times[q]) for q, result in split.items()}
