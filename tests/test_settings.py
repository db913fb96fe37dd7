"""Every setting declared once (grader/core/settings/): each declaration's
check refuses a wrong value and keeps its default, the command line's flags
and ServerConfig/RunConfig agree with the declarations, a bad flag is one
line and exit 2, and docs/reference/settings.md is what the declarations
give now."""

import argparse
import dataclasses
import importlib
import math

import pytest

from grader import cli, sandbox
from grader.core import settings
from grader.core.settings import __main__ as settings_main
from grader.core.settings import page
from grader.core.settings.setting import Setting, shown_value
from grader.grading.run import time_limits
from grader.grading.run.config import QuestionLimits, RunConfig
from grader.server.config import ServerConfig

CHECKED = [s for s in settings.ALL if s.checked()]
# Wrong values of the settings checked by a function (valid=...), which no rule describes.
WRONG_BY_FUNCTION = {"trusted_proxies": ["proxy.example.org", "10.0.0.0/33", ""], "cluster": ["localhost:8786", ""]}


def wrong_values(s: Setting) -> list:
    """Values the declaration's check must refuse, as typed."""
    wrong = []
    if s.choices:
        wrong += ["bogus", str(s.choices[0]).upper()]
    if s.at_least is not None:
        wrong.append(s.at_least - 1 if s.type is int else s.at_least - 0.5)
    if s.at_most is not None:
        wrong.append(s.at_most + 1)
    if s.positive:
        wrong += [s.type(0), s.type(-1)]
    if s.type is float and (s.at_least is not None or s.at_most is not None or s.positive):
        wrong.append(math.nan)
    if s.valid:
        wrong += WRONG_BY_FUNCTION[s.name]
    return wrong


def right_values(s: Setting) -> list:
    right = [s.initial()] if s.initial() is not None else []
    right += [b for b in (s.at_least, s.at_most) if b is not None and not (s.positive and b <= 0)]
    return right + list(s.choices)


def test_settings_are_checked_where_a_value_can_be_wrong():
    """Every number has a bound; names and flags are declared once."""
    numbers = [s.name for s in settings.ALL if s.type in (int, float) and not s.checked()]
    assert numbers == []
    assert len({s.name for s in settings.ALL}) == len(settings.ALL)
    for group in (settings.SERVE_FLAGS, settings.LIMITS + (settings.JOBS,)):
        flags = [s.flag for s in group]
        assert len(set(flags)) == len(flags)


@pytest.mark.parametrize("setting", CHECKED, ids=lambda s: s.name)
def test_each_check_refuses_a_wrong_value_in_one_line(setting):
    assert wrong_values(setting), f"{setting.name}: no wrong value to try"
    for value in wrong_values(setting):
        value = [value] if setting.repeat else value
        problem = setting.problem(value)
        one = value[0] if setting.repeat else value
        assert problem is not None, f"{setting.name}: {value!r} was let through"
        assert problem.startswith(f"{setting.label} {shown_value(one)}: ") and "\n" not in problem
        fix = problem.split(": ", 1)[1]
        assert fix.startswith("use ") or "give" in fix, problem  # it says how to fix it


@pytest.mark.parametrize("setting", settings.ALL, ids=lambda s: s.name)
def test_each_default_and_bound_passes_its_own_check(setting):
    for value in right_values(setting):
        assert setting.problem([value] if setting.repeat else value) is None, (setting.name, value)


def test_a_rule_reads_as_advice():
    assert settings.PORT.problem(0) == "--port 0: use 1-65535"
    assert settings.MEMORY_MB.problem(64) == "--memory-mb 64: use at least 128 MB"
    assert settings.TIER.problem("nsjail") == "--tier 'nsjail': use one of bwrap, unshare, rlimit"
    assert settings.RATE.problem(-1.0) == "--rate -1: use a number >= 0 (0 turns the limit off)"


def test_server_config_is_the_declarations():
    fields = dataclasses.fields(ServerConfig)
    assert [f.name for f in fields] == [s.name for s in settings.SERVER]
    for f, s in zip(fields, settings.SERVER):
        assert f.type in ((s.field_type or s.type).__name__, s.field_type or s.type), f.name
        assert f.default == s.field_default and type(f.default) is (s.field_type or s.type), f.name


def test_run_config_is_the_declarations():
    assert QuestionLimits() == QuestionLimits(
        memory_mb=settings.MEMORY_MB.default,
        seconds=None,
        multiple=settings.TIME_MULTIPLE.default,
        floor=settings.TIME_FLOOR.default,
    )
    run = RunConfig()
    assert (run.jobs, run.tier, run.insecure, run.score_advisories) == (
        settings.JOBS.default,
        settings.TIER.default,
        settings.INSECURE.default,
        settings.SCORE_ADVISORIES.default,
    )
    assert (time_limits.MULTIPLE, time_limits.FLOOR_SECONDS) == (
        settings.TIME_MULTIPLE.default,
        settings.TIME_FLOOR.default,
    )
    # declared in core, which may not import the sandbox: held equal here
    assert settings.TIERS == sandbox.TIERS and settings.MEMORY_MB.default == sandbox.Limits.memory_mb


def command_parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"grader {command}")
    cli.COMMANDS[command][0](parser)
    return parser


