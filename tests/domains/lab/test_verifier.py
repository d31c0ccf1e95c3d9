"""The verifier: the true model passes, a wrong one fails, nothing of the answer runs."""

import json

import pytest

from referee.domains import generate_family
from referee.domains.lab.verifier import LabVerifier, credit
from referee.tasks.model import Task

FAMILIES = ["lab-kinetics", "lab-population", "lab-pharmacology", "lab-circuits"]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_true_model_passes_and_the_empty_answer_earns_nothing(family):
    for task in generate_family(family, count=6, difficulty=None, seed=11):
        gold = LabVerifier().verify(task, task.hidden["reference"])
        assert gold.passed and gold.reward == 1.0 and len(gold.tests) == 6
        empty = LabVerifier().verify(task, "")
        assert (empty.passed, empty.reward, empty.infra_error) == (False, 0.0, None)
        assert empty.tests[0].detail == "not a model: nothing was submitted"


@pytest.mark.parametrize("family", FAMILIES)
def test_a_model_off_by_a_third_fails_and_one_off_by_a_thousandth_passes(family):
    task = generate_family(family, count=1, difficulty=1.0, seed=12)[0]
    truth = json.loads(task.hidden["reference"])

    def scaled(factor):
        return json.dumps(
            {
                "law": truth["law"],
                "params": {
                    k: v * factor if k not in ("n", "theta", "F") else v
                    for k, v in truth["params"].items()
                },
            }
        )

    assert LabVerifier().verify(task, scaled(1.001)).passed
    off = LabVerifier().verify(task, scaled(1.33))
    assert not off.passed and off.reward < 0.5


def test_the_other_law_fitted_nowhere_near_fails():
    task = next(
        t
        for t in generate_family("lab-pharmacology", count=6, difficulty=1.0, seed=3)
        if t.hidden["law"] == "saturable"
    )
    params = json.loads(task.hidden["reference"])["params"]
    # The linear law with the low-concentration elimination rate of the truth: right for
    # small doses, wrong for the large held-out ones.
    ke = params["vmax"] / (params["Km"] * params["V"])
    linear = {"V": params["V"], "ke": ke, "ka": params["ka"], "F": params["F"]}
    verdict = LabVerifier().verify(task, json.dumps({"law": "linear", "params": linear}))
    assert not verdict.passed


def test_credit_is_full_within_the_tolerance_and_nothing_from_twice_it():
    got = [credit(e, 0.05) for e in (0.0, 0.05, 0.075, 0.1, 5.0, float("inf"))]
    assert got == pytest.approx([1.0, 1.0, 0.5, 0.0, 0.0, 0.0])


def test_a_task_that_cannot_be_simulated_is_an_infra_error_not_a_zero():
    task = generate_family("lab-kinetics", count=1, difficulty=0.0, seed=1)[0]
    broken = Task.create(
        name="lab/broken-v1",
        prompt="p",
        kind="lab",
        answer_format="text",
        payload={"system": "alchemy"},
        hidden=task.hidden,
    )
    verdict = LabVerifier().verify(broken, task.hidden["reference"])
    assert verdict.infra_error and "names no lab system" in verdict.infra_error
    assert not verdict.passed


def test_the_verifier_set_dispatches_lab_tasks():
    from referee.verify.dispatch import VerifierSet

    task = generate_family("lab-population", count=1, difficulty=0.5, seed=2)[0]
    with VerifierSet() as verifiers:
        assert verifiers.verify(task, f"Here:\n```json\n{task.hidden['reference']}\n```").passed


@pytest.mark.parametrize("family", FAMILIES)
def test_models_at_the_corners_of_the_bounds_are_judged_not_crashed(family):
    from referee.domains.lab.families import system_of

    task = generate_family(family, count=1, difficulty=1.0, seed=13)[0]
    system = system_of(task)
    for law in task.payload["laws"]:
        params = system.laws[law].params
        for pick in (lambda p: p.lo, lambda p: p.hi):
            answer = json.dumps({"law": law, "params": {p.name: pick(p) for p in params}})
            verdict = LabVerifier().verify(task, answer)
            # Absurd but finite: judged like any model (a query whose true course is as
            # extreme may earn a little), never an infra error.
            assert verdict.infra_error is None and not verdict.passed
            assert verdict.reward < 0.5
