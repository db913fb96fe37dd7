"""An assignment as data: where its parts live and what its handout ships,
read from its assignment.toml, and passed in (inside RunConfig) instead of
path globals.

`Assignment.hw1()` reads this repository's own assignment.toml;
`Assignment.load(folder)` reads another one, paths relative to its folder:

    name = "toy"
    reference = "reference"           # the solution, with solution markers
    handout = "handout"               # where `grader handout` writes
    data = "data"                     # read-only data/ beside each worker
    cases = "cases"                   # the case registry package
    student_files = ["python/needle/autograd.py"]

    [manifest]
    files = ["python/needle/__init__.py", "tests/toy/test_cases.py"]
    client = "mugrade.py"             # optional: ship the submit client here
    instructor_only = ["data"]
    [manifest.renamed]                # optional: reference path -> handout path
    "handout_files/README.md" = "README.md"

    fetch_data = "reference/tools/fetch.py"  # optional: run as `python SCRIPT DATA` when data/ is empty

    [environment]                     # optional: what student code runs against
    packages = ["numpy==2.0.2"]       # pinned; pip installs them into the sandbox's Python

Without [environment], workers get a copy of the grader's own numpy.

Which assignment a command means (Assignment.option): --assignment FOLDER,
else $GRADER_ASSIGNMENT (a folder; explicit settings win over looking
around, as GIT_DIR does for git), else the nearest assignment.toml in the
current folder or above, else hw1 (the checkout's, or the wheel's copy).

The public cases ship under tests/NAME/NAME_cases (generated, so never
listed); the questions and cases come from the registry package
(grader/core/registry.py).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from grader.core import paths
from grader.core.manifest import Manifest
from grader.core.paths import ROOT
from grader.core.policy import NAME, AssignmentError, Policy, parse_policy  # noqa: F401  (Policy: read from here too)
from grader.core.policy import check_fields as _check_fields

if TYPE_CHECKING:  # the registry imports the cases package and numpy: only when a command reads cases
    from grader.core.registry import Registry

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

FIELDS = (
    "name",
    "reference",
    "handout",
    "data",
    "cases",
    "student_files",
    "manifest",
    "environment",
    "policy",
    "fetch_data",
)
ENV = "GRADER_ASSIGNMENT"  # the assignment folder, when no --assignment is given
FOLDERS = ("reference", "handout", "data", "cases")
MANIFEST_FIELDS = ("files", "renamed", "client", "instructor_only")
ENVIRONMENT_FIELDS = ("packages",)
# A pinned requirement, NAME==VERSION: every machine (cluster workers, a
# rebuilt cache) then grades against the same code.
PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")


def shown(path: Path) -> str:
    """How messages name a file: relative to this repository when inside it."""
    path = Path(path)
    return (path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).as_posix()


@dataclass(frozen=True)
class Assignment:
    name: str
    reference: Path  # the instructor's solution
    handout: Path  # the pristine handout every submission is overlaid on
    data: Path  # mounted read-only as data/ beside the worker
    cases_dir: Path  # the cases package (imports nothing from grader)
    student_files: tuple  # handout-relative paths a submission provides
    manifest: Manifest = Manifest(())
    packages: tuple = ()  # [environment] packages: pip requirements for the sandbox's Python; () = the grader's numpy
    toml: Path = ROOT / "assignment.toml"  # where it was read from, for messages
    policy: Policy = Policy()  # [policy]: which grade counts
    packages_from: str = "assignment.toml"  # who chose `packages`: the declaration, or --packages for one run
    fetch_data: Path | None = None  # a script filling an empty data folder (grader/core/datadir.py)

    @classmethod
    def hw1(cls) -> "Assignment":
        """This project's assignment: the checkout's, or the copy bundled in an installed wheel."""
        return _load(paths.home())

    @property
    def is_hw1(self) -> bool:
        """Whether this is this project's own assignment (the checkout's or the wheel's copy)."""
        return self.toml == paths.home() / "assignment.toml"

    @classmethod
    def load(cls, folder) -> "Assignment":
        return _load(Path(folder).resolve())

    @classmethod
    def option(cls, value=None) -> "Assignment":
        """What --assignment names: a folder holding an assignment.toml, or the
        name of this repository's assignment (hw1). A folder of that name, if
        there is one, wins. Without a value: $GRADER_ASSIGNMENT, else the
        nearest assignment.toml around the current folder, else hw1."""
        if value is None:
            return _discovered()
        if value == cls.hw1().name and not (Path(value) / "assignment.toml").is_file():
            return cls.hw1()
        if not Path(value).is_dir():  # a name, or a typo: a folder without its toml says so in load()
            raise AssignmentError(
                f"--assignment {value}: no such folder; pass the folder holding the "
                f"assignment's assignment.toml, or {cls.hw1().name} for this repository's"
            )
        return cls.load(value)

    @property
    def tests_dir(self) -> str:
        """Where the public tests live, relative to the reference and the handout."""
        return f"tests/{self.name}"

    @property
    def cases_dest(self) -> str:
        """Where the public cases ship, as the package NAME_cases."""
        return _cases_dest(self.name)

    def with_packages(self, text: str | None, option: str = "--packages") -> "Assignment":
        """This assignment with its [environment] packages replaced for one run
        by `text` ("numpy==1.26.4 tqdm==4.66.1", e.g. to grade an earlier
        cohort in its own environment); None or "" keeps the declaration."""
        packages = packages_option(text, option)
        return self if packages is None else dataclasses.replace(self, packages=packages, packages_from=option)

    def registry(self) -> Registry:
        from grader.core.registry import load_registry

        return load_registry(self.cases_dir)


