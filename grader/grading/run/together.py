"""A submission's questions in as few workers as there are --jobs (issue 37).

One sandboxed worker per question paid a sandbox, a Python, numpy, the
library and the cases package six times for hw1: most of a correct
submission's grading time, and more than the course's own suite takes. So a
submission's questions are grouped into at most config.jobs workers (one per
core; balanced by the reference's times: the longest first, each into the
group with the least so far), each running its questions one after the
other in one process (the worker's SEVERAL mode, as the reference's own runs).

A question keeps the verdicts it would get in a process of its own: when its
group's worker ended badly (a timeout, a crash, an import failure) or any of
its cases raised or left no value, it is run again alone, as before, and that
run is what counts. A correct submission pays one start per core; a failing
question costs one more run.
"""

import dataclasses
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader import sandbox
from grader.grading.run import hangs
from grader.grading.run.workers import SEVERAL, build_copy, build_runner, only, run_question, sandbox_environment


def plan(questions, seconds: dict, width: int) -> list:
    """At most `width` groups of `questions` (lists, in the given order
    within a group), balanced by `seconds` (question -> the reference's)."""
    groups = [[] for _ in range(max(1, min(width, len(questions))))]
    loads = [0.0] * len(groups)
    # Each time includes a worker's start (the shortest question's time, about):
    # what a question adds to a group is the rest.
    start = min((seconds.get(q, 0.0) for q in questions), default=0.0)
    cost = {q: seconds.get(q, 0.0) - start for q in questions}
    for question in sorted(questions, key=lambda q: -cost[q]):
        k = loads.index(min(loads))
        groups[k].append(question)
        loads[k] += cost[question]
    order = {q: i for i, q in enumerate(questions)}
    return [sorted(g, key=order.get) for g in groups if g]


def limits(config, group, times) -> tuple:
    """(TimeLimit, sandbox.Limits) of a group's worker: its longest
    question's time (a group running longer is run again question by
    question, each under its own) and its largest memory."""
    longest = max((times[q] for q in group), key=lambda t: t.seconds)
    memory = max(config.memory_mb(q) for q in group)
    return longest, sandbox.Limits(memory_mb=memory, wall_seconds=longest.seconds, cpu_seconds=longest.cpu_seconds)


def needs_own_run(run) -> bool:
    """A question's share of a group's run that must be run again alone."""
    return bool(run.problem or run.import_error) or any(not o.ok for o in run.outcomes.values())


def split(run, group, names: dict) -> dict:
    """A group's QuestionRun as one per question (each with its own cases' outcomes)."""
    return {q: dataclasses.replace(run, question=q, outcomes={n: run.outcomes[n] for n in names[q]}) for q in group}


def run_all(
    files: dict,
    config,
    times: dict,
    base: Path | None = None,
    questions=None,
    on_done=None,
    seconds: dict | None = None,
    isolate_hangs: bool = False,
    grouped: bool = False,
) -> dict:
    """question -> QuestionRun, as workers.run_all gives it, with the
    questions grouped (plan) and a question whose group's run went wrong
    run again alone. `seconds`: the reference's time per question.
    isolate_hangs: a question's own run stopped in a case costs that case
    alone, the rest run again (hangs.isolate). grouped=False (a
    submission's grading, for now): each question in a worker of its own,
    config.jobs at a time. Grouping is off for submissions because a
    question whose values are wrong but present is not run again alone, so
    one question's side effects could reach another's verdicts, and the
    hostile-submission tests (gated on the worker's question) no longer
    reach grouped questions; see the project notes."""
    registry = config.assignment.registry()
    questions = list(questions or registry.run_order)
    names = {q: [c.name for c in registry.producers(q)] for q in questions}
    sandbox_environment(config.assignment)
    group_id = sandbox.Group.create(cpu_tasks=max(1, config.jobs))
    try:
        with tempfile.TemporaryDirectory(prefix="grader-") as tmp:
            tmp = Path(tmp)
            copy_dir = build_copy(base or config.assignment.handout, files, tmp / "copy")
            runner = build_runner(tmp / "runner", config.assignment, config.inputs and config.inputs.path)

            def alone(q):
                result = run_question(q, copy_dir, runner, tmp, config, times[q], None, group_id)
                if isolate_hangs:
                    result = hangs.isolate(
                        result,
                        names[q],
                        lambda chosen: run_question(
                            only(q, chosen), copy_dir, runner, tmp, config, times[q], None, group_id
                        ),
                        registry.by_name,
                    )
                return result

            def run(group):
                if len(group) == 1:
                    found = {group[0]: alone(group[0])}
                else:
                    time, box = limits(config, group, times)
                    together = run_question(
                        SEVERAL.join(group),
                        copy_dir,
                        runner,
                        tmp,
                        config,
                        time,
                        None,
                        group_id,
                        [n for q in group for n in names[q]],
                        box,
                    )
                    found = split(together, group, names)
                    found = {
                        q: alone(q) if needs_own_run(r) else dataclasses.replace(r, limit=times[q])
                        for q, r in found.items()
                    }
                if on_done is not None:
                    for q in group:
                        on_done(q, found[q])
                return found

            groups = plan(questions, seconds or {}, config.jobs) if grouped else [[q] for q in questions]
            with ThreadPoolExecutor(max_workers=max(1, min(len(groups), config.jobs))) as pool:
                found = {}
                for part in pool.map(run, groups):
                    found.update(part)
            return {q: found[q] for q in questions}
    finally:
        if group_id is not None:
            group_id.remove()
