"""The reference's values on every case's candidates, cached like the
expected answers.

The candidates depend on the cases alone (not on a grading seed), so one
sandboxed run of the reference over all of them serves every seed and
every submission: built once per (expected-answers key, spec), under the
grader's private cache (0700), appearing by an atomic rename. Its meta.json
records how long the run took. The values are packed once built
(run/answer_pack.py): 0.1 s less for each grading process that shrinks.
"""

import dataclasses
import json
from functools import lru_cache
from pathlib import Path

from grader import sandbox
from grader.grading.explain.shrink import candidates as cands
from grader.grading.explain.shrink import spec
from grader.grading.run import answer_pack, cache, expected, time_limits
from grader.grading.run.outcomes import Budget, read_outcome
from grader.grading.run.workers import run_mode
from grader.shipped import likely_cause

META = "meta.json"  # written last: a folder without it is not a cache
PACK = "values"  # the packed values' name in the folder (answer_pack.py)
FORMAT = "v2"  # part of the folder's name: v2 has the pack (a v1 folder is left, not misread)
FILES_PER_CANDIDATE = 8  # its record and its arrays (grad2 of a binary op: 6)


def shrinkable(case) -> bool:
    """A scored value case that is one op call (advisories are never shrunk:
    a correct solution may fail them on purpose) with smaller calls to try."""
    return of_shrinkable_kind(case) and bool(cands.candidates(case))


def of_shrinkable_kind(case) -> bool:
    """shrinkable(case) without building its candidates (all cases': 50 ms):
    a scored value case that calls one op the shrinkers know."""
    call = getattr(case, "call", None)
    return (
        not case.advisory
        and case.check in likely_cause.VALUE_CHECKS
        and case.fn is not None
        and call is not None
        and call.op in cands.SHRINKERS
    )


def all_candidates(registry) -> tuple:
    """Every shrinkable case's candidates, in the registry's order."""
    return _all(registry.cases)


@lru_cache(maxsize=4)
def _all(cases: tuple) -> tuple:
    return tuple(c for case in cases if shrinkable(case) for c in cands.candidates(case))


def imports(registry, cases) -> list:
    """What the worker imports for these cases: their questions' modules, each once."""
    return list(
        dict.fromkeys(m for q in dict.fromkeys(c.question for c in cases) for m in registry.question[q].imports)
    )


def spec_of(registry, chosen) -> dict:
    """The spec of candidates `chosen` (descriptions from their cases)."""
    cases = [registry.by_name[name] for name in dict.fromkeys(c.case for c in chosen)]
    return spec.document(chosen, {c.name: c.description for c in cases}, imports(registry, cases))


def limits(config, registry, chosen, time) -> sandbox.Limits:
    """The heaviest question's memory, room for every candidate's files."""
    questions = {registry.by_name[c.case].question for c in chosen}
    base = max((config.limits_for(q, time) for q in questions), key=lambda ln: ln.memory_mb)
    return dataclasses.replace(base, out_dir_files=FILES_PER_CANDIDATE * len(chosen) + 16)


def evaluate(files, config, chosen, time, base=None, keep=None):
    """One sandboxed run evaluating `chosen` on the library base + files: a QuestionRun."""
    registry = config.assignment.registry()
    doc = spec_of(registry, chosen)
    return run_mode(
        files,
        expected.settled(config),
        spec.MODE,
        [c.id for c in chosen],
        time,
        limits(config, registry, chosen, time),
        {spec.FILE: spec.text(doc)},
        base=base,
        keep_outputs=keep,
    )


_SPEC_KEYS = {}  # a registry's cases -> the key of their candidates' spec


def _key(registry) -> str:
    """The key of every candidate's spec, once per process: building the
    whole spec (1076 candidates for hw1) took each grading that shrank 0.1 s."""
    key = _SPEC_KEYS.get(registry.cases)
    if key is None:
        key = _SPEC_KEYS[registry.cases] = spec.key(spec_of(registry, all_candidates(registry)))
    return key


def reference_dir(config) -> Path:
    """The cache folder of the reference's values on every candidate, built if missing."""
    config = expected.settled(config)
    registry = config.assignment.registry()
    chosen = all_candidates(registry)
    final = cache.cache_root() / f"shrink-{FORMAT}-{expected.cache_key(config.assignment)}-{_key(registry)}"

    def build(folder):
        if not chosen:  # an assignment without shrinkable cases: nothing to run, nothing to show
            answer_pack.write({}, folder, PACK)
            (folder / META).write_text(json.dumps({"seconds": 0.0, "workload_seconds": 0.0}))
            return
        reference = config.assignment.reference
        files = {rel: reference / rel for rel in config.assignment.student_files}
        workload = time_limits.workload_seconds()
        run = evaluate(files, expected.public(config), chosen, time_limits.building(), base=reference, keep=folder)
        if run.import_error or run.problem:
            raise expected.ReferenceError(
                f"reference: the shrink candidates' run failed: {run.import_error or run.problem}"
            )
        answer_pack.write(_read_files(folder, tuple(c.id for c in chosen)), folder, PACK)
        (folder / META).write_text(json.dumps({"seconds": run.seconds, "workload_seconds": workload}))

    expected.expected_dir(config)  # a broken reference stops there first, with its reason
    return cache.built_once(
        final,
        META,
        build,
        f"running the reference on the {len(chosen)} smaller "
        "inputs of the smallest-failing-input step (once per change)...",
        "smaller inputs' answers ready",
    )


def prepare(config) -> None:
    """Build the reference's values on the candidates now, when the
    assignment has any (grade-batch: alongside its pool, batch/setup.py)."""
    if all_candidates(config.assignment.registry()):
        reference_dir(config)


def load(config) -> dict:
    """candidate id -> the reference's Outcome; ids it could not run are absent."""
    folder = reference_dir(config)
    return _read(folder, tuple(c.id for c in all_candidates(config.assignment.registry())))


@lru_cache(maxsize=2)
def _read(folder: Path, ids: tuple) -> dict:
    """Once per process, from the pack."""
    packed = answer_pack.read_built(folder, PACK, "the reference's values on the candidates are not packed")
    return {i: packed[i] for i in ids if i in packed}


def _read_files(folder: Path, ids: tuple) -> dict:
    """The values the worker left, file by file (to be packed): those it could run."""
    budget = Budget(folder / spec.MODE, max_bytes=1 << 30)
    out = {i: read_outcome(budget, i) for i in ids}
    return {i: o for i, o in out.items() if o.ok}


def time_limit(runs, questions) -> time_limits.TimeLimit:
    """The student run's limit: the longest its failing cases' questions ran
    under (scaled from the reference's times on this machine now, or
    --timeout): their candidates are smaller than their cases, and no second
    measurement of the machine is paid for."""
    limits = [runs[q].limit for q in questions if runs[q].limit is not None]
    if not limits:
        return time_limits.building()
    longest = max(limits, key=lambda limit: limit.seconds)
    return time_limits.TimeLimit(longest.seconds, f"{longest.why}, as for the question")