def _cases_dest(name: str) -> str:
    return f"tests/{name}/{name}_cases"


def _discovered() -> Assignment:
    """The assignment a command means when no --assignment is given (see the module's docstring)."""
    folder = os.environ.get(ENV)
    if folder:
        if not (Path(folder) / "assignment.toml").is_file():
            raise AssignmentError(
                f"${ENV}={folder}: no assignment.toml there; point it at an assignment's folder, or unset it"
            )
        return Assignment.load(folder)
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "assignment.toml").is_file():
            return Assignment.load(folder)
    if not (paths.home() / "assignment.toml").is_file():
        raise AssignmentError(
            f"{paths.home() / 'assignment.toml'}: not found (this grader was installed without "
            f"its hw1); pass --assignment FOLDER or set ${ENV}"
        )
    return Assignment.hw1()


def _data_folder(folder: Path, data: Path, name: str) -> Path:
    """The data folder as declared, unless the assignment lives where nothing
    should be written (inside the installed package, or a read-only folder
    without one): then under paths.state(), one per assignment name."""
    if folder == paths.BUNDLED or (not data.exists() and not os.access(folder, os.W_OK)):
        return paths.state() / name / "data"
    return data


@lru_cache(maxsize=None)
def _load(folder: Path) -> Assignment:
    path = folder / "assignment.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AssignmentError(f"{path}: not found; an assignment folder needs an assignment.toml") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise AssignmentError(f"{path}: not valid TOML ({e})") from None
    _check_fields(path, raw, FIELDS, "")
    for name in FIELDS[:5]:
        if not isinstance(raw.get(name), str) or not raw[name]:
            raise AssignmentError(f"{path}: field {name!r}: give a non-empty string")
    if not NAME.match(raw["name"]):
        raise AssignmentError(f"{path}: field 'name': {raw['name']!r} must be lower case letters, digits and _")
    files = _paths(path, raw, "student_files", required=True)
    parts = {n: (folder / raw[n]).resolve() for n in FOLDERS}
    if not (parts["cases"] / "__init__.py").is_file():
        raise AssignmentError(f"{path}: field 'cases': {parts['cases']} is not a package (no __init__.py)")
    manifest = _manifest(path, raw.get("manifest", {}), _cases_dest(raw["name"]))
    packages = _packages(path, raw["environment"]) if "environment" in raw else ()
    policy = parse_policy(raw["policy"], path) if "policy" in raw else Policy()
    fetch = raw.get("fetch_data")
    if fetch is not None and not (isinstance(fetch, str) and fetch and (folder / fetch).resolve().is_file()):
        raise AssignmentError(
            f"{path}: field 'fetch_data': give the path, relative to {folder}, of the script that fills data/"
        )
    return Assignment(
        raw["name"],
        parts["reference"],
        parts["handout"],
        _data_folder(folder, parts["data"], raw["name"]),
        parts["cases"],
        files,
        manifest,
        packages,
        path,
        policy,
        fetch_data=(folder / fetch).resolve() if fetch else None,
    )


