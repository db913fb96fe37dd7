"""The package layout holds: no import cycles among grader modules (imports
inside functions count too), and the trust boundary is visible in the
imports: grader/shipped (what runs beside student code) imports nothing
from `grader`, and nothing else imports needle, simple_ml or pickle, or
calls np.load with allow_pickle=True. Read with `ast`, nothing is imported."""

import ast
from pathlib import Path

import pytest

GRADER = Path(__file__).resolve().parents[1] / "grader"
SHIPPED = "grader.shipped"
FORBIDDEN_TRUSTED = {"needle", "simple_ml", "pickle", "cPickle", "_pickle", "dill", "cloudpickle"}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = GRADER) -> dict:
    """name -> (path, parsed tree) for every .py file of the package."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        if "migrations" in path.parts:
            continue  # alembic scripts, run by alembic, never imported by name
        found[module_name(path, root)] = (path, ast.parse(path.read_text(), str(path)))
    return found


def _absolute(name: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _known(name: str, found: dict) -> str:
    """The module itself, else the nearest enclosing package that is ours ("" if none)."""
    while name and name not in found:
        name = name.rpartition(".")[0]
    return name


def import_graph(found: dict) -> dict:
    """module -> the grader modules it imports: `from pkg import sub` is an
    edge to pkg.sub when that is a module, else to pkg; and an edge to pkg in
    both cases, as the name is read from pkg's namespace (so a package whose
    `__init__` imports a module that does `from . import x` is a cycle)."""
    graph = {}
    for name, (path, tree) in found.items():
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                edges |= {_known(alias.name, found) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                target = _absolute(name, node, path.name == "__init__.py")
                edges |= {_known(f"{target}.{alias.name}", found) for alias in node.names}
                edges.add(_known(target, found))
        graph[name] = edges - {name, ""}
    return graph


def cycles(graph: dict) -> list:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _imports(name: str, path: Path, tree: ast.AST) -> list:
    """(module named, written relative?) for every import anywhere in the file."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, False) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((_absolute(name, node, path.name == "__init__.py"), node.level > 0))
    return out


def boundary_problems(found: dict) -> list:
    problems = []
    for name, (path, tree) in found.items():
        untrusted = name == SHIPPED or name.startswith(SHIPPED + ".")
        for imported, relative in _imports(name, path, tree):
            top = imported.split(".")[0]
            # relative imports inside untrusted/ stay inside the copy the sandbox gets
            inside = relative and imported.startswith(SHIPPED)
            if untrusted and top == "grader" and not inside:
                problems.append(f"{name}: imports {imported} (the untrusted side imports nothing from grader)")
            if not untrusted and top in FORBIDDEN_TRUSTED:
                problems.append(f"{name}: imports {imported} (the trusted side never imports it)")
        if not untrusted:
            problems += [f"{name}:{line}: np.load with allow_pickle=True" for line in _pickle_loads(tree)]
    return sorted(set(problems))


def _pickle_loads(tree: ast.AST) -> list:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load":
            for kw in node.keywords:
                if kw.arg == "allow_pickle" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                    lines.append(node.lineno)
    return lines


def test_no_import_cycles_among_grader_modules():
    found = modules()
    assert len(found) > 60, "the walk found too few modules"
    assert cycles(import_graph(found)) == []


def test_trust_boundary_in_the_imports():
    assert boundary_problems(modules()) == []


def _package(tmp_path, files: dict) -> Path:
    root = tmp_path / "grader"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from grader import b\n",
            "b.py": "def f():\n    from grader.a import x\n",
            "c.py": "import grader.a\n",
        },
    )
    assert cycles(import_graph(modules(root))) == [["grader.a", "grader.b"]]


def test_a_package_init_importing_a_module_that_imports_the_package_back_is_a_cycle(tmp_path):
    # grader/server/__init__.py once did this: a lazy create_app importing app, whose `from . import api` reads
    # the package back
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "p/__init__.py": "def f():\n    from .app import g\n",
            "p/app.py": "from . import api\n",
            "p/api.py": "",
        },
    )
    assert cycles(import_graph(modules(root))) == [["grader.p", "grader.p.app"]]
    (root / "p" / "__init__.py").write_text('"""A package that imports nothing."""\n')
    assert cycles(import_graph(modules(root))) == []


