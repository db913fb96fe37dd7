"""Hostile submissions: each attacks one question (`target`) with a snippet
from hostile/*.py, run either once at import or at the start of every case
of that question (hooked on Tensor.__init__, which every case of the
targeted questions calls). The snippet is gated on the worker's argv, so
every other question is graded honestly and must keep full marks: that is
how the tests see that the grader stayed healthy.

REFUSED lists submission folders that must be refused before anything runs
(links to the reference, hard links, FIFOs standing for a student file):
tests/test_grade_cli.py grades each and expects exit status 3 and the reason.

Placeholders in snippets: @TOKEN@ (unique per run: a process carrying it in
its command line must not survive), @ROOT@ (the grader's repository),
@CACHE@ (the folder of cached expected values), @SHIPPED@ (the handout's
public answers, `shipped_answers`), @MODE@ (snippet variant).
"""
import os
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

from grader import REFERENCE

from .build import OPS, Append

HERE = Path(__file__).resolve().parent / "hostile"
F, B, T, C, S, N = ("forward", "backward", "topo_sort", "compute_gradient",
                    "softmax_loss_ndl", "nn_epoch_ndl")

HOOK = '''
def _vt_attack_{name}():
{snippet}


import sys as _vt_sys


def _vt_in_target_case_{name}():
    # In a worker of several questions (QUESTION+QUESTION...), only while a
    # case of the target runs (the worker marks it: CASE.started, case names
    # starting with their question's key); in a worker of one question, always.
    key = (_vt_sys.argv[1:2] or [''])[0].partition('@')[0].split('+')
    if len(key) == 1 or {target!r} is None:
        return True
    import os
    try:
        return any(n.startswith({target!r} + '_') and n.endswith('.started') for n in os.listdir(_vt_sys.argv[2]))
    except (OSError, IndexError):
        return False


if {gate}:
    if {when!r} == "import":
        _vt_attack_{name}()
    else:
        def _vt_hook_{name}(init):
            def hooked(self, *args, **kwargs):
                if _vt_in_target_case_{name}():
                    _vt_attack_{name}()
                init(self, *args, **kwargs)
            return hooked

        Tensor.__init__ = _vt_hook_{name}(Tensor.__init__)
'''


@dataclass(frozen=True)
class Hostile:
    name: str
    attack: str
    snippet: str                 # file name in hostile/
    target: str | None           # the question attacked (None: every question)
    when: str                    # "import" or "case"
    message: str                 # regex every failed case's output must match
    zero: frozenset = None       # questions that must score 0 (default {target})
    lose_cases: str = ""         # else: regex of the case names that must fail (others pass)
    mode: str = ""
    extra_files: tuple = ()      # (handout-relative path, snippet file) shipped beside the three files
    short_limits: bool = True    # the target runs with short limits (test_verdicts.HOSTILE_LIMIT)
    spins: bool = False          # every case of the target burns CPU until stopped: shorter still (SPIN_LIMIT)
    hidden_never: str = ""       # regex no hidden case's output may match

    @property
    def must_zero(self):
        if self.zero is not None:
            return self.zero
        return frozenset({self.target}) if self.target else frozenset()

    def edits(self, substitutions):
        if self.snippet is None:
            return ()
        code = (HERE / self.snippet).read_text()
        for key, value in {**substitutions, "@MODE@": self.mode}.items():
            code = code.replace(key, value)
        # The worker's argv[1]: QUESTION, QUESTION+QUESTION (a shared worker, the reference's runs) or
        # QUESTION@case,... (the rest of a question run again after a case hung): the attack fires in every run of
        # its question; one at import hits every question of a shared worker, one in a case only the target's.
        gate = (
            "True"
            if self.target is None
            else f"{self.target!r} in (_vt_sys.argv[1:2] or [''])[0].partition('@')[0].split('+')"
        )
        hook = HOOK.format(
            name=self.name, snippet=textwrap.indent(code, "    "), gate=gate, when=self.when, target=self.target
        )
        return (Append(OPS, hook),)

    def files(self, substitutions):
        return {rel: (HERE / name).read_text() for rel, name in self.extra_files}


def hostile(name, attack, snippet, target, when, message, **options):
    return Hostile(name, attack, snippet, target, when, message, **options)


WORKER_DIED = r"no value: the \w+ worker|no value"
SHIPPED = tuple((rel, "shipped_numpy.py") for rel in (
    "numpy.py", "sitecustomize.py", "usercustomize.py", "conftest.py", "python/numpy.py",
    "apps/numpy.py", "apps/sitecustomize.py", "python/needle/numpy.py", "python/needle/__init__.py",
    "python/needle/ops/__init__.py", "python/needle/backend_numpy.py", "tests/hw1/conftest.py"))

