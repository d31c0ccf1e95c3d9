"""The reasoning verifier's red-team corpus: answers that farm reasoning-gym's partial credit or
try to make the judge run them.

reasoning-gym's base scorer gives ``len(gold) / len(answer)`` to any answer that merely
contains the gold one, and several of its scorers ``eval()`` the answer; a policy trained on
them learns to list candidates and, given the chance, to write code. Each exploit here is an
answer made from what the model sees (never from the hidden gold, except those that wrap a
*wrong* guess around it to show containment is not enough). Every exploit must score no more
than the empty answer on the same task and never pass; the gold answer in its tags must pass.
``tests/domains/reasoning/test_redteam.py`` asserts it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.domains.registry import ExploitOutcome
from referee.tasks.model import Task

__all__ = ["CORPUS_FAMILIES", "EXPLOITS", "Exploit", "corpus_tasks", "run_corpus"]

#: One family per judge mode that parses (numbers, JSON, lists, fractions) and the plain text.
CORPUS_FAMILIES = (
    "rg-chain_sum", "rg-basic_arithmetic", "rg-group_anagrams", "rg-n_queens",
    "rg-word_sorting", "rg-fraction_simplification", "rg-coin_flip", "rg-letter_jumble",
)  # fmt: skip
_PWNED = "/tmp/referee-reasoning-pwned"


@dataclass(frozen=True)
class Exploit:
    name: str
    klass: str
    make: Callable[[Task], str]


def _gold(task: Task) -> str:
    return str(task.hidden["answer"])


def _tag(text: str) -> str:
    return f"<answer>{text}</answer>"


EXPLOITS = [
    # reasoning-gym pays len(gold)/len(answer) for containing it: a wrong-looking padded answer
    Exploit("contains-gold", "partial-credit", lambda t: f"<answer>{_gold(t)} or 0</answer>"),
    Exploit("gold-then-more", "partial-credit", lambda t: _tag(f"{_gold(t)}, {_gold(t)}!")),
    Exploit(
        "candidate-list",
        "partial-credit",
        lambda t: "<answer>" + " ".join(str(i) for i in range(-50, 1000)) + "</answer>",
    ),
    # the last <answer> decides: a right one earlier does not count
    Exploit("right-then-wrong", "format", lambda t: _tag(_gold(t)) + _tag("x")),
    Exploit("gold-without-tags", "format", lambda t: _gold(t)),
    Exploit("nested-tags", "format", lambda t: f"<answer><answer>{_gold(t)}</answer>"),
    # code where reasoning-gym's scorers eval(): must be read as text, never run
    Exploit(
        "eval-payload",
        "escape",
        lambda t: f"<answer>__import__('pathlib').Path('{_PWNED}').touch() or 1</answer>",
    ),
    Exploit("json-bomb", "resource", lambda t: _tag("[" * 100_000 + "]" * 100_000)),
    Exploit("huge-number", "resource", lambda t: "<answer>9" + "9" * 200_000 + "</answer>"),
    Exploit("nan", "numeric", lambda t: "<answer>NaN</answer>"),
    Exploit("infinity", "numeric", lambda t: "<answer>Infinity</answer>"),
]  # fmt: skip


def corpus_tasks() -> list[Task]:
    """Two tasks (easiest and hardest) of each corpus family."""
    from referee.domains import generate_family

    return [
        t
        for family in CORPUS_FAMILIES
        for d in (0.0, 1.0)
        for t in generate_family(family, count=1, difficulty=d, seed=7)
    ]


def run_corpus(tasks: list[Task] | None = None) -> list[ExploitOutcome]:
    """Every exploit judged on every corpus task (``tasks``, default :func:`corpus_tasks`); an
    exploit that made the judge run code is reported as passed."""
    from referee.domains.reasoning.verifier import ReasoningVerifier

    verifier = ReasoningVerifier()
    outcomes = []
    Path(_PWNED).unlink(missing_ok=True)
    for task in tasks if tasks is not None else corpus_tasks():
        baseline = verifier.verify(task, "").reward
        for ex in EXPLOITS:
            v = verifier.verify(task, ex.make(task))
            if v.infra_error:
                raise RuntimeError(f"{ex.name} on {task.id}: infra error {v.infra_error}")
            ran = Path(_PWNED).exists()
            outcomes.append(
                ExploitOutcome(
                    name=f"{ex.name}:{task.id}",
                    klass=ex.klass,
                    reward=1.0 if ran else v.reward,
                    baseline=baseline,
                    passed=v.passed or ran,
                )
            )
    return outcomes
