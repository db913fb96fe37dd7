"""The public API of a Python source file, as data: what a student's code
and the course's tests can name in it.

`public_api(text)` reads a module without importing it and returns
{name: description} for every module-level function, class and assigned
name, and every method and class attribute (as "Class.name"). A function's
description is its decorators and its signature with defaults and type
hints, so two files agree only when the same calls and the same overrides
work on both. Imports are left out: they are how a file is written, not
what it offers.

`python -m grader.handout.api GIT_DIR [COMMIT]` prints the record of the
course's hw1 files (as tests/handout/course_api.json holds it) from a git
directory of the course's repository.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys

# The course files whose API the handout must offer, as paths in both trees.
COURSE_FILES = (
    "apps/simple_ml.py",
    "python/needle/__init__.py",
    "python/needle/autograd.py",
    "python/needle/backend_numpy.py",
    "python/needle/init/__init__.py",
    "python/needle/init/init_basic.py",
    "python/needle/ops/__init__.py",
    "python/needle/ops/ops_mathematic.py",
)


def _text(node) -> str:
    return " ".join(ast.unparse(node).split())


def _argument(arg: ast.arg, default) -> str:
    text = arg.arg + (f": {_text(arg.annotation)}" if arg.annotation is not None else "")
    return text + (f" = {_text(default)}" if default is not None else "")


def signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """`@decorator def (a, b: int = 1, *, c) -> T` for a function node."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    parts = [_argument(arg, d) for arg, d in zip(positional, defaults)]
    if a.posonlyargs:
        parts.insert(len(a.posonlyargs), "/")
    if a.vararg:
        parts.append("*" + _argument(a.vararg, None))
    elif a.kwonlyargs:
        parts.append("*")
    parts += [_argument(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        parts.append("**" + _argument(a.kwarg, None))
    returns = f" -> {_text(fn.returns)}" if fn.returns is not None else ""
    decorators = "".join(f"@{_text(d)} " for d in fn.decorator_list)
    return f"{decorators}def ({', '.join(parts)}){returns}"


def _assigned(node) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _members(body, prefix: str) -> dict[str, str]:
    out = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[prefix + node.name] = signature(node)
        elif isinstance(node, ast.ClassDef):
            bases = ", ".join(_text(b) for b in node.bases)
            out[prefix + node.name] = f"class ({bases})"
            out.update(_members(node.body, f"{prefix}{node.name}."))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            out.update({prefix + name: "attribute" for name in _assigned(node)})
    return out


def public_api(text: str) -> dict[str, str]:
    """{name: description} of a module's source text (see the module's doc)."""
    return _members(ast.parse(text).body, "")


def differences(want: dict[str, str], got: dict[str, str]) -> list[str]:
    """One line per name missing, extra or described differently in `got`."""
    lines = []
    for name in sorted(set(want) | set(got)):
        if name not in got:
            lines.append(f"missing: {name} {want[name]}")
        elif name not in want:
            lines.append(f"extra: {name} {got[name]}")
        elif want[name] != got[name]:
            lines.append(f"differs: {name}: the course's {want[name]}, this one's {got[name]}")
    return lines


def record(git_dir: str, commit: str = "HEAD") -> dict:
    """The API of COURSE_FILES at `commit` of the course's repository."""
    def show(path):
        return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], check=True,
                              capture_output=True, text=True).stdout
    resolved = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", commit], check=True,
                              capture_output=True, text=True).stdout.strip()
    return {"source": f"dlsyscourse/hw1 at {resolved}, by `python -m grader.handout.api GIT_DIR`",
            "files": {path: public_api(show(path)) for path in COURSE_FILES}}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not 1 <= len(argv) <= 2:
        print("usage: python -m grader.handout.api GIT_DIR [COMMIT]", file=sys.stderr)
        return 2
    try:
        print(json.dumps(record(*argv), indent=1, sort_keys=True))
    except subprocess.CalledProcessError as e:
        print(f"grader.handout.api: cannot read the course's files from {argv[0]}: "
              f"{(e.stderr or '').strip() or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
