"""Solution and hidden-test markers: parse them, strip them.

A student block is

    # Q2
    ### BEGIN YOUR SOLUTION
    ...the instructor's code...
    ### END YOUR SOLUTION

and its body becomes one stub line at the BEGIN marker's indentation,
`raise NotImplementedError("Q2: EWiseDiv.gradient")`, naming the question (from
the tag comment) and the enclosing function (from the AST). The marker lines
stay so students see where to write. `### BEGIN HIDDEN TESTS` ...
`### END HIDDEN TESTS` regions disappear, markers included. Every other byte
is kept, line endings included.

The parser is a line state machine. Malformed markers raise MarkerError with
`path:line: reason`; the reasons are constants so tests can check the exact text.
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass

BEGIN_SOLUTION = "### BEGIN YOUR SOLUTION"
END_SOLUTION = "### END YOUR SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
MARKERS = (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN)

# Error reasons (the text after `path:line: `).
NESTED = "nested {marker}: the block opened at line {line} is still open"
ORPHAN_END = "{marker} without a matching BEGIN"
UNTERMINATED = "{marker} is never closed"
CODE_ON_MARKER = "code on a marker line: put {marker} alone on its line"
INDENT_MISMATCH = "END YOUR SOLUTION is indented {got} columns but its BEGIN (line {line}) is indented {want}"
UNTAGGED = "untagged block: the line above BEGIN YOUR SOLUTION must be a '# Qn' comment"
NOT_PYTHON = "not valid Python after stripping: {message}"
SOURCE_NOT_PYTHON = "not valid Python: {message}"

TAG_RE = re.compile(r"^\s*#\s*(Q\d+)\b")
# Lines keep their own ending; the last one may have none.
LINE_RE = re.compile(r"[^\n]*\n|[^\n]+\Z")


class MarkerError(Exception):
    """A malformed marker or an invalid result, as `path:line: reason`."""

    def __init__(self, path: str, line: int, reason: str):
        super().__init__(f"{path}:{line}: {reason}")
        self.path, self.line, self.reason = path, line, reason


@dataclass(frozen=True)
class Block:
    """One stripped region: a student block or a hidden-test region."""

    kind: str  # "solution" or "hidden"
    question: str  # "Q2"; "" for hidden tests
    qualname: str  # enclosing function, e.g. "EWiseDiv.gradient"
    begin: int  # 1-based line of the BEGIN marker
    end: int  # 1-based line of the END marker
    body: tuple[str, ...]  # the removed lines, without line endings


@dataclass(frozen=True)
class Stripped:
    text: str
    blocks: tuple[Block, ...]


def split_lines(text: str) -> list[str]:
    """Lines with their endings; joining them gives `text` back exactly."""
    return LINE_RE.findall(text)


def _content(line: str) -> str:
    return line.rstrip("\r\n")


def _indent(line: str) -> str:
    content = _content(line)
    return content[: len(content) - len(content.lstrip())]


def _eol(line: str) -> str:
    return line[len(_content(line)) :] or "\n"


def _marker_on(line: str, path: str, number: int) -> str | None:
    """The marker this line is, None if it has none; error if it has more."""
    for marker in MARKERS:
        if marker in line:
            if _content(line).strip() != marker:
                raise MarkerError(path, number, CODE_ON_MARKER.format(marker=marker))
            return marker
    return None


def _python_view(lines: list[str]) -> str:
    """The text with IPython magics (`!cmd`, `%magic`) blanked so ast can parse it."""
    out = []
    for line in lines:
        stripped = _content(line).lstrip()
        out.append(_indent(line) + "pass\n" if stripped[:1] in ("!", "%") else _content(line) + "\n")
    return "".join(out)


# One syntax tree at a time in this process: CPython before 3.11.5 (Debian
# 12's python3 is 3.11.2) can raise "SystemError: AST constructor recursion
# depth mismatch" when threads build trees at once (CPython gh-106905), and
# the grader sets up concurrent workers in threads (given_functions).
_AST_LOCK = threading.Lock()


def _parse(source: str) -> ast.Module:
    with _AST_LOCK:
        return ast.parse(source)


def enclosing_names(lines: list[str], path: str, fallback: str) -> dict[int, str]:
    """Map each line number to the qualified name of its innermost def/class."""
    try:
        tree = _parse(_python_view(lines))
    except SyntaxError as e:
        raise MarkerError(path, e.lineno or 1, SOURCE_NOT_PYTHON.format(message=e.msg)) from None
    names: dict[int, str] = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = prefix + child.name
                # Inner definitions are visited later and overwrite their lines.
                for n in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    names[n] = qualname
                visit(child, qualname + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return {n: names.get(n, fallback) for n in range(1, len(lines) + 1)}


class _Machine:
    """The line state machine: outside, in a solution block, in hidden tests."""

    def __init__(self, lines, path, names, strip_questions):
        self.lines, self.path, self.names = lines, path, names
        self.strip_questions = strip_questions  # None: strip every question
        self.out: list[str] = []
        self.blocks: list[Block] = []
        self.open_marker: str | None = None
        self.open_line = 0
        self.body: list[str] = []

    def run(self) -> Stripped:
        for number, line in enumerate(self.lines, start=1):
            marker = _marker_on(line, self.path, number)
            if marker is None:
                self._plain(line)
            elif marker in (BEGIN_SOLUTION, BEGIN_HIDDEN):
                self._begin(marker, line, number)
            else:
                self._end(marker, line, number)
        if self.open_marker is not None:
            raise MarkerError(self.path, self.open_line, UNTERMINATED.format(marker=self.open_marker))
        return Stripped("".join(self.out), tuple(self.blocks))

    def _plain(self, line):
        if self.open_marker is None:
            self.out.append(line)
        else:
            self.body.append(line)

    def _begin(self, marker, line, number):
        if self.open_marker is not None:
            raise MarkerError(self.path, number, NESTED.format(marker=marker, line=self.open_line))
        if marker == BEGIN_SOLUTION and (number == 1 or not TAG_RE.match(self.lines[number - 2])):
            raise MarkerError(self.path, number, UNTAGGED)
        self.open_marker, self.open_line, self.body = marker, number, []

    def _end(self, marker, line, number):
        expected = END_SOLUTION if self.open_marker == BEGIN_SOLUTION else END_HIDDEN
        if self.open_marker is None or marker != expected:
            raise MarkerError(self.path, number, ORPHAN_END.format(marker=marker))
        begin_line = self.lines[self.open_line - 1]
        if marker == END_SOLUTION:
            if _indent(line) != _indent(begin_line):
                raise MarkerError(
                    self.path,
                    number,
                    INDENT_MISMATCH.format(got=len(_indent(line)), line=self.open_line, want=len(_indent(begin_line))),
                )
            self._close_solution(begin_line, line, number)
        else:
            self.blocks.append(
                Block(
                    "hidden",
                    "",
                    self.names[self.open_line],
                    self.open_line,
                    number,
                    tuple(_content(b) for b in self.body),
                )
            )
        self.open_marker = None

    def _close_solution(self, begin_line, end_line, number):
        question = TAG_RE.match(self.lines[self.open_line - 2]).group(1)
        qualname = self.names[self.open_line]
        self.blocks.append(
            Block("solution", question, qualname, self.open_line, number, tuple(_content(b) for b in self.body))
        )
        self.out.append(begin_line)
        if self.strip_questions is None or question in self.strip_questions:
            stub = f'raise NotImplementedError("{question}: {qualname}")'
            self.out.append(_indent(begin_line) + stub + _eol(begin_line))
        else:
            self.out.extend(self.body)
        self.out.append(end_line)


def strip_source(
    text: str,
    path: str,
    *,
    fallback_name: str = "<module>",
    strip_questions: frozenset[str] | None = None,
    check_python: bool = True,
) -> Stripped:
    """Strip solution blocks (of `strip_questions`, default all) and hidden tests.

    Raises MarkerError for malformed markers, for a source that is not Python,
    and (if check_python) for a result that no longer compiles.
    """
    lines = split_lines(text)
    if any(marker in text for marker in MARKERS):
        try:
            names, bad_source = enclosing_names(lines, path, fallback_name), None
        except MarkerError as e:
            # Report marker errors first: they are the more precise diagnosis.
            names, bad_source = {n: fallback_name for n in range(1, len(lines) + 1)}, e
        result = _Machine(lines, path, names, strip_questions).run()
        if bad_source is not None:
            raise bad_source
    else:
        result = Stripped(text, ())
    if check_python:
        try:
            _parse(_python_view(split_lines(result.text)))
        except SyntaxError as e:
            raise MarkerError(path, e.lineno or 1, NOT_PYTHON.format(message=e.msg)) from None
    return result


def given_functions(text: str, path: str) -> list[str]:
    """The qualified names ("Op.__call__", "Tensor.backward") of the functions
    in a reference file that hold no student code: no solution block inside
    them, and not defined inside one. What a `where:` line skips over to find
    the student's own line (the worker's student_code.json)."""
    lines = split_lines(text)
    solution = [(b.begin, b.end) for b in strip_source(text, path, check_python=False).blocks if b.kind == "solution"]
    tree = _parse(_python_view(lines))
    given: list[str] = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = prefix + child.name
                first, last = child.lineno, child.end_lineno or child.lineno
                holds = any(first <= begin <= last for begin, _ in solution)
                inside = any(begin < first <= end for begin, end in solution)
                if not isinstance(child, ast.ClassDef) and not holds and not inside:
                    given.append(qualname)
                visit(child, qualname + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return given
