"""Expected values: the case workers run on reference/, cached on disk.

The cache key hashes the reference sources, the case code, the worker
script, the grader's numpy version, the packages of the sandbox's Python
(assignment.toml's [environment]) and the format of meta.json, so any
change to one of them recomputes the answers. The reference runs in the
students' sandbox environment (the course's numpy); the grader, on its own
numpy, compares with tolerances. The cache directory is private to the
grader's user (0700): the sandbox uid cannot read it. Building also checks
the reference itself: every case must produce a value, and every analytic
gradient must match central differences of the reference forward. It also
records how long each question took the reference: the base of the time
limits (time_limits.py).
"""

import dataclasses
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from grader import ROOT, sandbox
from grader.core.assignment import Assignment
from grader.grading.run import answer_pack, cache, gradcheck, inputs, seeds, time_limits
from grader.grading.run.outcomes import MISSING, Budget
from grader.grading.run.worker_dirs import WORKER
from grader.grading.run.workers import SEVERAL, run_all, run_mode, split_run

# Part of the key: a cache whose meta.json lacks a field this grader reads
# (v2: the reference's times; v3: its times per case; v4: a workload half as long; v5: the answers
# packed, answer_pack.py) is rebuilt, not misread.
META_FORMAT = b"meta v5"
DRAWING = Path(inputs.__file__)  # how inputs are drawn from a key: part of the key


class ReferenceError(RuntimeError):
    """The reference fails its own cases: fix reference/ or the case."""


def settled(config):
    """`config` with its seed settled (the machine's own unless one was
    given) and its inputs drawn: the course's for that seed, unless a
    submission's own were given (inputs.py)."""
    if config.seed is None:
        config = dataclasses.replace(config, seed=seeds.machine_seed(cache.private_root()))
    if config.seed == seeds.PUBLIC or config.inputs is not None:
        return config
    grading_key = inputs.key(config.seed, inputs.COURSE)
    return dataclasses.replace(
        config, inputs=drawn_inputs(config, grading_key, inputs.derivation(seeds.seed_id(config.seed), inputs.COURSE))
    )


def public(config):
    """`config` on the handout's fixed inputs."""
    return dataclasses.replace(config, seed=seeds.PUBLIC, inputs=None)


def course(config):
    """`config` settled on the course's inputs (whatever submission it was keyed to)."""
    return settled(dataclasses.replace(config, inputs=None) if config.seed else config)


def for_submission(config, digest: str):
    """`config` settled on the inputs of the submission whose student files
    hash to `digest`: drawn for it for the questions that take a
    submission's own (Question.inputs), the course's for the rest. Its
    expected answers are the reference's on them (built once per submission:
    a regrade of the same files reuses them)."""
    config = settled(config)
    own = config.assignment.registry().inputs_per_submission()
    if config.seed == seeds.PUBLIC or not own or not digest:
        return config
    submission_key = inputs.key(config.seed, inputs.SUBMISSION, digest)
    key_id = inputs.key_id(submission_key)
    dest = cache.private_root() / f"{cache.SUBMISSION_PREFIX}inputs-{cache_key(config.assignment)}-{key_id}.npz"
    if dest.is_file():
        cache.touch(dest)
    else:
        folder = expected_dir(public(config))
        by_question = {q: inputs.read_requests([folder / q]) for q in config.assignment.registry().question}
        course_requests, own_requests = inputs.split(
            by_question, [q for q in config.assignment.registry().question if q not in own]
        )
        arrays = inputs.draw(inputs.key(config.seed, inputs.COURSE), course_requests)
        arrays.update(inputs.draw(submission_key, own_requests))
        inputs.write(arrays, dest)
        cache.prune_submissions()  # a new submission's entries: drop the least recently used beyond the limit
    derivation = inputs.derivation(seeds.seed_id(config.seed), inputs.SUBMISSION, digest)
    return dataclasses.replace(config, inputs=inputs.Drawn(dest, key_id, derivation, own))


def own_questions(config) -> tuple:
    """The questions whose expected answers a settled config's own folder holds."""
    return (config.inputs and config.inputs.own) or tuple(config.assignment.registry().question)


def inputs_id(config) -> str:
    """Names the inputs a settled config grades on (cache folders)."""
    return "public" if config.inputs is None else config.inputs.key_id


