# Generated from grader/shipped/mugrade.py by `make handout`; do not edit.
"""mugrade-compatible submission client (stdlib, numpy, requests and pytest only).

Test files `import mugrade` and define `submit_<problem>()` functions that call
`mugrade.submit(value)` once per test case. Then

    python -m mugrade submit KEY -k forward [--assignment hw1] [--server URL]
    python -m mugrade publish KEY -k forward        (instructors)

runs pytest on the test files (default tests/hw1) collecting only the
`submit_*` functions selected by -k. `submit` starts one submission per
function (POST /submit, problem = the name without `submit_`) and sends each
value (POST /submit_test); `publish` sends each function's values as the
answers (POST /publish). The server comes from --server, else $MUGRADE_SERVER.
Unlike the original client this one verifies TLS, uses timeouts, retries with
backoff, and sends the key in an Authorization header, never in the URL.
When the server says a problem's answers are late (after that problem's own
deadline), it says so: "late: after the deadline of forward (... UTC)". An
error that ends the run (a bad key, no server) is one plain line on stderr.

Copied as it is into the handout: it imports nothing from the grader.
"""

import argparse
import datetime
import json
import os
import random
import sys
import time

import numpy as np
import pytest
import requests

TIMEOUT = (10, 120)  # seconds: connect, read (a publish of large arrays takes a while)
ATTEMPTS = 5
BACKOFF = 0.5  # seconds before the first retry, doubling after each
MAX_RETRY_WAIT = 30.0
_run = None  # the active Run while `python -m mugrade ...` executes the test functions


class RefusedByServer(Exception):
    """The server answered with an error status; `text` is its one-line reason."""

    def __init__(self, status, text):
        super().__init__(f"{status}: {text}")
        self.status, self.text = status, text


class Unreachable(Exception):
    """No answer from the server after all retries."""


def encode(value):
    """The mugrade JSON encoding: arrays and special types tagged with `_encoded_type`."""
    if hasattr(value, "numpy") and callable(value.numpy) and not isinstance(value, np.ndarray):
        value = value.numpy()  # a needle Tensor
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"mugrade.submit: cannot send an array of {value.dtype}; submit numbers")
        return {"_encoded_type": "np.ndarray", "data": value.tolist()}
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()
    if isinstance(value, (datetime.datetime, datetime.date)):
        return {"_encoded_type": "datetime", "data": value.isoformat()}
    if isinstance(value, (type, np.dtype)):
        return {"_encoded_type": "type", "data": repr(value)}
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(
        f"mugrade.submit: cannot send a {type(value).__name__}; submit numbers, numpy arrays, lists or dicts of them"
    )


def submit(value):
    """Send one test case value (called by the submit_* functions of the test files)."""
    if _run is None:
        raise RuntimeError("mugrade.submit() runs only under `python -m mugrade submit|publish`")
    _run.case(encode(value))


class Client:
    """POSTs to the grading server with timeouts and retries; returns the JSON answer."""

    def __init__(self, server, key):
        self.server = server if server.endswith("/") else server + "/"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {key}"

    def post(self, path, params, body=None):
        data = None if body is None else json.dumps(body)
        for attempt in range(1, ATTEMPTS + 1):
            try:
                r = self.session.post(
                    self.server + path,
                    params=params,
                    data=data,
                    timeout=TIMEOUT,
                    headers={"Content-Type": "application/json"},
                )
            except requests.exceptions.SSLError as e:
                raise Unreachable(f"TLS certificate check failed for {self.server} ({e.__class__.__name__})")
            except requests.RequestException as e:
                problem, wait = f"no answer from {self.server} ({e.__class__.__name__})", None
            else:
                if r.status_code == 200:
                    return _json(r, self.server)
                text = r.text.strip().splitlines()[0] if r.text.strip() else r.reason
                if r.status_code != 429 and r.status_code < 500:
                    raise RefusedByServer(r.status_code, text)
                problem, wait = f"server answered {r.status_code}: {text}", _retry_after(r)
            if attempt < ATTEMPTS:
                time.sleep(wait if wait is not None else BACKOFF * 2 ** (attempt - 1) * random.uniform(0.8, 1.2))
        raise Unreachable(problem)


def _json(response, server):
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise Unreachable(f"{server} answered something that is not a grading server's JSON; check the URL")
    return answer


