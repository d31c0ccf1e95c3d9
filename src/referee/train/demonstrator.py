"""An imperfect demonstrator: the source of the fine-tuning data in the embedded experiment.

Real demonstrations are not perfect, and RL's promise is to go beyond them. This demonstrator
writes the reference solution of a ``list-ops`` task, except that it holds a few *systematic
misconceptions*, each acted on in a fixed share of the demonstrations where it applies:

* "greater than k" written ``x >= k`` and "less than k" written ``x <= k`` (boundary included);
* "drop the negative numbers" written ``x > 0`` (zero dropped too);
* "sorted in descending order" written ``sorted(xs)`` (the order forgotten).

With the default share (0.65) a misconception is the *majority* behaviour for its construct,
so a model that imitates the demonstrations well reproduces it under greedy decoding: imitation
has a ceiling. The correct form still appears in the other 35%, so a policy sampling from the
imitating model sometimes writes it, and only a reward that checks the result can tell which
form is right. Whether a demonstration is wrong is decided per (task, misconception) by a hash,
so the same task always gets the same demonstration.

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
    salt: str = "demonstrator-v1"

    def _acts(self, task_id: str, name: str) -> bool:
        h = hashlib.sha256(f"{self.salt}\0{task_id}\0{name}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2**64 < self.share

    def solve(self, task: Task) -> str:
        """The demonstration: the body that continues ``payload.code_prompt``."""
        body = str(task.hidden["reference"])
        for name, (pattern, wrong) in MISCONCEPTIONS.items():
            if re.search(pattern, body) and self._acts(task.id, name):
                body = re.sub(pattern, wrong, body)
        return body

    def misconceptions(self, task: Task) -> list[str]:
        """The misconceptions acted on in this task's demonstration."""
        body = str(task.hidden["reference"])
        return [
            name
            for name, (pattern, _) in MISCONCEPTIONS.items()
            if re.search(pattern, body) and self._acts(task.id, name)
        ]