HOSTILE = [
    hostile("infinite_loop", "while True: pass in every case", "infinite_loop.py", T, "case",
            r"timeout after|CPU time limit", spins=True),
    hostile("sleep", "time.sleep(3600) in every case", "sleep.py", C, "case", r"timeout after"),
    hostile("memory_hog", "grows a list of 16 MB blocks until memory runs out", "memory_hog.py", F, "case",
            r"MemoryError|memory limit|timeout after"),
    hostile("fork_bomb", "forks in a loop in every process", "fork_bomb.py", N, "case",
            r"timeout after|CPU time limit|killed", spins=True),
    hostile("sys_exit_at_import", "sys.exit(0) when the library is imported", "sys_exit.py", S, "import",
            r"importing the submission failed: SystemExit"),
    hostile("sys_exit_in_case", "sys.exit(0) inside a case", "sys_exit.py", F, "case", r"SystemExit"),
    hostile("os_exit_at_import", "os._exit(0) when the library is imported", "os_exit.py", N, "import",
            WORKER_DIED),
    hostile("os_exit_in_case", "os._exit(0) inside a case", "os_exit.py", B, "case", WORKER_DIED),
    hostile("atexit_forgery", "an atexit handler that would forge passing records", "atexit_forge.py", S,
            "import", r"importing the submission failed: RuntimeError"),
    hostile("segfault", "ctypes.string_at(0)", "segfault.py", C, "case", r"segmentation fault"),
    hostile("huge_stdout", "200 MB on stdout and stderr", "huge_stdout.py", T, "case", r"printed 200 MB"),
    hostile("huge_file", "a 2 GB file in the output directory", "huge_file.py", F, "case",
            r"file size limit|output directory over its limit|File too large"),
    hostile("deep_recursion", "unbounded recursion with the recursion limit lifted", "deep_recursion.py", B,
            "case", r"segmentation fault|RecursionError|MemoryError|memory limit|timeout|CPU time"),
    hostile("read_answers", "reads the reference and the cached expected values", "read_answers.py", T, "case",
            r"neither the reference nor the cached answers are readable"),
    hostile("write_outside", "writes into the grader's code, the answer cache, shared temp folders, its parent",
            "write_outside.py", F, "case", r"nothing outside the output folder is writable"),
    hostile("read_other_submissions", "reads other runs' stages and copies under /tmp", "read_other_submissions.py",
            B, "case", r"no other run's files are readable"),
    hostile("spin_neighbours", "24 setsid() busy loops to starve the questions graded beside it",
            "spin_neighbours.py", T, "import", r"is spinning 24 loops|importing the submission failed"),
    hostile("socket", "connects to the internet and to localhost", "socket_connect.py", C, "case",
            r"OSError|Error"),
    hostile("spawn_subprocess", "starts a sleeping python child in every case", "spawn_child.py", N, "case",
            r"spawned a sleeper"),
    hostile("setsid_daemon", "a double-forked setsid() daemon that outlives the worker", "setsid_daemon.py", T,
            "case", r"left a daemon behind"),
    hostile("kill_parent", "SIGKILL to the parent, to pid 1, to -1 and to its own group", "kill_parent.py", C,
            "case", WORKER_DIED + r"|killed by signal"),
    hostile("monkeypatch_worker", "patches numpy's comparisons and the worker's writer to claim passes",
            "monkeypatch_worker.py", S, "import", r"expected|wrong values|wrong shape"),
    hostile("forged_records", "symlinks to the cached answers as values, fake results.json, then os._exit",
            "forge_records.py", C, "import", r"unreadable value: .*symlink is refused|no value"),
    hostile("always_equal_values", "Tensor.numpy() returns a float whose __eq__ is always True",
            "always_equal.py", F, "import", r"is not a number, array, list or dict", mode="eq"),
    hostile("lying_ndarray", "Tensor.numpy() returns an ndarray subclass lying to ==, allclose, array_equal",
            "always_equal.py", B, "import", r"wrong values", mode="liar"),
    hostile("finite_differences", "Log/Exp/PowerScalar gradients by central differences in numpy",
            "finite_differences.py", None, "import", r"wrong values", zero=frozenset(),
            # EWisePow's gradient goes through Log's
            # (first order included: a constant to autodiff, grading/derived.py; EWisePow's through Log's
            # gradient is not: its second order is wrong, not zero)
            lose_cases=r"^backward_((second_order_)?(power_scalar|power_scalar_fraction|log|exp)|second_order_ewise_pow)$",
            short_limits=False),
    hostile("shipped_files", "numpy.py, sitecustomize.py, conftest.py, needle/__init__.py ... that os._exit(0)",
            None, None, "import", r"", zero=frozenset(), extra_files=SHIPPED, short_limits=False),
    hostile("replay_shipped_answers", "writes the handout's shipped answers as its values, then exits",
            "replay_shipped.py", None, "import", r"wrong values|wrong shape|not the post-order|no value|"
            r"weights differ|test error|topological order|expected", zero=frozenset({F, B, T, C, S, N}), short_limits=False),
    # No secret reaches a worker: nothing that looks like a seed in its argv or
    # environment, in /proc, or in the files it can read (the message shows it).
    hostile("seed_in_env_argv", "looks for the grading seed in its argv and environment variables",
            "find_secrets.py", F, "case", r"secrets found: \[\]", mode="env"),
    hostile("seed_in_proc", "looks for the grading seed in every /proc/*/cmdline and environ it can read",
            "find_secrets.py", T, "case", r"secrets found: \[\]", mode="proc"),
    hostile("seed_in_files", "looks for the grading seed in the files beside the worker and in its folder",
            "find_secrets.py", C, "case", r"secrets found: \[\]", mode="files"),
    # A hidden case says only what the grader chose: no class name or stub name the student picked.
    hostile("exception_class_name", "raises an exception whose class name carries the case's input",
            "exception_names.py", B, "case", r"LEAK_|an exception", mode="class", hidden_never=r"LEAK"),
    hostile("stub_shaped_message", "raises NotImplementedError('Q2: <the case's input>'), shaped like a stub",
            "exception_names.py", S, "case", r"LEAK_", mode="stub", hidden_never=r"LEAK", zero=frozenset(),
            lose_cases=r"^softmax_loss_ndl_(?!parse_mnist)"),  # parse_mnist makes no Tensor: no hook
    # Gradients must be derived with needle ops: a first-order case earns points only with its op's
    # second-order case (grading/derived.py).
    hostile("complex_step_gradients", "every gradient() one generic complex-step derivative of the op's forward",
            "complex_step.py", B, "import", r"a constant to autodiff|wrong values|Error",
            zero=frozenset({B})),
    hostile("forged_gradient_cases", "patches the case code: central differences of the forward reported as "
            "each first-order gradient", "forge_gradient_cases.py", B, "import", r"wrong values",
            zero=frozenset(), lose_cases=r"^backward_(?!second_order)", short_limits=False),
]


