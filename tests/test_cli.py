"""The commands as people type them: each test runs `grader` (or make) in a
real subprocess and checks what the user sees."""

import ast
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PY = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable


def grader(*args, cwd=ROOT, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MUGRADE_KEY="", MUGRADE_SERVER="")
    return subprocess.run(
        [PY, "-m", "grader", *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, **kw
    )


def plain_env(**extra):
    """This environment as a plain shell has it: without PYTHONUNBUFFERED
    (set on some machines, it hides output left in the buffer at exit)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return {**env, **extra}


def one_line_error(result, *words):
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and result.stdout == "", result
    assert "Traceback" not in result.stderr and all(w in lines[-1] for w in words), result.stderr
    return lines


def test_version_is_the_package_version():
    from importlib import metadata

    r = grader("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"grader {metadata.version('needle-grader')}"


def test_a_bad_option_gets_the_commands_own_usage():
    r = grader("grade", "--bogus")
    lines = one_line_error(r, "grader grade: error:", "--bogus")
    assert lines[0].startswith("usage: grader grade ") and r.returncode == 2
    assert not any("COMMAND" in line for line in lines)


@pytest.mark.parametrize(
    "command, option, default",
    [
        ("grade", "--out", "(default: out)"),
        ("serve", "--port", "(default: 8000)"),
        ("serve", "--db", "sqlite:///grader.db"),
        (
            "grade-batch",
            "--timeout",
            "(default: 10 x the reference's time for the question on this machine now, at least 20 s)",
        ),
        ("grade", "--memory-mb", "(default: 1024)"),
        ("grade", "--jobs", "(default: 2)"),
    ],
)
def test_help_shows_defaults(command, option, default):
    r = grader(command, "--help")
    assert r.returncode == 0
    block = r.stdout[r.stdout.index(f"  {option} ") :]
    block = block[: block.index("\n  -", 1)] if "\n  -" in block[1:] else block
    assert default in " ".join(block.split()), block


def test_every_command_names_one_function_that_exists():
    """cli.COMMANDS is the map a reader follows: each entry is `module:function`,
    and the function takes the parsed options alone."""
    import importlib
    import inspect

    from grader import cli

    for command, (declare, target, _) in cli.COMMANDS.items():
        module, _, name = target.partition(":")
        function = getattr(importlib.import_module(module), name)
        assert list(inspect.signature(function).parameters) == ["args"], command
        assert name == command.replace("-", "_") + "_command", command
        declare(cli.argparse.ArgumentParser(prog=f"grader {command}"))  # options declare without error


def test_check_handout_with_a_missing_reference_is_one_line(tmp_path):
    r = grader("check-handout", tmp_path / "nowhere", tmp_path / "h")
    one_line_error(r, f"{tmp_path / 'nowhere'}: not a directory")
    assert r.returncode == 2


def test_gradebook_from_another_folder_names_the_missing_database(tmp_path):
    r = grader("gradebook", "--out", tmp_path / "g.csv", cwd=tmp_path)
    one_line_error(r, "no database at", str(tmp_path / "grader.db"), "--db")
    assert not (tmp_path / "grader.db").exists() and not (tmp_path / "g.csv").exists()


def test_gradebook_into_a_missing_folder_is_one_line(tmp_path):
    db = tmp_path / "g.db"
    assert grader("users", "add", "ada", "--db", f"sqlite:///{db}").returncode == 0
    r = grader("gradebook", "--db", f"sqlite:///{db}", "--out", tmp_path / "missing" / "dir" / "g.csv")
    one_line_error(r, "--out", "does not exist")
    assert not (tmp_path / "missing").exists()


def test_publish_without_a_scheme_is_one_clear_line():
    r = grader("publish", "--server", "127.0.0.1:8000", "--key", "k")
    lines = one_line_error(r, "grader publish: --server '127.0.0.1:8000'", "http://")
    assert len(lines) == 1 and r.returncode == 2


def test_serve_on_a_used_port_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = grader("serve", "--db", f"sqlite:///{tmp_path / 'g.db'}", "--port", port)
    lines = one_line_error(r, f"cannot listen on 127.0.0.1:{port}", "--port")
    assert len(lines) == 1


def test_output_into_a_closed_pipe_has_no_traceback(tmp_path):
    # `grader users import roster.csv | head -1`; the reader here leaves before the
    # grader writes anything, so the write surely meets a closed pipe
    roster = tmp_path / "roster.csv"
    roster.write_text("name,role\n" + "".join(f"student{i},student\n" for i in range(20)))
    script = f'"{PY}" -m grader users import "{roster}" --db "sqlite:///{tmp_path / "g.db"}" | true'
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=plain_env(PYTHONPATH=str(ROOT)),
    )
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr and r.stderr == "", r.stderr
    assert r.returncode == 141


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["grade", "--help"], ["users", "--help"]])
def test_help_into_a_closed_pipe_has_no_traceback(args):
    # `grader --help | head -1`: argparse prints and exits; the exit must not
    # leave the output to a flush at interpreter exit, into the closed pipe
    script = f'"{PY}" -m grader {" ".join(args)} | true'
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=plain_env(PYTHONPATH=str(ROOT)),
    )
    assert r.stderr == "" and r.returncode == 141, r.stderr


def test_make_grade_keeps_a_path_with_a_space(tmp_path):
    odd = tmp_path / "a b" / "c"
    odd.mkdir(parents=True)
    r = subprocess.run(
        ["make", "-n", "grade", f"SUBMISSION={odd}", f"OUT={tmp_path / 'o u t'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = [x for x in r.stdout.splitlines() if "-m grader grade" in x][0]
    assert f'"{odd}"' in line and f'--out "{tmp_path / "o u t"}"' in line
    # and the quoted command really reaches the grader as one argument
    r = grader("grade", odd, "--out", tmp_path / "o u t")
    assert str(odd) in r.stderr + r.stdout and "a b/c" in (r.stderr + r.stdout)


def test_users_import_into_a_missing_folder_adds_nobody(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("name,role\nada,student\n")
    db = f"sqlite:///{tmp_path / 'g.db'}"
    r = grader("users", "import", roster, "--db", db, "--out", tmp_path / "missing" / "keys.csv")
    one_line_error(r, "--out", "does not exist")
    again = grader("users", "import", roster, "--db", db, "--out", tmp_path / "keys.csv")
    assert again.returncode == 0, again.stderr  # ada was not added the first time (her key would be lost)


def test_what_a_command_starts_first_imports_nothing_heavy():
    """cli.STARTS_FIRST runs before the command's own imports (grade-batch's
    pool server, which then imports the grader beside them): its module
    must load at once, standard library only, or it would hold up the start."""
    from grader import cli

    assert cli.STARTS_FIRST, "nothing starts first: drop this test"
    for command, target in cli.STARTS_FIRST.items():
        assert command in cli.COMMANDS
        module = target.partition(":")[0]
        code = (
            "import sys, grader.cli; before = set(sys.modules); "
            f"import {module}; print(sorted(m for m in set(sys.modules) - before if m.startswith(('grader', 'numpy'))))"
        )
        loaded = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
        parents = {".".join(module.split(".")[:k]) for k in range(1, module.count(".") + 2)}
        assert set(ast.literal_eval(loaded.stdout)) <= parents, (command, loaded.stdout)
        assert callable(cli._load(target))