def drawn_inputs(config, grading_key: bytes, derivation: str) -> inputs.Drawn:
    """The inputs `grading_key` draws for every call the reference's cases
    make on the public inputs, in a private .npz (built once per key)."""
    key_id = inputs.key_id(grading_key)
    dest = cache.private_root() / f"inputs-{cache_key(config.assignment)}-{key_id}.npz"
    if not dest.is_file():
        folder = expected_dir(public(config))
        requests = inputs.read_requests(folder / q for q in config.assignment.registry().question)
        inputs.write(inputs.draw(grading_key, requests), dest)
    return inputs.Drawn(dest, key_id, derivation)


def reference_sources(assignment: Assignment) -> list:
    """The reference's library sources, whose values are the expected answers."""
    reference = assignment.reference
    return sorted((reference / "python").rglob("*.py")) + sorted((reference / "apps").glob("*.py"))


def case_sources(assignment: Assignment) -> list:
    """The case table and its code (the cases package)."""
    return sorted(assignment.cases_dir.rglob("*.py"))


def data_files(assignment: Assignment) -> list:
    """The data the cases read (hw1: MNIST), named by path, size and mtime (not hashed: 60 MB)."""
    folder = Path(assignment.data)
    if not folder.is_dir():
        return []
    return [
        f"{p.relative_to(folder)}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    ]


_KEYS: dict = {}  # (numpy, format, Python, packages, data, each source's path, size and mtime) -> the key: hashed once


def cache_key(assignment: Assignment) -> str:
    """What the answers depend on besides the inputs' key (which names the
    folder too): the grader's numpy and Python (the sandbox copies this
    interpreter), the sandbox's packages, the data, the reference, the
    cases, the worker and how inputs are drawn. A grading asks a dozen
    times: the sources are read and hashed again only when one changed."""
    data = data_files(assignment)
    sources = reference_sources(assignment) + case_sources(assignment) + [WORKER, DRAWING]
    stamp = (np.__version__, META_FORMAT, sys.version, repr(assignment.packages), *data, *map(_stamp, sources))
    if stamp not in _KEYS:
        _KEYS[stamp] = _hashed(assignment, data, sources)
    return _KEYS[stamp]


def _stamp(path: Path) -> tuple:
    """A source as the cache key's memo tells it apart: path, size and mtime, from one stat."""
    st = path.stat()
    return str(path), st.st_size, st.st_mtime_ns


def _hashed(assignment: Assignment, data: list, sources: list) -> str:
    digest = hashlib.sha256(np.__version__.encode() + META_FORMAT + sys.version.encode() + b"\0")
    digest.update(repr(assignment.packages).encode() + b"\0")  # the worker's numpy computes the answers
    digest.update("\n".join(data).encode() + b"\0")
    for path in sources:
        # paths relative to the repository for hw1 (a stable key), absolute for another assignment
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        digest.update(str(name).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:24]


def _check_reference(runs, registry):
    for question, run in runs.items():
        if run.import_error:
            raise ReferenceError(f"reference: {run.import_error} ({question})")
        for name, outcome in run.outcomes.items():
            if not outcome.ok:
                raise ReferenceError(f"reference fails {name} ({question}): {outcome.problem or run.problem}")
    for case in registry.cases:
        if case.check != "analytic" or case.question not in runs:
            continue
        value = runs[case.question].outcomes[case.value_key].value
        for k, (a, n) in enumerate(zip(value["analytic"], value["numeric"])):
            a, n = np.asarray(a, dtype=np.float64), np.asarray(n, dtype=np.float64)
            tol = registry.numeric_tolerance
            check = gradcheck.compare(a, n, k, rtol=tol, atol=tol) if a.shape == n.shape else None
            if check is None or not check.ok:
                detail = (
                    f"shape {a.shape} vs {n.shape}"
                    if check is None
                    else f"max abs error {check.max_abs_error:.3g} at {check.where}"
                )
                raise ReferenceError(
                    f"reference gradient {k} of {case.name} differs from central "
                    f"differences ({detail}): fix reference/ or the case"
                )


def build(config, dest: Path) -> None:
    """Run the reference's workers and keep their raw output under dest.
    The course's answers also record each question's time (the base of its
    time limits, reference_times) in meta.json; a submission's own answers
    do not: their limits are the course's, so this machine is not timed
    for them (that timing held the reference's run back)."""
    config = settled(config)
    reference = config.assignment.reference
    files = {rel: reference / rel for rel in config.assignment.student_files}
    questions = own_questions(config)
    times = None
    if config.inputs is not None and config.inputs.own:
        runs = _build_together(files, config, questions, dest)
    else:
        workload = time_limits.workload_seconds()
        guard = {q: time_limits.building() for q in questions}
        runs = run_all(files, config, guard, base=reference, questions=list(questions), keep_outputs=dest)
        # The quieter of the two calibrations: later ratios to it err generous.
        times = time_limits.ReferenceTimes(
            {q: run.seconds for q, run in runs.items()},
            min(workload, time_limits.workload_seconds()),
            {q: case_seconds(dest / q, run.outcomes) for q, run in runs.items()},
        )
    _check_reference(runs, config.assignment.registry())
    answer_pack.write({name: o for run in runs.values() for name, o in run.outcomes.items()}, dest)
    meta = {
        "numpy": np.__version__,
        "packages": list(config.assignment.packages),
        "tier": next(iter(runs.values())).tier,
    }
    if times is not None:
        meta["times"] = times.to_json()
    (dest / "meta.json").write_text(json.dumps(meta))


def case_seconds(folder: Path, names) -> dict:
    """case -> the seconds the reference's worker took for it, from its
    records in `folder` (trusted: the reference's run)."""
    found, budget = {}, Budget(folder)
    for name in names:
        try:
            seconds = budget.json(name + ".json").get("seconds")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(seconds, (int, float)) and seconds >= 0:
            found[name] = float(seconds)
    return found


def _build_together(files, config, questions, dest: Path) -> dict:
    """A submission's own answers: the reference's cases of `questions` in
    one worker (one sandbox start, not one per question: this is paid per
    submission), its output split into dest/<question>/ as run_all keeps it."""
    registry, guard = config.assignment.registry(), time_limits.building()
    names = {q: [c.name for c in registry.producers(q)] for q in questions}
    limits = sandbox.Limits(
        memory_mb=max(config.memory_mb(q) for q in questions), wall_seconds=guard.seconds, cpu_seconds=guard.cpu_seconds
    )
    with tempfile.TemporaryDirectory(prefix="together-", dir=dest) as tmp:
        run = run_mode(
            files,
            config,
            SEVERAL.join(questions),
            [n for q in questions for n in names[q]],
            guard,
            limits,
            {},
            base=config.assignment.reference,
            keep_outputs=Path(tmp),
        )
        out = Path(tmp) / SEVERAL.join(questions)
        for q in sorted(questions, key=len, reverse=True):  # longest key first: no key is another's prefix
            (dest / q).mkdir()
            for path in out.glob(f"{q}_*"):
                path.rename(dest / q / path.name)
    return split_run(run, names)


def run_graded(files: dict, config, on_limits=None, **options) -> dict:
    """run_all for a submission's `files`: on the inputs of config's seed
    (settled), under the time limits of this machine now, each question in
    a worker of its own or those of the registry's SHARED_WORKERS in one,
    config.jobs workers at a time, its hangs isolated.
    `on_limits()`, when given, is called once the limits are worked out."""
    config = settled(config)

    def limits():
        try:
            return config.time_limits_now(reference_times(config))
        finally:
            if on_limits is not None:
                on_limits()

    # worked out (the reference's times read, this machine timed) while the
    # submission's copy and runner are built
    return run_all(files, config, time_limits.Measuring(limits), isolate_hangs=True, **options)


def reference_times(config) -> time_limits.ReferenceTimes:
    """What building the expected answers measured (the base of the time
    limits): the course's, which has every question."""
    meta = json.loads((expected_dir(course(config)) / "meta.json").read_text())
    return time_limits.ReferenceTimes.from_json(meta["times"])


def expected_dir(config) -> Path:
    """The cache folder for the current key and seed, built if missing."""
    config = settled(config)
    final = cache.private_root() / f"expected-{cache_key(config.assignment)}-{inputs_id(config)}"
    if config.inputs is not None and config.inputs.own:  # one submission's: quietly, seconds
        final = final.with_name(cache.SUBMISSION_PREFIX + final.name)
        return cache.built_once(final, "meta.json", lambda folder: build(config, folder), "", "")
    return cache.built_once(
        final,
        "meta.json",
        lambda folder: build(config, folder),
        f"building the expected answers: the {config.assignment.name} reference's cases, once per "
        "change and per grading seed (about a minute)...",
        "expected answers ready",
    )


def load(config) -> dict:
    """computing case name -> Outcome of the reference (on a submission's
    inputs: its own folder's, and the course's for the other questions)."""
    config = settled(config)
    answers, registry = {}, config.assignment.registry()
    own = own_questions(config)
    folders = {q: expected_dir(config) for q in own}
    if len(own) < len(registry.question):
        folders.update({q: expected_dir(course(config)) for q in registry.question if q not in own})
    packs = {folder: answer_pack.read_built(folder) for folder in set(folders.values())}
    for question in registry.question:
        pack = packs[folders[question]]
        answers.update({c.name: pack.get(c.name, MISSING) for c in registry.producers(question)})
    return answers
