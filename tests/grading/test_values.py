"""The parent reads a worker's out_dir without trusting it: whatever a worker
writes there fails its own case with a reason, never the grading."""

import json

import numpy as np
import pytest

from grader.grading.run import outcomes as values
from grader.grading.run.outcomes import Budget, read_import_error, read_outcome


def _record(out, name, record):
    (out / f"{name}.json").write_text(json.dumps(record) if not isinstance(record, str) else record)


def _array(out, name, array):
    np.save(out / name, array, allow_pickle=False)


def test_a_value_comes_back(tmp_path):
    _array(tmp_path, "forward_x_0.npy", np.arange(3.0))
    _record(tmp_path, "forward_x", {"status": "ok", "value": [{"npy": "forward_x_0.npy"}, 2.5]})
    outcome = read_outcome(Budget(tmp_path), "forward_x")
    assert outcome.ok and outcome.value[0].tolist() == [0, 1, 2] and outcome.value[1] == 2.5


def test_one_array_referenced_thousands_of_times_is_read_once(tmp_path, monkeypatch):
    _array(tmp_path, "forward_x_0.npy", np.zeros(1000))
    _record(tmp_path, "forward_x", {"status": "ok", "value": [{"npy": "forward_x_0.npy"}] * 4000})
    reads = []
    real = values.read_npy_safe
    monkeypatch.setattr(values, "read_npy_safe", lambda *a: reads.append(a) or real(*a))
    outcome = read_outcome(Budget(tmp_path), "forward_x")
    assert outcome.ok and len(outcome.value) == 4000 and len(reads) == 1


def test_total_bytes_per_worker_are_capped(tmp_path):
    for k in range(3):
        _array(tmp_path, f"forward_x_{k}.npy", np.zeros(1 << 17))  # 1 MB each
        _record(tmp_path, f"forward_{k}", {"status": "ok", "value": {"npy": f"forward_x_{k}.npy"}})
    budget = Budget(tmp_path, max_bytes=(1 << 20) * 2 + 4096)
    outcomes = [read_outcome(budget, f"forward_{k}") for k in range(3)]
    assert [o.ok for o in outcomes] == [True, True, False]
    assert "MB in all" in outcomes[2].problem


@pytest.mark.parametrize(
    "record, fragment",
    [
        ('{"status": "ok", "value": ' + "1" * 400 + "}", "unreadable value"),
        ({"status": "ok", "value": 10**30}, "beyond 64 bits"),
        ({"status": "ok", "value": [None]}, "unexpected NoneType"),
        ({"status": "ok", "value": {"npy": "../../etc/passwd"}}, "bad array file name"),
        ({"status": "ok", "value": {"npy": "missing.npy"}}, "cannot open"),
        ({"status": "maybe"}, "not a case record"),
        ("[" * 100 + "]" * 100, "nested"),
        ("not json", "invalid JSON"),
    ],
)
def test_malformed_records_fail_their_case_with_a_reason(tmp_path, record, fragment):
    _record(tmp_path, "forward_x", record)
    outcome = read_outcome(Budget(tmp_path), "forward_x")
    assert not outcome.ok and fragment in outcome.problem


def test_worker_text_is_cleaned(tmp_path):
    _record(tmp_path, "forward_x", {"status": "error", "error": "boom\n\x1b[31m" + "x" * 1000, "where": "a.py:3"})
    outcome = read_outcome(Budget(tmp_path), "forward_x")
    assert not outcome.ok and "\n" not in outcome.problem and "\x1b" not in outcome.problem
    assert len(outcome.problem) < 400 and outcome.problem.endswith("(at a.py:3)")


def test_import_error_is_read_once_per_worker(tmp_path):
    assert read_import_error(Budget(tmp_path)) == ""
    _record(
        tmp_path,
        "import_error",
        {"status": "error", "error": "SyntaxError: invalid syntax", "where": "python/needle/autograd.py:12"},
    )
    message = read_import_error(Budget(tmp_path))
    assert message.startswith("importing the submission failed: SyntaxError")
    assert "python/needle/autograd.py:12" in message