def test_the_server_package_init_imports_nothing():
    """Importing one part of the server (say `answers.values` from a test) must not start the rest."""
    path, tree = modules()["grader.server"]
    assert _imports("grader.server", path, tree) == []


def server_problems(found: dict) -> list:
    """The server is assignment-agnostic: it reads an assignment through grader.core.assignment, never a cases
    package (of grader.shipped it uses only the comparison rule, tolerance)."""
    cases = SHIPPED + ".cases"
    return sorted(
        {
            f"{name}: imports {imported}"
            for name, (path, tree) in found.items()
            if name.startswith("grader.server.")
            for imported, _ in _imports(name, path, tree)
            if imported == cases or imported.startswith(cases + ".")
        }
    )


def test_the_server_imports_no_assignment_s_cases():
    assert server_problems(modules()) == []


def test_a_server_module_importing_the_cases_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "server/__init__.py": "",
            "server/gradebook/__init__.py": "",
            "server/gradebook/load.py": "def f():\n    from grader.shipped.cases import QUESTION\n",
        },
    )
    assert server_problems(modules(root)) == ["grader.server.gradebook.load: imports grader.shipped.cases"]


SERVER_LAYERS = ("config", "answers", "store", "accounts", "gradebook", "web", "commands")


def layer_problems(found: dict) -> list:
    """Each part of grader.server imports only the parts before it in SERVER_LAYERS (and itself)."""
    problems = []
    for name, (path, tree) in found.items():
        part = name.split(".")[2] if name.startswith("grader.server.") else None
        if part is None:
            continue
        for imported, _ in _imports(name, path, tree):
            other = imported.split(".")[2] if imported.startswith("grader.server.") else None
            if other is not None and SERVER_LAYERS.index(other) > SERVER_LAYERS.index(part):
                problems.append(f"{name}: imports {imported} ({part} comes before {other})")
    return sorted(set(problems))


def test_the_server_parts_import_only_the_layers_below_them():
    found = modules()
    assert {name.split(".")[2] for name in found if name.startswith("grader.server.")} == set(SERVER_LAYERS)
    assert layer_problems(found) == []


def test_a_server_part_importing_a_later_one_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "server/__init__.py": "",
            "server/store/__init__.py": "",
            "server/web/__init__.py": "",
            "server/web/app.py": "from ..store import db\n",
            "server/store/db.py": "def f():\n    from grader.server.web import app\n",
        },
    )
    assert layer_problems(modules(root)) == [
        "grader.server.store.db: imports grader.server.web (store comes before web)"
    ]


def test_a_relative_import_cycle_is_found(tmp_path):
    root = _package(
        tmp_path,
        {"__init__.py": "", "p/__init__.py": "", "p/m.py": "from . import n\n", "p/n.py": "from .m import y\n"},
    )
    assert cycles(import_graph(modules(root))) == [["grader.p.m", "grader.p.n"]]


@pytest.mark.parametrize(
    "rel, text, words",
    [
        (
            "shipped/w.py",
            "def f():\n    from grader.grading import report\n",
            "grader.shipped.w: imports grader.grading",
        ),
        ("grading/x.py", "import pickle\n", "grader.grading.x: imports pickle"),
        ("grading/y.py", "def f():\n    import needle.ops\n", "grader.grading.y: imports needle.ops"),
        ("grading/z.py", "import numpy as np\nnp.load('f', allow_pickle=True)\n", "grader.grading.z:2: np.load"),
    ],
)
def test_a_boundary_crossing_is_found(tmp_path, rel, text, words):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "shipped/__init__.py": "",
            "grading/__init__.py": "",
            "shipped/ok.py": "import needle\nfrom . import w2\n",
            "shipped/w2.py": "",
            rel: text,
        },
    )
    problems = boundary_problems(modules(root))
    assert len(problems) == 1 and problems[0].startswith(words), problems
