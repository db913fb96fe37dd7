"""The setup cache (issue 37): the reference's answers and the known bugs'
values on the course's inputs are kept on disk across batches, regrades and
single grades, keyed so that a change of any input rebuilds them; one build
even with concurrent graders; per-submission entries pruned, least recently
used first. Builds are faked here: what is tested is which folder is used."""

import dataclasses
import io
import json
import os
import sys
import threading
import time

import numpy as np
import pytest

from grader.core.assignment import Assignment
from grader.grading.batch import setup as batch_setup
from grader.grading.explain.causes import store as causes_store
from grader.grading.run import cache, expected, inputs, seeds
from grader.grading.run.config import RunConfig

SECRET_A, SECRET_B = "a" * 32, "b" * 32


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A private cache in tmp_path whose builds record what they were built
    for (the inputs' key id) and count themselves."""
    monkeypatch.setenv("GRADER_CACHE", str(tmp_path / "cache"))
    built = []

    def build(config, dest):
        built.append(expected.inputs_id(config))
        (dest / "meta.json").write_text(json.dumps({"for": expected.inputs_id(config), "n": len(built)}))

    monkeypatch.setattr(expected, "build", build)
    return built


def answers_for(config) -> dict:
    return json.loads((expected.expected_dir(config) / "meta.json").read_text())


def course(seed=SECRET_A, assignment=None):
    return RunConfig(seed=seed, assignment=assignment or Assignment.hw1())


def test_the_same_inputs_reuse_the_answers(fake):
    first = answers_for(course())
    again = answers_for(course())
    assert first == again and len([b for b in fake if b != "public"]) == 1


def test_another_course_secret_gets_answers_on_its_own_inputs_not_the_first_ones(fake):
    """Fails if a cache built on secret A were served for secret B."""
    a, b = answers_for(course(SECRET_A)), answers_for(course(SECRET_B))
    want = inputs.key_id(inputs.key(SECRET_B, inputs.COURSE))
    assert b["for"] == want != a["for"]
    assert answers_for(course(SECRET_A)) == a  # and A's are still there: not rebuilt


def test_an_unchanged_key_does_not_rebuild_after_another_grader_built_it(fake):
    answers_for(course())
    count = len(fake)
    for _ in range(3):
        answers_for(dataclasses.replace(course(), jobs=7))  # the build's width is not an input
    assert len(fake) == count


def _changes(tmp_path, monkeypatch):
    """name -> a function changing one input of the answers (after a first build)."""
    reference = tmp_path / "reference.py"
    case = tmp_path / "case.py"
    worker = tmp_path / "worker.py"
    for path in (reference, case, worker):
        path.write_text("x = 1\n")
    monkeypatch.setattr(expected, "reference_sources", lambda a: [reference])
    monkeypatch.setattr(expected, "case_sources", lambda a: [case])
    monkeypatch.setattr(expected, "WORKER", worker)
    return {
        "reference": lambda: reference.write_text("x = 2\n"),
        "cases": lambda: case.write_text("x = 2\n"),
        "worker": lambda: worker.write_text("x = 2\n"),
        "numpy": lambda: monkeypatch.setattr(np, "__version__", "0.0.1"),
        "python": lambda: monkeypatch.setattr(sys, "version", sys.version + " (another build)"),
        "data": lambda: (Assignment.hw1().data / "extra.gz").write_bytes(b"x"),
    }


@pytest.mark.parametrize("what", ["reference", "cases", "worker", "numpy", "python", "data"])
def test_a_change_of_each_input_rebuilds(fake, tmp_path, monkeypatch, what):
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.gz").write_bytes(b"mnist")
    hw1 = dataclasses.replace(Assignment.hw1(), data=data)
    monkeypatch.setattr(Assignment, "hw1", staticmethod(lambda: hw1))
    change = _changes(tmp_path, monkeypatch)[what]
    before = expected.expected_dir(course(assignment=hw1))
    count = len(fake)
    change()
    after = expected.expected_dir(course(assignment=hw1))
    assert after != before and len(fake) > count
    assert json.loads((after / "meta.json").read_text())["n"] > json.loads((before / "meta.json").read_text())["n"]


def test_the_sandboxs_packages_are_part_of_the_key(fake):
    hw1 = Assignment.hw1()
    other = dataclasses.replace(hw1, packages=("numpy==1.26.4",))
    assert expected.expected_dir(course(assignment=hw1)) != expected.expected_dir(course(assignment=other))


def test_the_known_bugs_follow_the_answers_key_the_secret_and_the_catalogue(fake, monkeypatch):
    monkeypatch.setattr(causes_store, "build", lambda config, dest, mutants: None)
    a = causes_store.causes_dir(course(SECRET_A))
    assert causes_store.causes_dir(course(SECRET_A)) == a
    assert causes_store.causes_dir(course(SECRET_B)) != a
    assert causes_store.causes_dir(course(SECRET_A), mutants=()) != a


def test_a_batch_grades_on_the_course_secret_unless_its_outdir_kept_its_own(tmp_path):
    private = tmp_path / "cache"
    course_secret = seeds.machine_seed(private)
    assert seeds.batch_seed(tmp_path / "out1", private) == course_secret
    assert seeds.batch_seed(tmp_path / "out2", private) == course_secret
    old = tmp_path / "old-batch"
    old.mkdir()
    kept = seeds.stored_seed(old / seeds.BATCH_SEED_FILE)  # written by a grader before issue 37
    assert seeds.batch_seed(old, private) == kept != course_secret


def test_concurrent_graders_build_a_folder_once(tmp_path):
    calls = []

    def build(folder):
        calls.append(1)
        time.sleep(0.3)
        (folder / "done").write_text("1")

    threads = [
        threading.Thread(target=cache.built_once, args=(tmp_path / "entry", "done", build, "", "")) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and (tmp_path / "entry" / "done").is_file()


def _entry(root, name, size, age, now):
    path = root / name
    if name.endswith(".npz"):
        path.write_bytes(b"x" * size)
    else:
        path.mkdir()
        (path / "a.npy").write_bytes(b"x" * size)
    os.utime(path, (now - age, now - age))
    return path


def test_pruning_drops_the_least_recently_used_submissions_beyond_the_limit(tmp_path):
    now, hour = time.time(), 3600
    old = [
        _entry(tmp_path, "sub-inputs-k-old1.npz", 100, 9 * hour, now),
        _entry(tmp_path, "sub-expected-k-old1", 400, 9 * hour, now),
    ]
    mid = _entry(tmp_path, "sub-expected-k-mid", 500, 5 * hour, now)
    new = _entry(tmp_path, "sub-expected-k-new", 500, 2 * hour, now)
    course_entry = _entry(tmp_path, "expected-k-course", 10_000, 99 * hour, now)
    removed = cache.prune_submissions(tmp_path, limit=1000, now=now)
    assert set(removed) == set(old)  # both files of that submission, and only them
    assert mid.exists() and new.exists() and course_entry.exists()
    cache.prune_submissions(tmp_path, limit=0, now=now)
    assert not mid.exists() and not new.exists() and course_entry.exists()


def test_pruning_spares_entries_used_recently_even_over_the_limit(tmp_path):
    now = time.time()
    recent = _entry(tmp_path, "sub-expected-k-busy", 5000, 60, now)
    assert cache.prune_submissions(tmp_path, limit=0, now=now) == [] and recent.exists()


def test_pruning_counts_a_folders_files_once_and_keeps_its_last_use(tmp_path, monkeypatch):
    """Pruning runs at every new submission: a folder entry's files are
    walked by the first pruning only (its size is kept in the folder), and
    counting them does not make the entry look used."""
    now, hour = time.time(), 3600
    old = _entry(tmp_path, "sub-expected-k-old", 400, 9 * hour, now)
    new = _entry(tmp_path, "sub-expected-k-new", 500, 2 * hour, now)
    walked = []
    walk = type(tmp_path).rglob
    monkeypatch.setattr(type(tmp_path), "rglob", lambda self, *a: walked.append(self.name) or walk(self, *a))
    assert cache.prune_submissions(tmp_path, limit=10_000, now=now) == []
    assert sorted(walked) == sorted([old.name, new.name])
    assert abs(old.stat().st_mtime - (now - 9 * hour)) < 1  # still the least recently used
    assert (old / cache.SIZE_FILE).read_text() == "400\n"
    walked.clear()
    assert cache.prune_submissions(tmp_path, limit=600, now=now) == [old]  # 900 bytes > 600: the older goes
    assert walked == [] and new.exists()


def test_a_submissions_inputs_are_pruned_when_a_new_one_is_drawn(fake, monkeypatch):
    pruned = []
    monkeypatch.setattr(cache, "prune_submissions", lambda: pruned.append(1))
    config = expected.settled(course())
    assert config.assignment.registry().inputs_per_submission()  # hw1: Q1-Q4 draw per submission
    own = expected.for_submission(config, "d" * 64)
    expected.for_submission(config, "d" * 64)  # the same files again: reused, nothing drawn
    assert len(pruned) == 1 and own.inputs.path.name.startswith(cache.SUBMISSION_PREFIX)
    expected.for_submission(config, "e" * 64)
    assert len(pruned) == 2
    assert expected.expected_dir(own).name.startswith(cache.SUBMISSION_PREFIX)


def test_the_setup_thread_reraises_its_error_in_the_batch():
    def broken(config, width):
        raise expected.ReferenceError("reference fails forward_add")

    setup = batch_setup.start(RunConfig(seed=SECRET_A), 2, build_fn=broken)
    with pytest.raises(expected.ReferenceError, match="forward_add"):
        setup.finish()


def test_the_setup_builds_as_wide_as_the_batch(monkeypatch):
    widths = []
    monkeypatch.setattr(expected, "expected_dir", lambda config: widths.append(("answers", config.jobs)))
    monkeypatch.setattr(causes_store, "prepare", lambda config: widths.append(("bugs", config.jobs)))
    from grader.grading.explain.shrink import reference as shrink_reference

    monkeypatch.setattr(shrink_reference, "prepare", lambda config: widths.append(("smaller", config.jobs)))
    batch_setup.build(RunConfig(jobs=1, seed=SECRET_A), 3)
    assert widths == [("answers", 3), ("bugs", 3), ("smaller", 3)]


def graded_quickly(job):
    """A stand-in grading (in the pool's processes): a results.json, at once."""
    from grader.grading.batch.jobs import Done

    job.out_dir.mkdir(parents=True, exist_ok=True)
    (job.out_dir / "results.json").write_text('{"score": 100}')
    return Done(job.name, 100.0, True, 0.0)


def test_a_batch_grades_while_its_setup_builds(tmp_path):
    """The setup waits until a submission's result is in: it finishes only if
    the pool grades alongside it (before issue 37 it ran before the pool)."""
    from grader.grading.batch import run as batch

    for name in ("alice", "bob"):
        (tmp_path / "subs" / name / "python").mkdir(parents=True)
    out, seen = tmp_path / "out", []

    def setup_waiting_for_a_result(config, width):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any((out / n / "results.json").exists() for n in ("alice", "bob")):
                seen.append(width)
                return
            time.sleep(0.05)
        raise AssertionError("no submission was graded while the setup ran")

    done, _ = batch.grade_batch(
        tmp_path / "subs",
        out,
        jobs=2,
        grade_fn=graded_quickly,
        stream=io.StringIO(),
        config=RunConfig(jobs=1, seed=seeds.PUBLIC),
        setup_fn=setup_waiting_for_a_result,
    )
    assert sorted(d.name for d in done) == ["alice", "bob"] and seen == [2]
