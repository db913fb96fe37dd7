"""Strip an assignment notebook for students, through nbformat.

Code cells get the same marker stripping as `.py` files and must not run
Python through the shell (`!python`: not the kernel's interpreter, and a
failure there does not stop "Run all"); outputs and
execution counts are cleared; cells tagged `instructor` are dropped; only
whitelisted metadata survives (anything else could carry a solution); the
result must pass `nbformat.validate`. The handout's copy carries its
generated-file label in its metadata (labels.py): JSON holds no comment.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import nbformat

from grader.core.labels import label_notebook
from grader.core.markers import Block, MarkerError, strip_source

INSTRUCTOR_TAG = "instructor"
# Metadata a student notebook needs; the rest (widgets state, execution
# timings, instructor notes) is dropped.
NOTEBOOK_METADATA = ("kernelspec", "language_info")
CELL_METADATA = ("tags", "editable", "deletable")

NOT_A_NOTEBOOK = "not a readable notebook: {message}"
SHELL_PYTHON = ("`!python`/`!pytest` runs whatever Python is on PATH, not the kernel's, and never "
                "fails the cell: call a helper that runs sys.executable (hw1_check.run_cases)")
SHELL_PYTHON_RE = re.compile(r"^\s*!\s*(python[\d.]*|pytest)\b")
INVALID_RESULT = "stripped notebook is invalid: {message}"


@dataclass(frozen=True)
class CellBlocks:
    """The blocks stripped from one code cell, with the cell's source."""
    where: str     # `hw1.ipynb#cell3`
    source: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class StrippedNotebook:
    text: str
    cells: tuple[CellBlocks, ...]


def cell_path(path: str, index: int) -> str:
    """How errors name a cell: `hw1.ipynb#cell3` (1-based, source order)."""
    return f"{path}#cell{index}"


def _read(text: str, path: str):
    try:
        return nbformat.reads(text, as_version=4)
    except (json.JSONDecodeError, nbformat.reader.NotJSONError, nbformat.ValidationError) as e:
        raise MarkerError(path, 1, NOT_A_NOTEBOOK.format(message=str(e).splitlines()[0])) from None


def _keep(metadata, allowed) -> dict:
    return {key: metadata[key] for key in allowed if key in metadata}


def _strip_cell(cell, index, path, strip_questions):
    """The student version of one cell (None to drop it), and its blocks."""
    if INSTRUCTOR_TAG in cell.get("metadata", {}).get("tags", []):
        # The whole cell is secret: the leak check looks for its lines too.
        lines = tuple(cell.source.splitlines())
        return None, CellBlocks(cell_path(path, index), cell.source,
                                (Block("instructor", "", "", 1, len(lines), lines),))
    source = cell.source
    cell = nbformat.from_dict(dict(cell))
    cell["metadata"] = _keep(cell.get("metadata", {}), CELL_METADATA)
    # nbformat >= 4.5 requires ids; fill missing ones deterministically.
    cell.setdefault("id", f"cell-{index}")
    if cell.cell_type != "code":
        return cell, None
    where = cell_path(path, index)
    for number, line in enumerate(cell.source.splitlines(), start=1):
        if SHELL_PYTHON_RE.match(line):
            raise MarkerError(where, number, SHELL_PYTHON)
    result = strip_source(cell.source, where, fallback_name=f"cell {index}",
                          strip_questions=strip_questions)
    cell["source"] = result.text
    cell["outputs"] = []
    cell["execution_count"] = None
    return cell, CellBlocks(where, source, result.blocks)


def strip_notebook(text: str, path: str, *, strip_questions: frozenset[str] | None = None,
                   label: str | None = None) -> StrippedNotebook:
    """Strip a notebook given as JSON text; raise MarkerError on any problem.

    label: the generated-file sentence to keep in its metadata (None: none)."""
    nb = _read(text, path)
    cells, stripped = [], []
    for index, cell in enumerate(nb.cells, start=1):
        kept, cell_blocks = _strip_cell(cell, index, path, strip_questions)
        if cell_blocks is not None and cell_blocks.blocks:
            stripped.append(cell_blocks)
        if kept is not None:
            cells.append(kept)
    nb.cells = cells
    nb.nbformat_minor = max(nb.get("nbformat_minor", 0), 5)  # 4.5: cells have ids
    nb.metadata = _keep(nb.metadata, NOTEBOOK_METADATA)
    if label is not None:
        label_notebook(nb, label)
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as e:
        raise MarkerError(path, 1, INVALID_RESULT.format(message=str(e).splitlines()[0])) from None
    out = nbformat.writes(nb)
    return StrippedNotebook(out if out.endswith("\n") else out + "\n", tuple(stripped))