def _retry_after(response):
    try:
        return min(MAX_RETRY_WAIT, float(response.headers.get("Retry-After", "")))
    except ValueError:
        return None


class Problem:
    """What happened to one submit_* function: cases sent, verdicts, errors."""

    def __init__(self, name):
        self.name, self.values, self.verdicts = name, [], []
        self.submission_id = self.num_cases = self.error = self.late = None


class Run:
    """One `submit` or `publish` run: the pytest plugin and the per-problem bookkeeping."""

    def __init__(self, mode, client, assignment, options=None):
        self.mode, self.client, self.assignment = mode, client, assignment
        self.options = options or {}
        self.problems, self.current = [], None
        self.fatal = None  # the one line that ended the run early (bad key, no server)

    # pytest hooks ---------------------------------------------------------
    def pytest_configure(self, config):
        global _terminal  # pytest's own writer keeps our lines apart from its progress dots
        _terminal = config.pluginmanager.get_plugin("terminalreporter")

    def pytest_report_teststatus(self, report):
        if report.when == "call" and report.passed:
            return "passed", "", "PASSED"  # no progress dot: our per-case lines say more
        return None

    def pytest_collection_modifyitems(self, items):
        items[:] = [i for i in items if getattr(i, "originalname", i.name).startswith("submit_")]

    def pytest_runtest_protocol(self, item, nextitem):
        # After a fatal error the remaining functions are not run at all: returning
        # True tells pytest this item is handled. (pytest.exit would print its own
        # "_pytest.outcomes.Exit" banner around our line.)
        return True if self.fatal else None

    def pytest_runtest_setup(self, item):
        self.current = Problem(getattr(item, "originalname", item.name)[len("submit_") :])
        self.problems.append(self.current)
        if self.mode == "submit":
            answer = self._call("submit", {"assignment": self.assignment, "problem": self.current.name})
            if answer:
                self.current.submission_id = answer["submission_id"]
                self.current.num_cases = answer.get("num_cases")
                _say(f"{self.current.name}: submission {self.current.submission_id}")
                self._late(answer)

    def pytest_runtest_makereport(self, item, call):
        if call.when == "call" and call.excinfo is not None and self.current.error is None:
            self.current.error = "your code raised an error (see the pytest report)"
        if call.when == "call" and self.mode == "publish" and self.current.error is None:
            self._publish(self.current)

    # cases -----------------------------------------------------------------
    def case(self, encoded):
        p = self.current
        if p is None or p.error is not None or self.fatal:
            return
        if self.mode == "publish":
            p.values.append(encoded)
            return
        index = len(p.verdicts)
        answer = self._call(
            "submit_test", {"submission_id": p.submission_id, "test_case_index": index}, encoded, case_only=True
        )
        p.verdicts.append(bool(answer and answer.get("correct")))
        if answer is not None:
            reason = f" ({answer['reason']})" if answer.get("reason") else ""
            _say(f"  case {index}: {'correct' if p.verdicts[-1] else 'WRONG' + reason}")
            self._late(answer)

    def _late(self, answer):
        """Say once per problem that the server counts its answers late (an answer
        from /submit or /submit_test with "late": true and the problem's deadline)."""
        p = self.current
        if answer.get("late") is True and p.late is None:
            p.late = f"late: after the deadline of {p.name} ({_utc(answer.get('deadline'))})"
            _say(p.late)

    def _publish(self, p):
        if not p.values:
            p.error = "the function submitted no values"
            return
        params = {
            "assignment": self.assignment,
            "problem": p.name,
            **self.options.get("*", {}),
            **self.options.get(p.name, {}),
        }
        answer = self._call("publish", params, p.values)
        if answer:
            _say(f"{p.name}: published {answer['num_cases']} cases")

    def _call(self, path, params, body=None, case_only=False):
        """POST. A refusal of one case (a value the server cannot read) fails that case;
        of a problem, that problem; a bad key or no server ends the run, without a traceback."""
        try:
            return self.client.post(path, params, body)
        except RefusedByServer as e:
            if e.status in (401, 403):
                self.current.error = f"not sent: {e.text}"
                self.fatal = f"mugrade: {e.text}"
                return None
            if case_only and e.status in (400, 409):
                _say(f"  case {params['test_case_index']}: REFUSED ({e.status}: {e.text})")
                return None
            self.current.error = f"server refused {path} ({e.status}): {e.text}"
            _say(f"{self.current.name}: {self.current.error}")
        except Unreachable as e:
            self.current.error = "not sent: no answer from the server"
            self.fatal = f"mugrade: {e}; check --server / MUGRADE_SERVER and your network"
        return None

    def summary(self):
        lines = ["", f"mugrade {self.mode} summary ({self.assignment}):"]
        for p in self.problems:
            if self.mode == "publish":
                status = p.error or f"{len(p.values)} cases published"
            else:
                total = p.num_cases if p.num_cases is not None else len(p.verdicts)
                status = f"{sum(p.verdicts)}/{total} cases correct" if total else ""
                status = "; ".join(filter(None, [status, p.error, p.late]))
            lines.append(f"  {p.name:<20} {status}")
        return "\n".join(lines)


