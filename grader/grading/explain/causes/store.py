"""The known bugs' values on a grading seed's inputs, cached like the
expected answers.

Each catalogue mutant (the reference with one bug planted) runs through the
same sandboxed worker as submissions, on its question's cases only, once
per (expected-answers key, catalogue, seed): a batch pays it once, never
per submission, and only when a submission first fails a case a mutant
could explain (diagnose.py). The folder sits in the grader's private cache
(0700, unreadable by the sandbox uid) and appears by an atomic rename, so
concurrent graders build it at most twice and never read half of it.
Once built, the values are packed in two files (run/answer_pack.py): a
grading process reads them in about 0.05 s, where the ten thousand files
the workers left took 0.5 s.

A few known bugs of one question share a worker, one after the other
(the worker's `variants` mode: each bug in a folder of its own, imported
afresh): a sandbox start and numpy's import were most of a known bug's
run, so hw1's 75 runs became 14, and the build takes half the CPU and
half the time it took. A bug its worker did not finish (a stop, a crash)
runs again in a worker of its own, where a bug that cannot run leaves no
values, as before.
"""

import dataclasses
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from grader.grading.explain.causes import catalogue
from grader.grading.explain.causes.edits import apply_edits
from grader.grading.run import answer_pack, cache, expected, time_limits
from grader.grading.run.outcomes import Budget, read_outcome
from grader.grading.run.workers import ONLY, only, run_mode

MODE = "variants"  # the worker's mode that runs several variants of the library (its VARIANTS)
SPEC = "variants.json"  # what it reads beside it (its VARIANTS_SPEC)
OF = "_"  # variant v3's value of a case: v3_CASE; v3.json once it ran them all (the worker's OF)
PER_WORKER = 6  # known bugs one worker runs: a tenth of each one's run is its own work
RUN = "run.json"  # in each run's folder: the question its worker ran and the mutant of each variant

DONE = "complete"  # written last: a folder without it is not a cache
PACK = "values"  # the packed values' name in the folder (answer_pack.py)
FORMAT = "v2"  # part of the folder's name: v2 has the pack (a v1 folder is left, not misread)


def catalogue_key(mutants=catalogue.MUTANTS) -> str:
    """Changes with any mutant's edits or message (reprs hold both)."""
    return hashlib.sha256(repr(mutants).encode()).hexdigest()[:12]


def causes_dir(config, mutants=catalogue.MUTANTS) -> Path:
    """The cache folder of the mutants' values on config's seed, built if missing."""
    config = expected.settled(config)
    expected.expected_dir(config)  # the expected answers first: a broken reference stops there, with its reason
    final = cache.cache_root() / (
        f"causes-{FORMAT}-{expected.cache_key(config.assignment)}-{catalogue_key(mutants)}-{expected.inputs_id(config)}"
    )

    def build_into(folder):
        build(config, folder, mutants)
        values = _read_files(folder, _names(config.assignment.registry()), mutants)
        answer_pack.write({f"{m}/{case}": o for m, cases in values.items() for case, o in cases.items()}, folder, PACK)
        (folder / DONE).write_text("complete\n")

    return cache.built_once(
        final,
        DONE,
        build_into,
        f"running the {len(mutants)} known bugs of the likely-cause catalogue on this seed's inputs (once per seed)...",
        "known bugs ready",
    )


def prepare(config) -> None:
    """Build the known bugs' values for config's seed now if the catalogue
    covers its assignment, config.jobs mutants at once: grade-batch does, in
    a thread alongside its pool (batch/setup.py); a pool process that needs
    them meanwhile waits for them on the cache's lock."""
    if catalogue.covers(config.assignment):
        causes_dir(config)


def mutant_files(assignment, mutant) -> dict:
    """handout path -> text: the reference's student files with the mutant's edits."""
    reference = assignment.reference
    sources = {rel: (reference / rel).read_text(encoding="utf-8") for rel in assignment.student_files}
    return apply_edits(sources, mutant.edits)


