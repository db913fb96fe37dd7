"""The worker's module-level constants, read from its source: the worker is
a script that nothing imports, so the names the grader writes for it (modes,
spec files, separators) are checked against these."""

import ast

from grader import ROOT


def constants() -> dict:
    tree = ast.parse((ROOT / "grader" / "shipped" / "worker.py").read_text())
    return {
        t.id: n.value.value
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)
    }