_terminal = None


def _utc(text):
    """The server's ISO 8601 deadline as '2026-02-01 23:59 UTC' (as sent if it does not read)."""
    try:
        when = datetime.datetime.fromisoformat(str(text))
    except ValueError:
        return str(text)[:40]
    if when.tzinfo is not None:
        when = when.astimezone(datetime.timezone.utc)
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _say(text):
    if _terminal is not None:
        _terminal.write_line(text)
    else:
        print(text, flush=True)


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python -m mugrade", description="send submit_* cases to a grading server")
    parser.add_argument("mode", choices=["submit", "publish"])
    parser.add_argument(
        "key", nargs="?", default=os.environ.get("MUGRADE_KEY"), help="your key (default: $MUGRADE_KEY)"
    )
    parser.add_argument("-k", dest="select", default=None, help="pytest -k expression, e.g. forward")
    parser.add_argument("--assignment", default="hw1")
    parser.add_argument(
        "--server", default=os.environ.get("MUGRADE_SERVER"), help="grading server URL (default: $MUGRADE_SERVER)"
    )
    parser.add_argument("--tests", default="tests/hw1", help="test files or folder (default tests/hw1)")
    parser.add_argument("--points", default="", help="publish: problem=points,... weights in the total")
    parser.add_argument("--rtol", help="publish: relative tolerance of these problems")
    parser.add_argument("--atol", help="publish: absolute tolerance of these problems")
    parser.add_argument("--deadline", help="publish: ISO 8601 deadline of each problem published (-k picks them)")
    args = parser.parse_args(argv)
    if not args.key:
        parser.error("give your key: python -m mugrade submit KEY -k PROBLEM (or set MUGRADE_KEY)")
    if not args.server:
        parser.error("give the server: --server URL (or set MUGRADE_SERVER)")
    if not args.server.startswith(("http://", "https://")):
        parser.error(f"--server {args.server!r}: use a URL starting with https:// or http://")
    return args


def _publish_options(args):
    """Query parameters of /publish: under "*" for every problem, else per problem."""
    options = {"*": {k: v for k, v in (("rtol", args.rtol), ("atol", args.atol), ("deadline", args.deadline)) if v}}
    for item in filter(None, args.points.split(",")):
        name, _, points = item.partition("=")
        options[name.strip()] = {"weight": points.strip()}
    return options


def main(argv=None):
    # Test files `import mugrade`: make that the module running now, not a second copy.
    sys.modules.setdefault("mugrade", sys.modules[__name__])
    args = _parse(argv)
    run = Run(
        args.mode,
        Client(args.server, args.key),
        args.assignment,
        _publish_options(args) if args.mode == "publish" else None,
    )
    sys.modules["mugrade"]._run = run
    _say(f"mugrade: {args.mode} {args.assignment} to {run.client.server}")
    pytest_args = [args.tests, "-q", "-s", "-p", "no:cacheprovider", "-o", "python_functions=submit_*"]
    pytest_args += ["-k", args.select] if args.select else []
    code = pytest.main(pytest_args, plugins=[run])
    sys.modules["mugrade"]._run = None
    global _terminal
    _terminal = None
    if run.fatal:
        print(run.fatal, file=sys.stderr)
        return 1
    if not run.problems:
        print(f"mugrade: no submit_* function in {args.tests} matches -k {args.select!r}", file=sys.stderr)
        return 2 if code in (0, 5) else 1
    _say(run.summary())
    # 0: every selected function ran and its values were sent, whatever the verdicts.
    return 0 if code == 0 and not any(p.error for p in run.problems) else 1


if __name__ == "__main__":
    sys.exit(main())