def build(config, dest: Path, mutants) -> None:
    """The workers' raw output under dest/run<N>/: a run for every
    PER_WORKER mutants of one question, config.jobs runs at once; then each
    mutant that its run did not finish, in a run of its own. A mutant that
    cannot run (a timeout) leaves no values: it explains nothing."""
    registry = config.assignment.registry()
    units = {}
    for mutant in mutants:
        for question in mutant.questions:
            units.setdefault(_worker_question(registry, question, mutant), []).append(mutant)
    batches = [(q, tuple(ms[i : i + PER_WORKER])) for q, ms in units.items() for i in range(0, len(ms), PER_WORKER)]

    def run(numbered):
        number, (question, chunk) = numbered
        return [(question, m) for m in _run_variants(config, dest / f"run{number}", question, chunk)]

    with ThreadPoolExecutor(max(1, config.jobs)) as pool:
        again = [left for lefts in pool.map(run, enumerate(batches)) for left in lefts]
        list(pool.map(run, enumerate([(q, (m,)) for q, m in again], start=len(batches))))


def _run_variants(config, folder: Path, question: str, chunk: tuple) -> list:
    """One worker running `question` for each mutant of `chunk` in turn (as
    variants v0, v1, ...); its output kept in `folder`. The mutants it did not finish."""
    assignment, guard, key = config.assignment, time_limits.building(), question.partition(ONLY)[0]
    ids = [_variant(i) for i in range(len(chunk))]
    spec = {"question": question, "variants": [[v, mutant_files(assignment, m)] for v, m in zip(ids, chunk)]}
    base = config.limits_for(key, guard)
    limits = dataclasses.replace(base, out_dir_files=base.out_dir_files * len(chunk))
    folder.mkdir()
    (folder / RUN).write_text(json.dumps({"question": key, "mutants": [m.name for m in chunk]}), encoding="utf-8")
    run_mode(
        {rel: assignment.reference / rel for rel in assignment.student_files},
        config,
        MODE,
        ids,
        guard,
        limits,
        {SPEC: json.dumps(spec)},
        base=assignment.reference,
        keep_outputs=folder,
    )
    return [m for i, m in enumerate(chunk) if not _finished(folder, i)]


def _variant(number: int) -> str:
    return f"v{number}"


def _finished(folder: Path, number: int) -> bool:
    """Did the run kept in `folder` run every case of its variant `number`?"""
    return (folder / MODE / f"{_variant(number)}.json").is_file()


def _worker_question(registry, question, mutant) -> str:
    """What the worker runs of `question` for `mutant`: all its cases, or only
    the mutant's (a ReLU bug: the ReLU case of Q6, not its MNIST epochs)."""
    names = [c.name for c in registry.producers(question) if not mutant.cases or c.name in mutant.cases]
    return only(question, names) if mutant.cases else question


def load(config, mutants=catalogue.MUTANTS) -> dict:
    """mutant name -> {case name -> Outcome} on config's seed."""
    return _read(causes_dir(config, mutants), mutants)


def _names(registry) -> tuple:
    """(question, its case names) for every question."""
    return tuple((q, tuple(c.name for c in registry.producers(q))) for q in registry.question)


@lru_cache(maxsize=2)
def _read(folder: Path, mutants) -> dict:
    """Read once per process and seed, from the pack: a batch diagnoses many
    submissions against the same values, which nothing mutates."""
    packed = answer_pack.read_built(folder, PACK, "the known bugs' values are not packed")
    values = {mutant.name: {} for mutant in mutants}
    for key, outcome in packed.items():
        mutant, _, case = key.partition("/")
        if mutant in values:
            values[mutant][case] = outcome
    return values


def _read_files(folder: Path, names: tuple, mutants) -> dict:
    """The values as the workers left them, file by file (to be packed): each
    mutant's from the run that finished it (none: no values)."""
    finished = {}  # (mutant, question) -> (its run's output, its values' prefix)
    for run in sorted(folder.glob(f"run*/{RUN}")):
        doc = json.loads(run.read_text(encoding="utf-8"))
        for number, mutant in enumerate(doc["mutants"]):
            if _finished(run.parent, number):
                finished[(mutant, doc["question"])] = (run.parent / MODE, _variant(number) + OF)
    values = {}
    for mutant in mutants:
        values[mutant.name] = {}
        for question in mutant.questions:
            out, prefix = finished.get((mutant.name, question), (folder / "none", ""))
            budget = Budget(out)
            values[mutant.name].update(
                {
                    name: read_outcome(budget, prefix + name)
                    for name in dict(names)[question]
                    if not mutant.cases or name in mutant.cases
                }
            )
    return values
