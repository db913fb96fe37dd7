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
"""

import hashlib
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from grader.grading.explain.causes import catalogue
from grader.grading.explain.causes.edits import apply_edits
from grader.grading.run import answer_pack, cache, expected, time_limits
from grader.grading.run.outcomes import Budget, read_outcome
from grader.grading.run.workers import only, run_all

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


def mutant_files(assignment, mutant, scratch: Path) -> dict:
    """handout path -> file: the reference's student files with the mutant's edits."""
    reference = assignment.reference
    sources = {rel: (reference / rel).read_text(encoding="utf-8") for rel in assignment.student_files}
    files = {}
    for rel, text in apply_edits(sources, mutant.edits).items():
        path = scratch / mutant.name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        files[rel] = path
    return files


def build(config, dest: Path, mutants) -> None:
    """Each mutant's raw worker output under dest/<mutant>/<question>/. A
    mutant that cannot run (a timeout) leaves no values: it explains nothing."""
    guard = time_limits.building()
    with tempfile.TemporaryDirectory(prefix="causes-src-") as scratch:

        def run(mutant):
            files = mutant_files(config.assignment, mutant, Path(scratch))
            (dest / mutant.name).mkdir()
            questions = [_worker_question(config.assignment.registry(), q, mutant) for q in mutant.questions]
            run_all(
                files,
                config,
                {q: guard for q in questions},
                base=config.assignment.reference,
                questions=questions,
                keep_outputs=dest / mutant.name,
            )

        with ThreadPoolExecutor(max(1, config.jobs)) as pool:
            list(pool.map(run, mutants))


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
    """The values as the workers left them, file by file (to be packed)."""
    values = {}
    for mutant in mutants:
        values[mutant.name] = {}
        for question in mutant.questions:
            budget = Budget(folder / mutant.name / question)
            values[mutant.name].update(
                {
                    name: read_outcome(budget, name)
                    for name in dict(names)[question]
                    if not mutant.cases or name in mutant.cases
                }
            )
    return values
