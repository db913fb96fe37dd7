"""One setting's declaration (`Setting`) and what is made from it: its
command-line flag (`add_argument`), its check (`Setting.problem`, one line
naming the flag, the value and how to fix it), and the value it gives the
field it fills (`Setting.to_field`, the unit converted). Standard library only."""

import argparse
import os
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

# Where add_argument notes, on each parser, the settings it declared (first_problem checks them).
_ON_PARSER = "declared_settings"


@dataclass(frozen=True)
class Setting:
    name: str  # the field it fills (ServerConfig's, RunConfig's) or the option's name
    type: type  # of the value as typed: int, float, str, bool (a switch: on or off)
    default: object  # in `unit`; a callable is asked when the parser is built (`shown` says what)
    help: str  # what it does, as --help and the reference page say it
    unit: str = ""  # of the value as typed: s, MB, bytes, KB/s, ...
    flag: str | None = None  # on the command line, e.g. "--quota-mb"; None: not an option
    env: str | None = None  # an environment variable giving the default, if any
    scale: float = 1  # the field's value is the typed value times this (MB -> bytes: 2**20)
    field_type: type | None = None  # the field's type when it is not `type` (int bytes from float MB)
    at_least: float | None = None  # the checks, on the value as typed
    at_most: float | None = None
    positive: bool = False
    choices: tuple = ()
    valid: Callable | None = None  # value -> what is wrong with it (a phrase with the fix), or None
    advice: str = ""  # words after the rule, e.g. "(0 turns the limit off)"
    shown: str = ""  # the default in words, when it is not a plain value (None, computed)
    repeat: bool = False  # the flag may be given again; the field holds the values comma-separated
    metavar: str | None = None

    @property
    def dest(self) -> str:
        """The attribute argparse gives the parsed value (--max-body: max_body)."""
        return self.flag.lstrip("-").replace("-", "_") if self.flag else self.name

    @property
    def label(self) -> str:
        return self.flag or self.name

    def rule(self) -> str:
        """What a good value is, as advice ("use 1-65535"); "" when any value of the type is good."""
        lo, hi = self.at_least, self.at_most
        if self.choices:
            text = "use one of " + ", ".join(map(str, self.choices))
        elif self.positive and hi is not None:
            text = f"use a number above 0 and at most {number(hi)}"
        elif lo is not None and hi is not None:
            text = f"use {number(lo)}-{number(hi)}"
        elif self.positive:
            text = "use a positive number"
        elif lo == 0:
            text = "use a number >= 0"
        elif lo is not None:
            text = f"use at least {number(lo)}" + (f" {self.unit}" if self.unit else "")
        elif hi is not None:
            text = f"use at most {number(hi)}" + (f" {self.unit}" if self.unit else "")
        else:
            return ""
        return f"{text} {self.advice}" if self.advice else text

    def default_words(self) -> str:
        """The default as --help says it ("" for a switch or no default): `shown`, else the value."""
        if self.shown or self.type is bool:
            return self.shown
        value = self.initial()
        if value is None:
            return ""
        return number(value) if self.type in (int, float) else str(value)

    def checked(self) -> bool:
        return bool(self.rule() or self.valid)

    def problem(self, value) -> str | None:
        """One line saying what is wrong with `value` (as typed) and how to fix it, or None."""
        if value is None:
            return None
        for one in value if self.repeat else [value]:
            wrong = self._wrong(one)
            if wrong:
                return f"{self.label} {shown_value(one)}: {wrong}"
        return None

    def _wrong(self, value) -> str | None:
        if self.choices:
            return None if value in self.choices else self.rule()
        if self.type in (int, float) and not isinstance(value, bool):
            lo, hi = self.at_least, self.at_most
            # written `not value >= lo`: NaN fails every bound
            if (
                (lo is not None and not value >= lo)
                or (hi is not None and not value <= hi)
                or (self.positive and not value > 0)
            ):
                return self.rule()
        return self.valid(value) if self.valid else None

    def initial(self):
        """The default as typed, when the parser is built: the environment's, else the declared one."""
        if self.env and os.environ.get(self.env) is not None:
            return os.environ[self.env]
        value = self.default() if callable(self.default) else self.default
        return self.type(value) if self.type in (int, float) and value is not None else value

    def to_field(self, value):
        """The field's value for `value` as typed (its unit converted)."""
        if self.repeat:
            return ",".join(value or ())
        if value is None or self.type not in (int, float):
            return value
        return (self.field_type or self.type)(value * self.scale)

    @property
    def field_default(self):
        return self.to_field(self.default() if callable(self.default) else self.default)


def number(x) -> str:
    """1024 for 1024 and 1024.0, 0.5 for 0.5 (never 1e+06)."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def shown_value(value) -> str:
    if isinstance(value, str):
        return repr(value[:60])
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def add_argument(parser: argparse.ArgumentParser, setting: Setting):
    """Declare `setting`'s flag on `parser`: its type, default (the environment's
    if set), choices and help; first_problem(args, declared(parser)) checks it."""
    if setting.flag is None:
        raise ValueError(f"{setting.name} has no flag; declare one (flag=...) to put it on the command line")
    text = setting.help + (f" (default: {setting.default_words()})" if setting.default_words() else "")
    if setting.type is bool:
        parser.add_argument(setting.flag, action="store_true", help=text)
    else:
        options = dict(type=setting.type, default=setting.initial(), help=text)
        if setting.metavar:
            options["metavar"] = setting.metavar
        if setting.choices:
            options["choices"] = setting.choices
        if setting.repeat:
            options["action"] = "append"
        parser.add_argument(setting.flag, **options)
    parser.__dict__.setdefault(_ON_PARSER, []).append(setting)


def declared(parser: argparse.ArgumentParser) -> list:
    """The settings add_argument put on `parser`, in order."""
    return list(getattr(parser, _ON_PARSER, ()))


def first_problem(args, settings) -> str | None:
    """The first declared setting whose parsed value fails its check, as one line, else None."""
    for setting in settings:
        if setting.flag and hasattr(args, setting.dest):
            problem = setting.problem(getattr(args, setting.dest))
            if problem:
                return problem
    return None


def field_values(args, settings) -> dict:
    """field name -> value for each declared setting the parsed `args` has (units converted)."""
    return {s.name: s.to_field(getattr(args, s.dest)) for s in settings if s.flag and hasattr(args, s.dest)}


def defaults(settings) -> SimpleNamespace:
    """The fields' defaults, by name: defaults(SERVER).max_body_bytes."""
    return SimpleNamespace(**{s.name: s.field_default for s in settings})