def _paths(path, raw, field, required=False, prefix="") -> tuple:
    value = raw.get(field, [] if not required else None)
    if (
        not isinstance(value, list)
        or (required and not value)
        or not all(isinstance(f, str) and f and not f.startswith("/") and ".." not in f.split("/") for f in value)
    ):
        raise AssignmentError(
            f"{path}: field '{prefix}{field}': give a {'non-empty ' * required}list of relative paths"
        )
    return tuple(value)


def _manifest(path, raw, cases_dest) -> Manifest:
    if not isinstance(raw, dict):
        raise AssignmentError(f"{path}: field 'manifest': give a table ([manifest])")
    _check_fields(path, raw, MANIFEST_FIELDS, "manifest.")
    renamed = raw.get("renamed", {})
    if not isinstance(renamed, dict) or not all(isinstance(v, str) and v for v in renamed.values()):
        raise AssignmentError(f"{path}: field 'manifest.renamed': give a table of reference path = handout path")
    client = raw.get("client", "")
    if not isinstance(client, str):
        raise AssignmentError(f"{path}: field 'manifest.client': give the handout path of the submit client")
    return Manifest.of(
        _paths(path, raw, "files", prefix="manifest."),
        renamed,
        client,
        _paths(path, raw, "instructor_only", prefix="manifest."),
        generated=(cases_dest,),
    )


def _packages(path, raw) -> tuple:
    """[environment] packages: pinned requirements, numpy among them (the worker and the cases use it)."""
    if not isinstance(raw, dict):
        raise AssignmentError(f"{path}: field 'environment': give a table ([environment])")
    _check_fields(path, raw, ENVIRONMENT_FIELDS, "environment.")
    packages = raw.get("packages")
    if not isinstance(packages, list) or not packages:
        raise AssignmentError(f"{path}: field 'environment.packages': give a non-empty list such as [\"numpy==2.0.2\"]")
    return _pinned(f"{path}: field 'environment.packages'", packages)


def packages_option(text: str | None, option: str = "--packages") -> tuple | None:
    """What a command's --packages gives ("numpy==1.26.4 tqdm==4.66.1"),
    checked as the [environment] field is; None when it gives nothing."""
    if not text or not text.strip():
        return None
    return _pinned(option, text.split())


def _pinned(where: str, packages: list) -> tuple:
    """Pinned requirements, numpy among them, each package once; `where`
    (a file's field, or a command's option) starts every error."""
    names = []
    for requirement in packages:
        match = PINNED.match(requirement) if isinstance(requirement, str) else None
        if match is None:
            raise AssignmentError(f'{where}: {requirement!r} is not pinned; write NAME==VERSION, e.g. "numpy==2.0.2"')
        names.append(re.sub(r"[-_.]+", "-", match.group(1)).lower())  # PyPI's normalized name
    if "numpy" not in names:
        raise AssignmentError(f"{where}: add numpy (NAME==VERSION): the worker and the cases import it")
    if len(set(names)) < len(names):
        raise AssignmentError(f"{where}: a package is listed twice")
    return tuple(packages)


__all__ = ["Assignment", "AssignmentError"]
