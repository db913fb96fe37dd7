"""The packed answers and known bugs' values (grading/run/answer_pack.py):
the same Outcomes back, and a pack that does not hold together is refused
with its folder named."""

import json

import numpy as np
import pytest
from same_values import assert_same_outcomes, same

from grader.grading.run import answer_pack, expected, seeds
from grader.grading.run.config import RunConfig
from grader.grading.run.outcomes import Budget, Outcome, read_outcome

OUTCOMES = {
    "matrix": Outcome(True, np.arange(12, dtype=np.float32).reshape(3, 4)),
    "fortran": Outcome(True, np.asfortranarray(np.arange(6.0).reshape(2, 3))),
    "nested": Outcome(True, {"W": [np.ones((0, 3), np.int8), np.array(2.5)], "n": 3, "ok": True, "x": 0.1}),
    "bools": Outcome(True, [np.array([True, False]), np.array([1 + 2j], np.complex128), float("inf")]),
    "looks_like_a_ref": Outcome(True, {"a": 1, "d": [2]}),  # a dict with the pack's own key names
    "failed": Outcome(False, problem="ValueError: shapes differ (at ops.py:3)", error_type="ValueError"),
}


def test_a_pack_gives_back_the_same_outcomes(tmp_path):
    answer_pack.write(OUTCOMES, tmp_path)
    back = answer_pack.read(tmp_path)
    assert back.keys() == OUTCOMES.keys()
    for name, want in OUTCOMES.items():
        got = back[name]
        assert (got.ok, got.problem, got.error_type) == (want.ok, want.problem, want.error_type), name
        assert same(want.value, got.value), name
    assert back["matrix"].value.flags.writeable  # as read_npy_safe's arrays are


def test_the_comparison_above_tells_values_apart():  # the control: `same` could fail
    assert not same(np.zeros(3, np.float32), np.zeros(3, np.float64))
    assert not same({"a": 1}, {"a": 1.0})
    assert not same([np.ones(2)], [np.ones(3)])


def test_a_folder_without_a_pack_reads_as_none(tmp_path):
    assert answer_pack.read(tmp_path) is None


@pytest.mark.parametrize(
    "spoil",
    [
        lambda index: index["arrays"][0].__setitem__(2, 10**6),  # past the end of the blob
        lambda index: index["arrays"][0].__setitem__(0, "|O"),  # an object dtype
        lambda index: index["arrays"][0].__setitem__(1, [5, 5]),  # a shape the bytes do not fill
        lambda index: index["cases"]["matrix"]["value"].__setitem__("a", 99),  # no such array
    ],
)
def test_a_pack_that_does_not_hold_together_is_refused(tmp_path, spoil):
    answer_pack.write(OUTCOMES, tmp_path)
    index = json.loads((tmp_path / f"{answer_pack.ANSWERS}.json").read_text())
    spoil(index)
    (tmp_path / f"{answer_pack.ANSWERS}.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match=str(tmp_path)):
        answer_pack.read(tmp_path)


def test_the_expected_answers_are_packed_as_the_workers_left_them():
    """In a real cache folder (the handout's inputs), every question's
    answers read one by one (as before packing) equal the packed ones."""
    expected_folder = expected.expected_dir(RunConfig(seed=seeds.PUBLIC))
    pack = answer_pack.read(expected_folder)
    questions = [p for p in expected_folder.iterdir() if p.is_dir()]
    assert questions and pack
    checked = False
    for question in questions:
        budget = Budget(question)
        for record in question.glob("*.json"):
            name = record.name[: -len(".json")]
            if name in pack:
                checked = True
                one = read_outcome(budget, name)
                assert one.ok == pack[name].ok and same(one.value, pack[name].value), name
    assert checked


def test_the_known_bugs_values_are_packed_as_the_workers_left_them():
    """The known bugs' folder on the public inputs: every value its workers
    left, read one by one, equals the packed one store.load gives."""
    from grader.grading.explain.causes import catalogue, store

    config = expected.settled(RunConfig(seed=seeds.PUBLIC))
    folder = store.causes_dir(config)
    files = store._read_files(folder, store._names(config.assignment.registry()), catalogue.MUTANTS)
    packed = store.load(config)
    assert files.keys() == {m.name for m in catalogue.MUTANTS}
    assert assert_same_outcomes(packed, files) > 1000


def test_known_bugs_values_without_a_pack_are_refused_with_their_folder(tmp_path):
    from grader.grading.explain.causes import store

    with pytest.raises(ValueError, match=f"{tmp_path}: the known bugs' values are not packed; delete the folder"):
        store._read(tmp_path, ())


def test_the_shrink_candidates_values_are_packed_as_the_worker_left_them():
    """The reference's values on the smallest-failing-input candidates: the
    packed ones load() gives equal those its worker left, one by one."""
    from grader.grading.explain.shrink import reference

    config = expected.settled(RunConfig(seed=seeds.PUBLIC))
    ids = tuple(c.id for c in reference.all_candidates(config.assignment.registry()))
    files = reference._read_files(reference.reference_dir(config), ids)
    packed = reference.load(config)
    assert len(files) > 100 and packed.keys() == files.keys()
    for name, one in files.items():
        assert packed[name].ok and same(one.value, packed[name].value), name


def test_shrink_values_without_a_pack_are_refused_with_their_folder(tmp_path):
    from grader.grading.explain.shrink import reference

    with pytest.raises(ValueError, match=f"{tmp_path}: the reference's values on the candidates are not packed"):
        reference._read(tmp_path, ())


def test_loading_answers_from_a_folder_without_a_pack_names_it(tmp_path, monkeypatch):
    monkeypatch.setattr(expected, "expected_dir", lambda config: tmp_path)
    with pytest.raises(ValueError, match=f"{tmp_path}: no packed answers; delete the folder to rebuild it"):
        expected.load(RunConfig(seed=seeds.PUBLIC))
