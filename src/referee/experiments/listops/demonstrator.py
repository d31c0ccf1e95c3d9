"""An imperfect demonstrator: the source of the fine-tuning data in the embedded experiment.

Real demonstrations are not perfect, and RL's promise is to go beyond them. This demonstrator
writes the reference solution of a ``list-ops`` task, except that it holds a few *systematic
misconceptions*, each acted on in a fixed share of the demonstrations where it applies:

* "greater than k" written ``x >= k`` and "less than k" written ``x <= k`` (boundary included);
* "drop the negative numbers" written ``x > 0`` (zero dropped too);
* "sorted in descending order" written ``sorted(xs)`` (the order forgotten).

Each demonstration is a fresh *draw*: whether draw ``d`` of a task acts on a misconception is
decided by a hash of (task, misconception, draw), so the same prompt is demonstrated sometimes
right and sometimes wrong, in the stated proportion, and a data set of several draws per task
is reproducible. That makes the imitation target a property of the prompt's content alone:
where a construct appears, the demonstrations write it wrongly with probability ``share``.

With the default share (0.65) a misconception is the *majority* behaviour for its construct,
so a model that imitates the demonstrations perfectly reproduces it under greedy decoding:
imitation has a ceiling, and :meth:`Demonstrator.mode` is that ceiling's solution. (An earlier
version gave each task one fixed demonstration; a model could then memorise which training
tasks were wrong, and its greedy choice on new tasks became arbitrary rather than the
majority, which blurred the ceiling.) The correct form still appears in the other 35%, so a
policy sampling from the imitating model sometimes writes it, and only a reward that checks
the result can tell which form is right.

>>> from referee.tasks.procedural import generate
>>> t = generate("list-ops", difficulty=0.0, seed=3)
>>> Demonstrator(share=0.0).solve(t) == t.hidden["reference"]
True
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from referee.tasks.model import Task

__all__ = ["MISCONCEPTIONS", "Demonstrator"]

#: name -> (pattern in the reference, the demonstrator's version)
MISCONCEPTIONS: dict[str, tuple[str, str]] = {
    "gt-includes-boundary": (r"if x > (\d+)\]", r"if x >= \1]"),
    "lt-includes-boundary": (r"if x < (\d+)\]", r"if x <= \1]"),
    "nonnegative-drops-zero": (r"if x >= 0\]", r"if x > 0]"),
    "descending-forgotten": (r"sorted\(xs, reverse=True\)", r"sorted(xs)"),
}


@dataclass(frozen=True)
class Demonstrator:
    share: float = 0.65  # of the demonstrations where a misconception applies, how many act on it
    salt: str = "demonstrator-v2"

    def _acts(self, task_id: str, name: str, draw: int) -> bool:
        h = hashlib.sha256(f"{self.salt}\0{task_id}\0{name}\0{draw}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2**64 < self.share

    def _apply(self, task: Task, acts: dict[str, bool]) -> str:
        body = str(task.hidden["reference"])
        for name, (pattern, wrong) in MISCONCEPTIONS.items():
            if acts.get(name) and re.search(pattern, body):
                body = re.sub(pattern, wrong, body)
        return body

    def solve(self, task: Task, draw: int = 0) -> str:
        """Demonstration number ``draw``: the body that continues ``payload.code_prompt``."""
        return self._apply(task, {n: self._acts(task.id, n, draw) for n in MISCONCEPTIONS})

    def mode(self, task: Task) -> str:
        """The most likely demonstration: what a perfect imitator writes under greedy decoding
        (every misconception acted on when ``share`` > 0.5, none otherwise)."""
        return self._apply(task, {n: self.share > 0.5 for n in MISCONCEPTIONS})

    def misconceptions(self, task: Task, draw: int = 0) -> list[str]:
        """The misconceptions that apply to this task and are acted on in draw ``draw``."""
        body = str(task.hidden["reference"])
        return [
            name
            for name, (pattern, _) in MISCONCEPTIONS.items()
            if re.search(pattern, body) and self._acts(task.id, name, draw)
        ]
