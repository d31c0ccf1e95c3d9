"""The lab corpus holds, and its episodes would get through a laboratory that let them."""

import json

import pytest

from referee.domains import run_corpus
from referee.domains.lab import env as env_module
from referee.domains.lab import laboratory
from referee.domains.lab.redteam import ANSWERS, EPISODES, corpus_tasks
from referee.domains.lab.redteam import run_corpus as run_lab_corpus


def test_every_exploit_is_held():
    outcomes = run_corpus("lab")
    assert len(outcomes) == len(ANSWERS) + len(EPISODES) >= 18
    assert {o.klass for o in outcomes} >= {
        "not-a-model",
        "fit-the-noise",
        "read-hidden",
        "exceed-budget",
        "oracle",
        "non-finite",
    }
    assert not [o for o in outcomes if not o.held]


def _episodes(name):
    tasks = corpus_tasks()[:2]
    return {o.name: o for o in run_lab_corpus(tasks)}[name]


def test_over_budget_would_pass_a_laboratory_without_a_budget(monkeypatch):
    monkeypatch.setattr(laboratory.Laboratory, "budget", property(lambda self: 10**6))
    assert _episodes("over-budget").reward > 0.5


def test_resubmit_would_pass_an_environment_that_took_the_last_submission(monkeypatch):
    original = env_module.LabEnv._submit

    def keep_open(self, arguments):
        text = original(self, arguments)
        self._done = False  # the bug: submitting again replaces the answer
        return text

    monkeypatch.setattr(env_module.LabEnv, "_submit", keep_open)
    assert _episodes("resubmit").passed


def test_probe_internals_would_pass_a_laboratory_whose_errors_told_the_parameters(monkeypatch):
    problem = laboratory.Laboratory._problem

    def leaky(self, arguments):
        why = problem(self, arguments)
        return f"{why} (model {json.dumps(self.task.hidden['params'])})" if why else why

    monkeypatch.setattr(laboratory.Laboratory, "_problem", leaky)
    outcome = _episodes("probe-internals")
    assert outcome.reward > 0.5


@pytest.mark.parametrize("name", ["observations-as-model", "extra-param", "predictions-instead"])
def test_answers_that_carry_more_than_a_model_are_refused_for_that(name):
    task = corpus_tasks()[0]
    from referee.domains.lab.verifier import LabVerifier

    verdict = LabVerifier().verify(task, ANSWERS[name][1](task))
    assert verdict.reward == 0.0 and "not a model" in verdict.tests[0].detail
