"""The fenced code blocks of README.md and docs/**/*.md, and the commands in them
(tests/docs/test_doc_blocks.py checks them; pytest puts this folder on sys.path).

A command is one simple command of a shell line: an `sh` block's every line, a
`console` block's `$ ` lines (what follows them is output), a line's `\\`
continuations and open quotes joined. Variables the block sets (`DB=...`) are
put in, and `$(nproc)`; `sudo` and leading `NAME=value` are left out. A
comment naming a command (`# = grader ...`, `# the same: ...`) is a command too.
"""

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<info>[^`]*)$")
EXAMPLE = re.compile(r"^<!-- example: ([a-z0-9-]+) -->$")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
OPERATORS = {";", "&&", "||", "|", "&"}
NAMED = re.compile(r"^(?:=|the same:)\s*(?P<command>\S.*)$")  # a comment naming the command it equals


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # the opening fence's line, from 1
    lang: str
    text: str  # the body, less the fence's indentation
    example: str  # NAME of the <!-- example: NAME --> right above, else ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


@dataclass(frozen=True)
class Command:
    block: Block
    line: str  # the shell line it is part of, as shown
    argv: tuple  # variables put in; sudo and leading assignments left out

    @property
    def program(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1]

    def grader_args(self):
        """The arguments of a `grader` command (`grader`, `.../bin/grader`, `python -m grader`), else None."""
        if self.program == "grader":
            return list(self.argv[1:])
        if self.program.startswith("python") and list(self.argv[1:3]) == ["-m", "grader"]:
            return list(self.argv[3:])
        return None


def blocks(page: Path, text: str = None) -> list:
    lines = (page.read_text(encoding="utf-8") if text is None else text).splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m["indent"], m["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        body = [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[i + 1 : j]]
        marker = EXAMPLE.match(lines[i - 1].strip()) if i else None
        text = "\n".join(body) + "\n" if body else ""
        found.append(Block(page, i + 1, m["info"].strip(), text, marker.group(1) if marker else ""))
        i = j + 1
    return found


def all_blocks() -> list:
    return [b for page in PAGES for b in blocks(page)]


def split_comment(line: str) -> tuple:
    """(code, comment) of a shell line: the comment starts at a `#` outside quotes after a blank."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip(), line[i + 1 :].strip()
    return line.rstrip(), ""


def _balanced(text: str) -> bool:
    try:
        shlex.split(split_comment(text)[0])
        return True
    except ValueError:  # an open quote: the line goes on
        return False


def logical_lines(block: Block) -> list:
    """The shell lines of an sh or console block, continuations joined."""
    out, current, console = [], None, block.lang == "console"
    for raw in block.text.splitlines():
        if current is None:
            if console and not raw.startswith("$ "):
                continue  # output
            current = raw[2:] if console else raw
        else:
            current += "\n" + raw
        if current.endswith("\\") or not _balanced(current):
            continue
        out.append(current)
        current = None
    if current is not None:
        out.append(current)
    return [line for line in out if line.strip()]


def _tokens(code: str) -> list:
    lexer = shlex.shlex(code.replace("\\\n", " "), posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    return list(lexer)


def _expand(code: str, variables: dict) -> str:
    code = code.replace("$(nproc)", "2")
    for name, value in variables.items():
        code = re.sub(rf"\$(?:{name}\b|\{{{name}\}})", lambda _: value, code)
    return code


def _simple_commands(code: str, variables: dict) -> list:
    """The simple commands of one line; a line that only sets variables sets them."""
    commands, current = [], []
    for token in [*_tokens(_expand(code, variables)), ";"]:
        if token not in OPERATORS:
            current.append(token)
            continue
        words = list(current)
        current = []
        assigned = {}
        while words and ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            if value.startswith("$("):  # NAME=$(command ...): the command
                words.insert(0, value[2:])
                break
            assigned[name] = value
        if not words:  # NAME=value ... alone: the block's variables from here on
            variables.update(assigned)
        if words and words[0] == "sudo":
            words.pop(0)
            while words and words[0].startswith("-"):
                flag = words.pop(0)
                if flag in ("-u", "-g") and words:
                    words.pop(0)
        if words:
            commands.append(tuple(words))
    return commands


def commands(block: Block) -> list:
    """Every command of an sh or console block, in order."""
    variables, found = {}, []
    for line in logical_lines(block):
        code, comment = split_comment(line)
        for argv in _simple_commands(code, variables):
            found.append(Command(block, line, argv))
        named = NAMED.match(comment)
        if named:
            for argv in _simple_commands(named["command"], dict(variables)):
                found.append(Command(block, line, argv))
    return found
