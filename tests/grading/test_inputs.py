"""The scored inputs are drawn on the trusted side and handed to workers as
arrays: no process that runs student code gets the seed (argv, environment,
a file it can read); keys per course or per submission; the arrays replay
exactly the calls the cases make (a worker looks each up by its call)."""

import numpy as np
import pytest

from grader.grading.report.orchestrate import grade_submission
from grader.grading.run import expected, inputs, seeds, workers
from grader.grading.run.config import RunConfig
from grader.shipped.cases import util

SEED = "5eed0003aaaabbbbccccdddd00000003"
DIGEST_A, DIGEST_B = "a" * 64, "b" * 64
N1, N2 = 90001, 90002  # input numbers no case uses


def test_keys_differ_per_seed_and_submission_and_name_nothing_secret():
    course = inputs.key(SEED, inputs.COURSE)
    a, b = inputs.key(SEED, inputs.SUBMISSION, DIGEST_A), inputs.key(SEED, inputs.SUBMISSION, DIGEST_B)
    assert len({course, a, b, inputs.key("0" * 32, inputs.SUBMISSION, DIGEST_A)}) == 4
    assert inputs.key(SEED, inputs.SUBMISSION, DIGEST_A) == a  # a regrade of the same files: the same inputs
    said = inputs.derivation(seeds.seed_id(SEED), inputs.SUBMISSION, DIGEST_A) + inputs.key_id(a)
    assert SEED not in said and a.hex() not in said and "HMAC-SHA256" in said


def _requests():
    """What a case asking for randn(2, 3) then randint(0, 5, size=4) on
    number N1, and uniform on N2, records (util.Stream)."""
    first, second = util.rng(N1), util.rng(N2)
    a, b = first.randn(2, 3), first.randint(0, 5, size=4)
    c = second.uniform(0.5, 2.0, size=(3,))
    mine = [r for r in util.draw_requests() if r[0] in (N1, N2)]
    return mine, (a, b, c)


def test_drawn_arrays_replay_each_recorded_call_under_the_key():
    requests, public = _requests()
    assert [n for n, _ in requests] == [N1, N2] and len(requests[0][1]) == 2
    drawn = inputs.draw(inputs.key(SEED, inputs.COURSE), requests)
    other = inputs.draw(inputs.key(SEED, inputs.SUBMISSION, DIGEST_A), requests)
    names = [util.call_key(n, calls[: k + 1]) for n, calls in requests for k in range(len(calls))]
    assert sorted(drawn) == sorted(names) == sorted(other)
    shapes = [drawn[name].shape for name in names]
    assert shapes == [p.shape for p in public]
    for name, p in zip(names, public):
        assert not np.array_equal(drawn[name], p) and not np.array_equal(drawn[name], other[name])
    assert np.all(drawn[names[1]] >= 0) and np.all(drawn[names[1]] < 5)  # randint's range, replayed
    assert np.all((drawn[names[2]] >= 0.5) & (drawn[names[2]] < 2.0))


def test_a_worker_gets_the_handed_arrays_and_the_public_ones_for_calls_not_drawn(monkeypatch):
    requests, public = _requests()
    drawn = inputs.draw(inputs.key(SEED, inputs.COURSE), requests)
    monkeypatch.setattr(util, "HANDED", drawn)
    assert np.array_equal(util.rng(N1).randn(2, 3), drawn[util.call_key(N1, requests[0][1][:1])])
    first = drawn[util.call_key(N1, requests[0][1][:1])]
    # Another shape of the same size: the same numbers, as numpy's stream gives them (a wrongly shaped
    # gradient still gets the reference's out_grad); another size: never drawn, the public stream's.
    assert np.array_equal(util.rng(N1).randn(3, 2), first.reshape(3, 2))
    assert np.array_equal(util.rng(N1).randn(4, 4), np.random.RandomState(N1).randn(4, 4))
    handed = util.rng(N1).randn(2, 3)
    handed[0, 0] = 1e9  # a case may change its copy; the next call gets the grader's array again
    assert util.rng(N1).randn(2, 3)[0, 0] != 1e9


