"""The numeric numeric_verifier: every reference passes, doing nothing earns 0, wrong numbers and
broken invariants fail, a fault of ours is an infra error."""

import json

import pytest

from referee.errors import SandboxError
from referee.tasks.model import Task

_EMPTY = ""


def test_every_structures_reference_passes_and_the_empty_answer_scores_zero(
    tasks, numeric_verifier
):
    for unit, task in tasks.items():
        gold = numeric_verifier.verify(task, task.hidden["reference"])
        assert gold.passed and gold.reward == 1.0, (unit, gold.tests)
        assert len(gold.tests) == len(task.hidden["params"])
        assert gold.sandbox is not None and gold.sandbox.runs >= 1
        empty = numeric_verifier.verify(task, _EMPTY)
        assert empty.reward == 0.0 and not empty.passed and empty.infra_error is None


def test_a_models_text_is_judged_by_its_last_python_block(tasks, numeric_verifier):
    task = tasks["num-root/kepler"]
    text = (
        "First a sketch:\n```python\ndef solve(params):\n    return {}\n```\n"
        f"Final:\n```python\n{task.hidden['reference']}```\n"
    )
    assert numeric_verifier.verify(task, text).passed


def test_hidden_sets_only_are_judged_and_the_visible_one_is_in_the_prompt(tasks):
    task = tasks["num-linear/dense"]
    visible = task.payload["visible"]
    assert json.dumps(visible["params"]) in task.user_prompt
    assert json.dumps(visible["expected"]) in task.user_prompt
    assert visible["params"] not in task.hidden["params"]
    assert task.hidden["reference"] not in task.user_prompt
    assert task.provenance.unit == "num-linear/dense"


def test_single_precision_is_caught_by_the_residual_where_the_tolerance_is_loose(
    numeric_box, numeric_verifier
):
    from referee.domains.numeric.families import make_task
    from referee.domains.numeric.problems import PROBLEMS

    dense = next(p for p in PROBLEMS if p.unit == "num-linear/dense")
    task = make_task(dense, difficulty=1.0, seed=3, sandbox=numeric_box)
    single = dense.reference.replace('np.array(params["A"])', 'np.array(params["A"], np.float32)')
    single = single.replace('np.array(params["b"])', 'np.array(params["b"], np.float32)')
    v = numeric_verifier.verify(task, single)
    assert v.reward == 0.0
    assert any("residual" in t.detail or "differs" in t.detail for t in v.tests)


def test_a_wrong_sign_fails_the_tolerance_and_the_conservation_law(tasks, numeric_verifier):
    task = tasks["num-simulate/pendulum"]
    wrong = task.hidden["reference"].replace("-(g / length)", "(g / length)")
    v = numeric_verifier.verify(task, wrong)
    assert v.reward == 0.0 and all(t.status == "failed" for t in v.tests)


def test_a_malformed_task_is_an_infra_error(numeric_verifier):
    bad = Task.create(name="numeric/bad-v1", prompt="p", kind="numeric", domain="numeric")
    v = numeric_verifier.verify(bad, "def solve(p):\n    return {}\n")
    assert v.infra_error and "not a numeric task" in v.infra_error and not v.passed


def test_a_sandbox_failure_is_an_infra_error_never_a_zero(tasks):
    from referee.domains.numeric.verifier import NumericVerifier

    class Broken:
        def run_python(self, *a, **k):
            raise SandboxError("the sandbox died")

    v = NumericVerifier(Broken()).verify(tasks["num-root/kepler"], "def solve(p):\n    pass\n")
    assert v.infra_error and "the sandbox died" in v.infra_error and v.reward == 0.0


def test_dispatch_reaches_the_numeric_verifier_by_kind(tasks):
    from referee.tasks.kinds import TaskKind
    from referee.verify.dispatch import count_tests, kind_spec

    task = tasks["num-root/kepler"]
    assert kind_spec(TaskKind.NUMERIC).kind == TaskKind.NUMERIC
    assert count_tests(task) == len(task.hidden["params"]) > 0


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_families_are_seeded_and_reproducible(numeric_box, difficulty):
    from referee.domains.numeric.families import make_task
    from referee.domains.numeric.problems import PROBLEMS

    p = next(p for p in PROBLEMS if p.unit == "num-root/kepler")
    a = make_task(p, difficulty=difficulty, seed=5, sandbox=numeric_box)
    b = make_task(p, difficulty=difficulty, seed=5, sandbox=numeric_box)
    c = make_task(p, difficulty=difficulty, seed=6, sandbox=numeric_box)
    assert a.content_hash == b.content_hash != c.content_hash
    assert a.difficulty.estimate == difficulty


def test_single_precision_outputs_within_the_tolerance_pass_but_are_flagged(
    tasks, numeric_verifier
):
    task = tasks["num-simulate/pendulum"]
    rounded = task.hidden["reference"] + (
        "\n_solve = solve\n\ndef solve(params):\n    import numpy as np\n"
        "    return {k: np.asarray(v, np.float32).tolist() for k, v in _solve(params).items()}\n"
    )
    v = numeric_verifier.verify(task, rounded)
    assert v.passed
    assert "single-precision-output" in {f.kind for f in v.flags}
    gold = numeric_verifier.verify(task, task.hidden["reference"])
    assert "single-precision-output" not in {f.kind for f in gold.flags}


def test_a_held_out_split_by_structure_keeps_each_structure_whole(tasks):
    from referee.tasks.split import split_tasks

    made = list(tasks.values()) * 2  # two tasks per unit
    split = split_tasks(made, 0.5, by="structure")
    by_unit: dict[str, set[str]] = {}
    for t in split:
        by_unit.setdefault(t.provenance.unit or "", set()).add(t.split)
    assert all(len(s) == 1 for s in by_unit.values())
    assert {s for v in by_unit.values() for s in v} == {"train", "heldout"}


def test_extreme_numbers_fail_and_never_crash_the_verifier(tasks, numeric_verifier):
    task = tasks["num-simulate/pendulum"]
    huge = (
        "def solve(params):\n    n = len(params['times'])\n"
        "    return {'theta': [1e300 + 0.5] * n, 'omega': [-1.5e308] * n}\n"
    )
    v = numeric_verifier.verify(task, huge)
    assert v.infra_error is None and v.reward == 0.0