def shipped_answers(handout: Path) -> str:
    """The @SHIPPED@ placeholder: the handout's public answers, as a Python
    literal mapping file name to base64 (what a student can copy)."""
    import base64
    folder = handout / "tests" / "hw1" / "hw1_cases" / "expected"
    return repr({p.name: base64.b64encode(p.read_bytes()).decode() for p in sorted(folder.iterdir())})


def bundles(entries, size=4):
    """Group entries gated on distinct questions, at most `size` per group,
    so one submission carries several independent attacks (each runs only
    in its own question's worker) and at least 6 - size questions of every
    submission are graded honestly. Ungated entries stay alone."""
    groups = []
    for entry in entries:
        fits = [g for g in groups if entry.target and len(g) < size
                and all(e.target and e.target != entry.target for e in g)]
        if fits:
            min(fits, key=len).append(entry)
        else:
            groups.append([entry])
    return groups


# ---------------------------------------------------------------- refused before anything runs

def _linked_folders(sub: Path) -> None:
    (sub / "python").symlink_to(REFERENCE / "python")
    (sub / "apps").symlink_to(REFERENCE / "apps")


def _copy_two(sub: Path) -> None:
    for rel in ("python/needle/autograd.py", "python/needle/ops/ops_mathematic.py"):
        (sub / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REFERENCE / rel, sub / rel)
    (sub / "apps").mkdir()


def _linked_file(sub: Path) -> None:
    _copy_two(sub)
    (sub / "apps" / "simple_ml.py").symlink_to(REFERENCE / "apps" / "simple_ml.py")


def _nested_link(sub: Path) -> None:
    (sub / "hw1" / "python" / "needle").mkdir(parents=True)
    (sub / "hw1" / "python" / "needle" / "ops").symlink_to(REFERENCE / "python" / "needle" / "ops")


def _hard_link(sub: Path) -> None:
    _copy_two(sub)
    twin = sub.parent / f"{sub.name}-twin.py"  # a twin of a copy: the reference itself keeps one name
    shutil.copyfile(REFERENCE / "apps" / "simple_ml.py", twin)
    os.link(twin, sub / "apps" / "simple_ml.py")


def _fifo(sub: Path) -> None:
    _copy_two(sub)
    os.mkfifo(sub / "apps" / "simple_ml.py")


@dataclass(frozen=True)
class Refused:
    """A submission folder `grader grade` must refuse (exit 3) with `words`."""
    name: str
    attack: str
    build: object      # build(folder): fills an empty folder
    words: str


REFUSED = [
    Refused("linked_folders", "python/ and apps/ are symlinks to the grader's reference", _linked_folders,
            "python: a symbolic link in the submission; refused"),
    Refused("linked_file", "apps/simple_ml.py is a symlink to the reference's", _linked_file,
            "apps/simple_ml.py: a symbolic link in the submission; refused"),
    Refused("nested_link", "a nested handout folder whose ops/ is a symlink", _nested_link,
            "hw1/python/needle/ops: a symbolic link in the submission; refused"),
    Refused("hard_link", "apps/simple_ml.py is a hard link (of a copy of the reference)", _hard_link,
            "apps/simple_ml.py: a hard link (2 names for one file); refused"),
    Refused("fifo", "apps/simple_ml.py is a FIFO that would block a reader", _fifo,
            "apps/simple_ml.py: not a regular file or folder; refused"),
]