def test_public_streams_are_numpys_however_they_interleave():
    """Every stream draws from one shared generator (util._Public): each still
    gives what its own RandomState would, call after call, while other streams
    (alive or dropped) draw in between; randn's cached second normal included."""
    calls = [
        ("randn", (3,), {}),
        ("randn", (), {}),
        ("uniform", (0.5, 2.0), {"size": (2, 3)}),
        ("randint", (0, 5), {"size": 4}),
        ("permutation", (6,), {}),
        ("choice", (5,), {"size": 3}),
        ("randn", (5,), {}),
    ]
    ours = [util.rng(N1), util.rng(N2), util.rng(N1)]
    theirs = [np.random.RandomState(N1), np.random.RandomState(N2), np.random.RandomState(N1)]
    for method, args, kwargs in calls:
        for stream, numpy_own in zip(ours, theirs):
            util.rng(N2).randn(2)  # a stream used once and dropped, between every two draws
            got, want = getattr(stream, method)(*args, **kwargs), getattr(numpy_own, method)(*args, **kwargs)
            assert type(got) is type(want) and np.array_equal(got, want), (method, got, want)


def test_a_worker_reads_only_the_handed_values_its_calls_ask_for(tmp_path):
    requests, _ = _requests()
    drawn = inputs.draw(inputs.key(SEED, inputs.COURSE), requests)
    handed = util._Handed(inputs.write(drawn, tmp_path / "handed.npz"))
    name = util.call_key(N1, requests[0][1][:1])
    assert np.array_equal(handed.get(name), drawn[name]) and handed.get("i" + "0" * 24) is None
    assert list(handed._values) == ["float64"]  # the integer draws' values stay in the file


def test_the_handed_file_gives_back_every_array_as_drawn(tmp_path):
    """Packed by dtype (util.packed), each array comes back with its values,
    dtype and shape: 0-d, integer and float ones, whatever the order."""
    arrays = {
        "b": np.arange(6, dtype=np.int64).reshape(2, 3),
        "a": np.random.RandomState(0).randn(3, 1, 2),
        "c": np.asarray(2.5),
        "d": np.asarray(7),
        "e": np.random.RandomState(1).uniform(size=0),
    }
    handed = util._Handed(inputs.write(arrays, tmp_path / "handed.npz"))
    for name, array in arrays.items():
        got = handed.get(name)
        assert got.dtype == array.dtype and got.shape == array.shape and np.array_equal(got, array), name
    with np.load(tmp_path / "handed.npz", allow_pickle=False) as members:
        assert sorted(members.files) == [util.HANDED_INDEX, "values_float64", "values_int64"]


def test_inputs_file_is_private_and_holds_no_seed(tmp_path):
    requests, _ = _requests()
    path = inputs.write(inputs.draw(inputs.key(SEED, inputs.COURSE), requests), tmp_path / "x.npz")
    assert path.stat().st_mode & 0o077 == 0
    assert SEED.encode() not in path.read_bytes()


@pytest.mark.slow
@pytest.mark.sandbox
def test_no_worker_gets_the_seed(monkeypatch, tmp_path):
    """Every sandboxed run of a grading (the reference's answers, the
    submission's questions, the known bugs, the smallest inputs): no seed in
    argv, environment or any file of its runner and working folders."""
    seen = []
    real = workers.sandbox.run

    def spy(script, args, **kwargs):
        files = [
            p.read_bytes() for top in (script.parent, kwargs["student_dir"]) for p in top.rglob("*") if p.is_file()
        ]
        seen.append((list(args), files))
        return real(script, args, **kwargs)

    monkeypatch.setattr(workers.sandbox, "run", spy)
    monkeypatch.setenv("GRADER_CACHE", str(tmp_path / "cache"))
    seed = seeds.stored_seed(tmp_path / "seed")
    config = RunConfig(seed=seed)
    report = grade_submission(expected.settled(config).assignment.handout, config)  # every case fails
    assert report.score == 0 and seen
    for args, files in seen:
        assert not any(seed in a for a in args)
        assert not any(seed.encode() in data for data in files)
    assert seed not in "".join(f"{k}={v}" for k, v in workers.sandbox.WORKER_ENV.items())
