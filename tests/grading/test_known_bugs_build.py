"""The known bugs' values are built a few to a worker (causes/store.py,
the worker's `variants` mode): each bug gets the values it gets in a
worker of its own, and a bug whose worker stopped runs again alone."""

import numpy as np
import pytest
import worker_script
from same_values import assert_same_outcomes

from grader.grading.explain.causes import catalogue, store
from grader.grading.explain.causes.edits import OPS, Append
from grader.grading.run import expected, seeds
from grader.grading.run.config import RunConfig

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

BY_NAME = {m.name: m for m in catalogue.MUTANTS}
RELU = ("nn_epoch_ndl_relu_backward",)


@pytest.fixture(scope="module")
def config():
    return expected.settled(RunConfig(seed=seeds.PUBLIC))


def built(config, folder, mutants, per_worker, monkeypatch):
    """store.build's values for `mutants`, `per_worker` to a worker, and the runs it made."""
    runs = []
    original = store.run_mode

    def counted(files, cfg, mode, names, *args, **kwargs):
        runs.append(len(names))
        return original(files, cfg, mode, names, *args, **kwargs)

    monkeypatch.setattr(store, "PER_WORKER", per_worker)
    monkeypatch.setattr(store, "run_mode", counted)
    folder.mkdir()
    store.build(config, folder, mutants)
    return store._read_files(folder, store._names(config.assignment.registry()), mutants), runs


def test_bugs_sharing_a_worker_get_the_values_each_gets_alone(config, tmp_path, monkeypatch):
    """The ReLU bugs' case imports simple_ml, which puts the relative
    "python/" on sys.path: a variant that did not run in a folder of its
    own, with the path of the one before forgotten, would import the
    reference. Two gradient bugs of one op share a worker too."""
    mutants = tuple(BY_NAME[n] for n in ("relu_pass_through", "relu_sign", "relu_no_out_grad", "log_sign", "exp_sign"))
    together, runs = built(config, tmp_path / "together", mutants, 3, monkeypatch)
    assert sorted(runs) == [2, 3]
    alone, runs = built(config, tmp_path / "alone", mutants, 1, monkeypatch)
    assert runs == [1] * 5
    assert_same_outcomes(together, alone)
    ok = [name for cases in together.values() for name, one in cases.items() if one.ok]
    assert len(ok) > 40  # values, not the same failure everywhere
    relu = [together[m.name][RELU[0]].value["analytic"][0] for m in mutants[:3]]
    assert not np.array_equal(relu[1], relu[2])  # each bug its own


def test_a_bug_whose_worker_stopped_runs_again_alone(config, tmp_path, monkeypatch):
    """The first bug ends its worker at import: both run again alone; the
    second gets its values, the first, which cannot run, none."""
    stops = catalogue.Mutant(
        "stops_its_worker",
        "ends the process at import",
        (Append(OPS, "import os as _os\n_os._exit(0)\n"),),
        ("nn_epoch_ndl",),
        cases=RELU,
    )
    mutants = (stops, BY_NAME["relu_sign"])
    values, runs = built(config, tmp_path / "bugs", mutants, 2, monkeypatch)
    assert sorted(runs) == [1, 1, 2]
    assert values["stops_its_worker"].keys() == set(RELU) and not values["stops_its_worker"][RELU[0]].ok
    alone, _ = built(config, tmp_path / "alone", mutants[1:], 1, monkeypatch)
    assert values["relu_sign"][RELU[0]].ok
    assert_same_outcomes({"relu_sign": values["relu_sign"]}, alone)


def test_each_run_holds_one_questions_bugs_a_few_at_a_time(config, tmp_path, monkeypatch):
    """The catalogue's bugs in runs of one question each, none above PER_WORKER."""
    seen = []
    monkeypatch.setattr(store, "_run_variants", lambda cfg, folder, q, chunk: seen.append((q, chunk)) or [])
    store.build(config, tmp_path, catalogue.MUTANTS)
    assert all(0 < len(chunk) <= store.PER_WORKER for _, chunk in seen)
    registry = config.assignment.registry()
    for question, chunk in seen:
        for mutant in chunk:
            assert any(store._worker_question(registry, q, mutant) == question for q in mutant.questions)
    pairs = sorted((m.name, q) for q, chunk in seen for m in chunk)
    wanted = sorted((m.name, store._worker_question(registry, q, m)) for m in catalogue.MUTANTS for q in m.questions)
    assert pairs == wanted
    assert len(seen) < len(wanted) / 3


def test_the_worker_runs_the_variants_the_store_writes():
    """The worker is a script (nothing imports it): its mode, file and separator are the store's."""
    consts = worker_script.constants()
    assert (consts["VARIANTS"], consts["VARIANTS_SPEC"], consts["OF"]) == (store.MODE, store.SPEC, store.OF)
