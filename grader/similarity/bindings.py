"""Which code runs for each graded function: a student can leave a stub as
shipped and make its name run other code. Read from the file's syntax tree
(Python's `ast`: parsed, never compiled or run), module and class bodies in
order, the last binding of a name winning as when Python runs the file:

- `def f` / `def C.f`: the function itself (its decorators' functions too);
- `f = g`, `C.f = g`, `f = C.g`, `f: T = g`, and `f = g` in class C's body;
- `setattr(C, "f", g)`;
- a decorator on a student's own function that names a graded function,
  as `@replaces(C, "f")`, `@replaces(C.f)` or `@replaces("f")` (what such a
  decorator does cannot be known without running it: naming one counts);
- `g` above may be a name bound to a function earlier (`h = g`), an
  attribute `C.g`, a lambda, or a call wrapping any of those
  (`staticmethod(g)`, `functools.partial(g, 1)`).

Calls from what runs to the student's own functions (not the handout's)
are followed too, transitively. Bindings this cannot resolve
(`setattr(C, name, g)` with a computed name, `globals()[...] = g`, `exec`)
are reported as dynamic.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

DYNAMIC_CALLS = frozenset({"exec", "eval", "compile", "__import__"})
DYNAMIC_NAMES = frozenset({"globals", "locals", "vars", "__dict__", "__code__", "__setattr__"})


@dataclass(frozen=True)
class Rebinding:
    target: str  # the graded qualname, e.g. "EWiseDiv.gradient"
    sources: tuple  # qualnames of the functions it now runs, and ("lambda", first, last) ranges
    line: int  # where the binding is
    how: str  # "assignment", "setattr", "decorator"


@dataclass(frozen=True)
class Bindings:
    rebound: dict  # graded qualname -> Rebinding (only those no longer their own def)
    decorated: dict  # graded qualname -> qualnames of functions its decorators name
    calls: dict  # function qualname -> qualnames of functions it names (calls, references)
    spans: dict  # function qualname -> (first line, last line) of its def (decorators included)
    dynamic: tuple  # lines of bindings that cannot be resolved without running the file


def parse(text: str):
    """The module's tree, or None when it is not valid Python (tokens still are)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class _Reader:
    def __init__(self, graded: frozenset):
        self.graded = graded
        self.defs, self.alias, self.bound = {}, {}, {}
        self.decorated, self.calls, self.dynamic = {}, {}, []

    # --- what an expression refers to -------------------------------------------
    def refs(self, node, owner: str = "") -> tuple:
        """Function qualnames (and lambda ranges) an expression can evaluate to."""
        if isinstance(node, ast.Name):
            return self.name_refs(node.id, owner)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            q = f"{node.value.id}.{node.attr}"
            return self.alias.get(q, (q,) if q in self.defs else ())
        if isinstance(node, ast.Lambda):
            return (("lambda", node.lineno, getattr(node, "end_lineno", node.lineno)),)
        found = ()
        for child in ast.iter_child_nodes(node):
            found += self.refs(child, owner)
        return found

    def name_refs(self, name: str, owner: str) -> tuple:
        for q in (f"{owner}.{name}", name) if owner else (name,):
            if q in self.alias:
                return self.alias[q]
            if q in self.defs:
                return (q,)
        return ()

    # --- statements -------------------------------------------------------------
    def bind(self, target: str, value, line: int, how: str, owner: str = ""):
        sources = self.refs(value, owner) if not isinstance(value, tuple) else value
        self.alias[target] = sources
        if target in self.graded:
            if sources == (target,):
                self.bound.pop(target, None)
            else:
                self.bound[target] = Rebinding(target, tuple(dict.fromkeys(sources)), line, how)

    def target_name(self, node, owner: str) -> str:
        if isinstance(node, ast.Name):
            return f"{owner}.{node.id}" if owner else node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return f"{node.value.id}.{node.attr}"
        return ""

    def function(self, node, owner: str):
        q = f"{owner}.{node.name}" if owner else node.name
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        self.defs[q] = (first, node.end_lineno)
        self.calls[q] = (node, owner)  # resolved once the whole file is read (Python looks names up late)
        self.bind(q, (q,), node.lineno, "def")
        decorator_refs = tuple(r for d in node.decorator_list for r in self.refs(d, owner) if isinstance(r, str))
        if q in self.graded and node.decorator_list:
            self.decorated[q] = decorator_refs
        for d in node.decorator_list:
            for target in self.decorator_targets(d, owner):
                if target != q:
                    self.bind(target, (q,), d.lineno, "decorator")

    def named_by(self, q: str) -> tuple:
        """The functions `q`'s body names (`f`, `C.f`, `self.f`), as the file ends."""
        node, owner = self.calls[q]
        named = set()
        inside = [*node.args.defaults, *node.args.kw_defaults, *node.body]  # not its decorators: they ran once
        for sub in (n for top in inside if top is not None for n in ast.walk(top)):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls"):
                q = f"{owner}.{sub.attr}"
                named.update(self.alias.get(q, (q,) if q in self.defs else ()) if owner else ())
            elif isinstance(sub, (ast.Name, ast.Attribute)):
                named.update(r for r in self.refs(sub, owner) if isinstance(r, str))
        return tuple(sorted(named - {q}))

    def decorator_targets(self, node, owner: str):
        """Graded functions a decorator call names: `C, "f"`, `C.f`, `f`, `"f"`."""
        if not isinstance(node, ast.Call):
            return []
        args = [*node.args, *(k.value for k in node.keywords)]
        classes = [a.id for a in args if isinstance(a, ast.Name)]
        out = []
        for a in args:
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                out += [q for q in (a.value, *(f"{c}.{a.value}" for c in classes)) if q in self.graded]
            else:
                q = self.target_name(a, "")
                out += [q] if q in self.graded else []
        return out

    def statement(self, node, owner: str = ""):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(node, owner)
        elif isinstance(node, ast.ClassDef) and not owner:
            for child in node.body:
                self.statement(child, node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self.assign(target, node.value, node.lineno, owner)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, node.value, node.lineno, owner)
        else:
            self.other(node, owner)

    def assign(self, target, value, line: int, owner: str):
        name = self.target_name(target, owner)
        if name:
            self.bind(name, value, line, "assignment", owner)
        else:
            self.dynamic_in(target, line)
        self.dynamic_in(value, line)

    def other(self, node, owner: str):
        """setattr(C, "f", g) resolves; other dynamic bindings are noted."""
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Name)
                and sub.func.id == "setattr"
                and len(sub.args) == 3
            ):
                cls, attr, value = sub.args
                if isinstance(cls, ast.Name) and isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                    self.bind(f"{cls.id}.{attr.value}", value, sub.lineno, "setattr", owner)
                else:
                    self.dynamic.append(sub.lineno)
        self.dynamic_in(node, getattr(node, "lineno", 0), skip_setattr=True)

    def dynamic_in(self, node, line: int, skip_setattr: bool = False):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in DYNAMIC_CALLS:
                self.dynamic.append(sub.lineno)
            elif isinstance(sub, ast.Name) and sub.id in DYNAMIC_NAMES:
                self.dynamic.append(getattr(sub, "lineno", line))
            elif isinstance(sub, ast.Attribute) and sub.attr in DYNAMIC_NAMES:
                self.dynamic.append(sub.lineno)
            elif (
                not skip_setattr
                and isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Name)
                and sub.func.id == "setattr"
            ):
                self.dynamic.append(sub.lineno)