def flags_of(parser) -> dict:
    return {o: a for a in parser._actions for o in a.option_strings if a.dest != "help"}


@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_declared_flags_are_what_the_parser_has(command):
    parser = command_parser(command)
    flags = flags_of(parser)
    for s in settings.declared(parser):
        action = flags[s.flag]
        assert action.dest == s.dest and action.help.startswith(s.help), s.flag
        if s.type is bool:
            assert isinstance(action, argparse._StoreTrueAction)
        else:
            assert (action.type, action.default, tuple(action.choices or ())) == (s.type, s.initial(), s.choices)


@pytest.mark.parametrize("command", ["serve", "grade", "grade-batch", "regrade", "similarity", "gradebook", "publish"])
def test_every_flag_of_the_settings_commands_is_declared(command):
    """A flag with a default is a setting; only what names the input or output (a required path, the
    assignment, a selection) or says what to do (a switch of the command, not a setting) is by hand."""
    parser = command_parser(command)
    by_hand = {
        "grade": {"--assignment"},
        "grade-batch": {"--out", "--force", "--assignment"},
        "regrade": {"--apply"},
        "similarity": {"--against", "--out", "--decisions", "--assignment"},
        "gradebook": {"--out", "--roster"},
        "publish": {"--assignment", "--dir", "--deadline", "-k", "--tests"},
    }
    declared = {s.flag for s in settings.declared(parser)}
    assert set(flags_of(parser)) - declared == by_hand.get(command, set())


def test_serve_flags_give_server_config_with_units_converted():
    parser = command_parser("serve")
    assert ServerConfig(**settings.field_values(parser.parse_args([]), settings.SERVER)) == ServerConfig()
    args = parser.parse_args(
        [
            "--quota-mb",
            "1.5",
            "--answer-kbps",
            "2",
            "--answer-burst-mb",
            "0.5",
            "--trusted-proxy",
            "10.0.0.1",
            "--trusted-proxy",
            "10.1.0.0/16",
            "--db",
            "sqlite://",
        ]
    )
    config = ServerConfig(**settings.field_values(args, settings.SERVER))
    assert (config.quota_bytes, config.answer_bytes_per_second, config.answer_bytes_burst) == (
        int(1.5 * 2**20),
        2048.0,
        2**19,
    )
    assert (config.trusted_proxies, config.db_url) == ("10.0.0.1,10.1.0.0/16", "sqlite://")


def test_the_environment_gives_the_clients_defaults(monkeypatch):
    monkeypatch.setenv("MUGRADE_SERVER", "http://grading.example.org")
    monkeypatch.delenv("MUGRADE_KEY", raising=False)
    args = command_parser("publish").parse_args([])
    assert (args.server, args.key) == ("http://grading.example.org", None)


CASES = [
    (command, s, value)
    for command in ("serve", "grade", "grade-batch", "regrade", "similarity", "gradebook", "publish")
    for s in settings.declared(command_parser(command))
    if s.checked()
    for value in wrong_values(s)[:1]
]


@pytest.mark.parametrize("command, setting, value", CASES, ids=lambda x: getattr(x, "name", str(x)))
def test_a_bad_flag_is_one_line_and_exit_2(command, setting, value, tmp_path, capsys, monkeypatch):
    module, _, function = cli.COMMANDS[command][1].partition(":")  # never run the command (a server would stay up)
    monkeypatch.setattr(importlib.import_module(module), function, lambda args: 99)
    positional = {
        "serve": [],
        "grade": [str(tmp_path)],
        "grade-batch": [str(tmp_path), "--out", str(tmp_path / "o")],
        "regrade": [str(tmp_path)],
        "similarity": [str(tmp_path), "--out", str(tmp_path / "o")],
        "gradebook": ["--out", str(tmp_path / "o")],
        "publish": [],
    }[command]
    text = str(value) if not isinstance(value, float) else repr(value)
    if setting.choices:  # argparse refuses a choice it does not know, with the usage
        with pytest.raises(SystemExit) as stop:
            cli.main([command, *positional, setting.flag, text])
        assert stop.value.code == 2
        return
    assert cli.main([command, *positional, setting.flag, text]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"grader {command}: {setting.problem([value] if setting.repeat else value)}"]
    assert err[0].startswith(f"grader {command}: {setting.flag} ")
    assert not (tmp_path / "o").exists()


def test_the_reference_page_is_fresh():
    assert page.PAGE.read_text(encoding="utf-8") == page.render(), f"{page.PAGE} is stale: run {page.COMMAND}"
    assert settings_main.main(["--check"]) == 0


def test_a_stale_page_is_found_and_rewritten(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "settings.md"
    stale.write_text(page.render().replace("| `--port` |", "| `--prot` |"))
    monkeypatch.setattr(settings_main, "PAGE", stale)
    assert settings_main.main(["--check"]) == 1 and "run python -m grader.core.settings" in capsys.readouterr().err
    assert settings_main.main([]) == 0 and stale.read_text() == page.render()


def test_the_page_has_a_row_per_setting():
    text = page.render()
    for s in settings.ALL:
        assert f"| `{s.name}` |" in text
    assert "| `quota_bytes` | `--quota-mb` | float | 64 | MB | a number >= 0 (0: no quota) |" in text
