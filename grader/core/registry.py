"""The trusted side's view of an assignment's case registry.

An assignment's cases are a Python package (hw1's is grader/shipped/cases)
that imports nothing from grader, since the sandboxed worker loads a copy of
it on its own. It exposes:

    QUESTIONS   rows with key, label, points, imports (modules the worker
                imports, in order) and memory (a multiple of the memory limit)
    CASES       rows with name, question, contract, description, fn, source,
                weight, rtol, atol, check, hidden, advisory, threshold, value_key
    CONTRACT    contract line key -> the handout's promise a scored case tests
    BEYOND      the same for advisory cases
    RUN_ORDER   optional: question keys, longest first (default: QUESTIONS order)
    SHARED_WORKERS  optional: groups of question keys a submission's grading
                runs in one worker, in QUESTIONS order (default: a worker
                per question)
    read_test_set  optional: data folder -> (X, y), what "test_error" cases
                evaluate returned weights on
    NUMERIC_TOLERANCE  optional: how close the reference's analytic gradients
                must be to the cases' central differences (default 1e-6)

Its functions take the library under test as arguments, so reading the
package imports no student code. A package inside this repository is imported
by its dotted name (one copy of its classes); another is loaded from its path.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from grader.core.paths import ROOT
from grader.shipped.cases.registry import CaseTable

REQUIRED = ("QUESTIONS", "CASES", "CONTRACT", "BEYOND")


class RegistryLoadError(ValueError):
    """The cases package cannot be read; the message names it and what is missing."""


@dataclass(frozen=True)
class Registry(CaseTable):
    """The package's questions and cases with their lookups (CaseTable, the
    package's own), plus what only the trusted side reads: the contract
    texts, the run order, the numeric tolerance and the test set reader,
    checked on load."""

    contract: dict = field(default_factory=dict)
    beyond: dict = field(default_factory=dict)
    run_order: tuple = ()  # question keys, longest-running first
    numeric_tolerance: float = 1e-6
    read_test_set: object = None  # data folder -> (X, y), or None
    shared_workers: tuple = ()  # groups of question keys graded in one worker

    def workers(self, questions=None) -> list:
        """The grading's workers, each a tuple of question keys (one, or a
        group of SHARED_WORKERS in QUESTIONS order), of `questions` (default:
        all; a key of no question stands alone) in their order, a group
        where its first question is."""
        questions = list(questions or self.run_order)
        order = [q.key for q in self.questions]
        units, placed = [], set()
        for key in questions:
            if key in placed:
                continue
            group = next((g for g in self.shared_workers if key in g), None)
            unit = (key,) if group is None else tuple(sorted((q for q in group if q in questions), key=order.index))
            units.append(unit)
            placed.update(unit)
        return units

    def memory(self, question: str) -> int:
        return _memory(self.question[question])

    def inputs_per_submission(self) -> tuple:
        """The questions whose cases get inputs drawn for each submission
        (the rest: the course's, drawn once per grading secret)."""
        return tuple(q.key for q in self.questions if getattr(q, "inputs", "course") == "submission")


def _memory(question) -> int:
    return getattr(question, "memory", 1)  # optional in a cases package's Question rows


def _module_name(folder: Path) -> str:
    if folder.is_relative_to(ROOT):
        parts = folder.relative_to(ROOT).parts
        if all((ROOT.joinpath(*parts[: i + 1]) / "__init__.py").is_file() for i in range(len(parts))):
            return ".".join(parts)
    return "assignment_cases_" + hashlib.sha256(str(folder).encode()).hexdigest()[:12]


# One import of a cases package at a time: a thread that found the module in
# sys.modules while another still ran its __init__ would see it half made
# (grade-batch's setup thread and its gradebook load the registry together).
_IMPORTING = threading.Lock()


def _import(folder: Path):
    with _IMPORTING:
        return _import_now(folder)


def _import_now(folder: Path):
    name = _module_name(folder)
    if name in sys.modules or not name.startswith("assignment_cases_"):
        return importlib.import_module(name)
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@lru_cache(maxsize=None)
def load_registry(folder: Path) -> Registry:
    folder = Path(folder).resolve()
    try:
        module = _import(folder)
    except Exception as e:
        raise RegistryLoadError(f"{folder}: the cases package does not import: {type(e).__name__}: {e}") from e
    missing = [n for n in REQUIRED if not hasattr(module, n)]
    if missing:
        raise RegistryLoadError(f"{folder}/__init__.py: define {', '.join(missing)} (see grader/core/registry.py)")
    keys = [q.key for q in module.QUESTIONS]
    order = tuple(getattr(module, "RUN_ORDER", keys))
    if sorted(order) != sorted(keys):
        raise RegistryLoadError(f"{folder}/__init__.py: RUN_ORDER must list each question key once")
    bad = [q.key for q in module.QUESTIONS if not (type(_memory(q)) is int and _memory(q) >= 1)]
    if bad:
        raise RegistryLoadError(f"{folder}: question {bad[0]!r}: memory must be a whole multiple >= 1")
    unknown = sorted({c.question for c in module.CASES} - set(keys))
    if unknown:
        raise RegistryLoadError(f"{folder}: case question {unknown[0]!r} is not in QUESTIONS")
    shared = tuple(tuple(group) for group in getattr(module, "SHARED_WORKERS", ()))
    grouped = [key for group in shared for key in group]
    if any(len(group) < 2 for group in shared) or len(grouped) != len(set(grouped)) or set(grouped) - set(keys):
        raise RegistryLoadError(
            f"{folder}/__init__.py: SHARED_WORKERS must be groups of two or more question keys, each key in one group"
        )
    return Registry(
        tuple(module.QUESTIONS),
        tuple(module.CASES),
        dict(module.CONTRACT),
        dict(module.BEYOND),
        order,
        float(getattr(module, "NUMERIC_TOLERANCE", 1e-6)),
        getattr(module, "read_test_set", None),
        shared,
    )