def read_bindings(text: str, graded) -> Bindings:
    """The Bindings of a student file (empty when it is not valid Python)."""
    tree = parse(text)
    reader = _Reader(frozenset(graded))
    try:
        for node in tree.body if tree is not None else ():
            reader.statement(node)
        calls = {q: reader.named_by(q) for q in reader.calls}
    except RecursionError:  # an expression nested past Python's stack: read as unresolved
        return Bindings({}, {}, {}, {}, (0,))  # line 0: the whole file
    return Bindings(
        dict(reader.bound), dict(reader.decorated), calls, dict(reader.defs), tuple(sorted(set(reader.dynamic)))
    )


def running(bindings: Bindings, graded) -> frozenset:
    """What runs as some graded function (its def or its rebinding's sources)."""
    found = set()
    for q in graded:
        found.update(s for s in (bindings.rebound[q].sources if q in bindings.rebound else (q,)) if isinstance(s, str))
    return frozenset(found)


def reached(bindings: Bindings, start, own: frozenset, graded=frozenset()) -> tuple:
    """The student's own functions (qualnames in `own`) that `start`'s
    functions reach by naming them, transitively, in order found; a
    function that runs as another graded function is that one's code, not
    a helper (`graded`: those, from `running`)."""
    seen, todo = [], [q for q in start if isinstance(q, str)]
    while todo:
        q = todo.pop(0)
        for callee in bindings.calls.get(q, ()):
            if callee in own and callee not in seen and callee not in start and callee not in graded:
                seen.append(callee)
                todo.append(callee)
    return tuple(seen)
