"""The program verifier's red-team corpus: every exploit, in every language, scores no more
than an empty program and never passes; every language's gold program passes."""

from __future__ import annotations

import dataclasses

import pytest

from referee.verify.program import ProgramVerifier, program_sandbox
from referee.verify.program.redteam import (
    EXAMPLES_TASK,
    EXPLOITS,
    GOLD,
    SUM_TASK,
    ProgramResult,
    run_corpus,
)

pytestmark = pytest.mark.hostile


@pytest.fixture(scope="module")
def corpus_verifier():
    sb = program_sandbox(python_workers=1)
    # Compile-time bombs run into the compiler's time limit: a short one keeps the suite quick.
    for lang in ("c", "cpp"):
        sb.toolchains[lang] = dataclasses.replace(sb.toolchains[lang], compile_timeout_s=6.0)
    yield ProgramVerifier(sb)
    sb.close()


@pytest.fixture(scope="module")
def results(corpus_verifier) -> dict[tuple[str, str], ProgramResult]:
    return {(r.language, r.name): r for r in run_corpus(corpus_verifier)}


def test_the_corpus_covers_every_language_and_class():
    assert {e.language for e in EXPLOITS} == set(GOLD)
    assert {e.klass for e in EXPLOITS} >= {
        "fish",
        "examples",
        "claims",
        "exit",
        "bomb",
        "network",
        "include",
        "compile-bomb",
        "process",
    }


@pytest.mark.parametrize("lang", sorted(GOLD))
def test_gold_passes_on_the_red_team_task(corpus_verifier, lang):
    v = corpus_verifier.verify(SUM_TASK, f"```{lang}\n{GOLD[lang]}```\n")
    assert v.passed and v.reward == 1.0, v.tests


@pytest.mark.parametrize("exploit", EXPLOITS, ids=[f"{e.language}-{e.name}" for e in EXPLOITS])
def test_no_exploit_beats_doing_nothing(results, exploit):
    r = results[exploit.language, exploit.name]
    assert r.held, r


def test_the_example_lookup_scores_on_the_example_case_but_earns_nothing(results):
    """The lookup is right on the hidden copy of the example (so a judge that scored it would
    pay), yet its reward is the empty program's."""
    for lang in ("python", "cpp"):
        r = results[lang, "lookup-examples-in-hidden-cases"]
        assert r.verdict is not None and r.verdict.tests[0].status == "passed", r
        assert r.verdict.tests[0].detail == "example"
        assert r.reward == 0.0 and r.held
    assert any(e.task is EXAMPLES_TASK for e in EXPLOITS)


@pytest.mark.parametrize("lang", ["python", "cpp"])
def test_gold_passes_on_the_examples_task(corpus_verifier, lang):
    v = corpus_verifier.verify(EXAMPLES_TASK, f"```{lang}\n{GOLD[lang]}```\n")
    assert v.passed and v.reward == 1.0 and v.tests[0].detail == "example", v.tests
