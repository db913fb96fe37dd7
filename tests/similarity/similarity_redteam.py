"""The verbatim copy that reads like an empty submission: every handout
stub kept as shipped, the reference's solution functions appended
unchanged under other names, and the stubs' names rebound to them, in each
way Python allows (`C.f = g`, `f = g`, through an alias, `setattr`, a
decorator that names its target)."""

from __future__ import annotations

import ast
import textwrap

from grader import HANDOUT, REFERENCE

STYLES = ("assign", "setattr", "alias", "decorator")
# Styles the tests name a function by, kept whatever its place among the
# blocks (the rest take STYLES in turn, so a block added or removed in the
# reference must not move them).
PINNED = {"EWiseDiv.gradient": "setattr", "nn_epoch": "decorator"}
DECORATOR = """

def _replaces(owner, name=None):
    def install(function):
        if name is None:
            globals()[owner.__name__] = function
        else:
            setattr(owner, name, function)
        return function
    return install
"""


def functions(text: str) -> dict:
    """qualname -> the source of that def (decorators included), dedented."""
    tree, lines, found = ast.parse(text), text.splitlines(), {}
    for node in tree.body:
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        for sub in inner:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = f"{node.name}.{sub.name}" if sub is not node else sub.name
                first = min([sub.lineno, *(d.lineno for d in sub.decorator_list)])
                found[q] = textwrap.dedent("\n".join(lines[first - 1 : sub.end_lineno]))
    return found


def binding(style: str, qualname: str, copy: str) -> tuple:
    """(lines before the copy's def, lines after it) that make `qualname` run it."""
    owner, _, attr = qualname.rpartition(".")
    if style == "decorator":
        return ([f'@_replaces({owner}, "{attr}")'] if owner else [f"@_replaces({attr})"]), []
    if style == "setattr" and owner:
        return [], [f'setattr({owner}, "{attr}", {copy})']
    if style == "alias":
        return [], [f"_impl_{copy} = {copy}", f"{qualname} = _impl_{copy}"]
    return [], [f"{qualname} = {copy}"]


def rebound_copy(template, source=REFERENCE, dynamic: bool = False) -> dict:
    """rel -> text: the handout's files with `source`'s solution functions
    appended as `_copy_N` and the graded names rebound to them; with
    `dynamic`, all at once by a loop over a table (`setattr(owner, name, f)`,
    `globals()[name] = f`), which only running the file would resolve."""
    out, n = {}, 0
    for tfile in template.files:
        text = (HANDOUT / tfile.rel).read_text()
        theirs = functions((source / tfile.rel).read_text())
        parts, table = [text.rstrip("\n"), DECORATOR], []
        for qualname in tfile.blocks:
            copy = f"_copy_{n}"
            before, after = binding(PINNED.get(qualname, STYLES[n % len(STYLES)]), qualname, copy)
            if dynamic:
                owner, _, attr = qualname.rpartition(".")
                before, after = [], []
                table.append(f"    ({owner or 'None'}, {attr!r}, {copy}),")
            body = theirs[qualname].replace(f"def {qualname.rpartition('.')[2]}(", f"def {copy}(", 1)
            parts.append("\n".join(["", *before, body, *after, ""]))
            n += 1
        if table:
            parts.append(
                "\n".join(
                    [
                        "",
                        "_TABLE = [",
                        *table,
                        "]",
                        "for _owner, _name, _f in _TABLE:",
                        "    if _owner is None:",
                        "        globals()[_name] = _f",
                        "    else:",
                        "        setattr(_owner, _name, _f)",
                        "",
                    ]
                )
            )
        out[tfile.rel] = "\n".join(parts) + "\n"
    return out
