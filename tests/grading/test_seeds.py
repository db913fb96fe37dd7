"""Scored inputs are drawn from a secret seed at grading time: different
seeds, different answers; a correct submission scores 100 whatever the
seed; results name the seed only by a hash; the seed files stay private."""

import json
import os
import stat

import numpy as np
import pytest

from grader.core.assignment import Assignment
from grader.grading.report.orchestrate import grade_to
from grader.grading.run import expected, inputs, seeds
from grader.grading.run.config import RunConfig

HW1 = Assignment.hw1()


def test_seed_is_drawn_once_and_kept_private(tmp_path):
    seed = seeds.stored_seed(tmp_path / "seed")
    assert seeds.stored_seed(tmp_path / "seed") == seed
    assert stat.S_IMODE(os.stat(tmp_path / "seed").st_mode) == 0o600
    assert seeds.stored_seed(tmp_path / "other") != seed
    assert seed not in seeds.seed_id(seed) and len(seeds.seed_id(seed)) == 12
    assert seeds.seed_id(seeds.PUBLIC) == "public"


def test_seed_readable_by_others_is_refused(tmp_path):
    path = tmp_path / "seed"
    seeds.stored_seed(path)
    path.chmod(0o644)
    with pytest.raises(seeds.SeedError, match=r"readable by others.*chmod 600"):
        seeds.stored_seed(path)
    path.chmod(0o600)
    path.write_text("x\n")
    with pytest.raises(seeds.SeedError, match="not a seed written by the grader"):
        seeds.stored_seed(path)


def test_settled_config_uses_the_machine_seed(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_CACHE", str(tmp_path))
    keys = []
    monkeypatch.setattr(expected, "drawn_inputs", lambda config, key, how: keys.append(key) or how)
    config = expected.settled(RunConfig())
    assert config.seed == (tmp_path / seeds.SEED_FILE).read_text().strip()
    assert keys == [inputs.key(config.seed, inputs.COURSE)] and config.inputs.startswith("HMAC-SHA256")
    public = expected.settled(RunConfig(seed=""))
    assert public.seed == seeds.PUBLIC and public.inputs is None


@pytest.mark.slow
@pytest.mark.sandbox
def test_seeds_draw_other_answers():
    """Every computing case's answer under a seed differs from the public
    one (what ships) and from another seed's, ReLU's zero rows aside."""
    public = expected.load(RunConfig(seed=seeds.PUBLIC))
    first = expected.load(RunConfig(seed="0123456789abcdef0123456789abcdef"))
    second = expected.load(RunConfig(seed="fedcba9876543210fedcba9876543210"))
    same = [
        name
        for name in public
        if _equal(public[name].value, first[name].value) or _equal(first[name].value, second[name].value)
    ]
    assert not same, f"cases whose answer does not depend on the seed: {same}"


def _equal(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return np.shape(a) == np.shape(b) and np.array_equal(a, b)


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("seed", ["5eed0001aaaabbbbccccdddd00000001", "5eed0002aaaabbbbccccdddd00000002"])
def test_reference_scores_100_under_any_seed(tmp_path, seed):
    rep, ok = grade_to(HW1.reference, tmp_path, RunConfig(seed=seed))
    failed = [f"{c.name}: {c.output}" for c in rep.cases if not c.passed]
    assert ok and rep.score == 100 and not failed, failed
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["extra_data"]["provenance"]["seed_id"] == seeds.seed_id(seed)
    assert seed not in (tmp_path / "results.json").read_text() + (tmp_path / "report.md").read_text()
